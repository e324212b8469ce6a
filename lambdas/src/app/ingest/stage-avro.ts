/** Staging a table's Avro records: rows already typed by the writer schema. */

import { DeadLetterReason } from '../../engine/dead-letters.ts';
import { writeRows } from '../../engine/generic-stage.ts';
import { evolve } from '../../engine/table-staging.ts';
import { ErrorKind, isFloeError } from '../../errors.ts';
import { currentSchema, defaultSpec } from '../../iceberg/table-metadata.ts';
import type { Row } from '../../iceberg/values.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import { ProjectFailure, projectRow } from '../../schema/project.ts';
import { letter } from './letters.ts';
import type { AvroItem } from './routed.ts';
import { NOTHING_STAGED, type StagedPart, type StageInput } from './staged-part.ts';

/** Writes the Avro records when every writer schema joins the table as it is; else keeps them pending. */
export async function stageAvro(t: StageInput): Promise<StagedPart> {
  const { base, batch } = t;
  const { table, avro } = t.work;
  if (avro.length === 0) return NOTHING_STAGED;
  const fit = base ? avroFits(base, avro, t.candidates) : undefined;
  if (!base || !fit) return { files: [], rejected: [], pending: avro.map((a) => a.index), path: 'pending' };
  const rejected = fit.conflicts.map(([i, why]) =>
    letter(batch, i, DeadLetterReason.TypeConflict, why, table),
  );
  const schema = currentSchema(base.metadata);
  const spec = defaultSpec(base.metadata);
  const out: Row[] = [];
  const written: AvroItem[] = [];
  for (const a of fit.fitting) {
    const row = projectRow(a.decoded.row, { kind: 'struct', fields: schema.fields });
    if (row instanceof ProjectFailure) {
      rejected.push(
        letter(
          batch,
          a.index,
          DeadLetterReason.InvalidValue,
          `table '${table}': column ${row.path}: ${row.why}`,
          table,
        ),
      );
    } else {
      out.push(row);
      written.push(a);
    }
  }
  // The table does not change here, so rows the writer fails on are simply dead letters.
  const { dataFiles, failed } = await writeRows(t.load, base.metadata, schema, spec, out, t.staged);
  for (const [i, why] of failed) {
    rejected.push(
      letter(batch, written[i]!.index, DeadLetterReason.WriteFailed, `table '${table}': ${why}`, table),
    );
  }
  const schemaId = schema.schemaId;
  const specId = spec['spec-id'];
  return {
    files: dataFiles.map((file) => ({ file, schemaId, specId })),
    rejected,
    pending: [],
    path: 'avro',
  };
}

/**
 * Whether the table takes these Avro records as they are: every writer schema version joins the
 * table without a change. Versions that cannot join at all are type conflicts (dead letters);
 * undefined when some version needs the committer (new columns, a wider type, a new spec field).
 */
function avroFits(
  base: LoadedTable,
  items: readonly AvroItem[],
  candidates: readonly string[],
): { fitting: AvroItem[]; conflicts: [number, string][] } | undefined {
  const verdict = new Map<string, string | true | false>();
  const fitting: AvroItem[] = [];
  const conflicts: [number, string][] = [];
  for (const a of items) {
    const v = a.decoded.schemaVersionId;
    let ok = verdict.get(v);
    if (ok === undefined) {
      try {
        // Writer schemas declare their types: a wider one (int → long) is an evolution.
        ok = evolve(base, a.decoded.struct, candidates, { declared: true }).updates.length === 0;
      } catch (e) {
        if (!isFloeError(e, ErrorKind.SchemaIncompatible)) throw e;
        ok = `table '${base.id.name}': schema '${a.decoded.schemaName}' version ${a.decoded.versionNumber}: ${e.message}`;
      }
      verdict.set(v, ok);
    }
    if (ok === false) return undefined;
    if (ok === true) fitting.push(a);
    else conflicts.push([a.index, ok]);
  }
  return { fitting, conflicts };
}
