/**
 * Staging the columnar fast path's records: a table's batch of columns (engine/columnar-batch.ts,
 * filled by engine/fast-path.ts) inferred, fitted to the table, converted and written as Parquet,
 * without an object per record. Anything that needs the generic path's rules falls back to it.
 */

import { hintsFor, partitionCandidatesFor, upsertFor } from '../config.ts';
import { ErrorKind, isFloeError } from '../errors.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { applyUpdates } from '../iceberg/metadata/index.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { type Schema, schemaStruct } from '../iceberg/schema.ts';
import { partitionSourceTransforms, unionByName } from '../iceberg/schema-evolution.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema } from '../iceberg/table-metadata.ts';
import type { StructType } from '../iceberg/types.ts';
import { supportsColumnar } from '../parquet/index.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import { type JsonValue, parseJsonRecord } from '../records/json-line.ts';
import { type FitOptions, fitToExisting } from '../schema/fit.ts';
import { settleAll } from './bounded.ts';
import type { ColumnarTableBatch } from './columnar-batch.ts';
import { type ColumnarPart, fitParts, inferParts, LocalPart, readBackParts } from './columnar-part.ts';
import type { LoadDeps, PendingRecord, TableLoadResult } from './load-types.ts';
import { schemaColumnPaths } from './record-rules.ts';
import {
  codecOf,
  commitStaged,
  createAndCommit,
  evolve,
  newTableFor,
  putDataFile,
  tableResult,
  UseGenericPath,
} from './table-staging.ts';
import { writeChangesColumnar } from './upsert-write.ts';

/**
 * Loads a table whose records all came through the fast path (held in `parts`), or returns
 * undefined (having written nothing that stays) when any rule needs the generic path.
 */
export async function loadTableColumnar(
  deps: LoadDeps,
  id: TableIdentifier,
  parts: readonly ColumnarPart[],
): Promise<TableLoadResult | undefined> {
  const cfg = deps.config;
  const name = id.name;
  const candidates = partitionCandidatesFor(cfg, name);
  const exists = await deps.catalog.tableExists(id);
  const decided = await decideColumnar(
    deps,
    id,
    parts,
    exists ? await deps.catalog.loadTable(id) : undefined,
  );
  if (!decided) return undefined;
  const { batchType, fit } = decided;
  const upsert = upsertFor(cfg, `${id.namespace}.${id.name}`);
  const stageFor = async (base: LoadedTable, files: string[]) => {
    const ev = evolve(base, batchType, candidates, fit);
    if (upsert) {
      // The last change of each key, from the table's records in one place (this thread).
      const only = parts.length === 1 ? parts[0] : undefined;
      if (!(only instanceof LocalPart)) throw new UseGenericPath();
      const m =
        ev.updates.length === 0
          ? base.metadata
          : applyUpdates(base.metadata, ev.updates, { nowMs: deps.clock.nowMs() });
      const w = await writeChangesColumnar(deps, m, ev.schema, ev.spec, only.batch, upsert.key, files, name);
      return {
        prepared: {
          updates: [...ev.updates, ...w.updates],
          dataFiles: w.dataFiles,
          specId: ev.spec['spec-id'],
          deleteFiles: new Map([[w.deleteSpecId, w.deleteFiles]]),
        },
        rejected: [],
        changes: ev.changes,
        specChanged: ev.specChanged,
        upserts: { upserted: w.upserted, deleted: w.deleted },
      };
    }
    const dataFiles = await writeParts(deps, base.metadata, ev.schema, ev.spec, parts, files);
    return {
      prepared: { updates: ev.updates, dataFiles, specId: ev.spec['spec-id'] },
      rejected: [],
      changes: ev.changes,
      specChanged: ev.specChanged,
    };
  };
  // A new table is staged for before it is created, and created only once every value converted
  // and was written: a batch that falls back to the generic path finds no table shaped by
  // records it then dead-letters.
  const stageOrGeneric = async <T>(f: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof UseGenericPath) return undefined;
      throw e;
    }
  };
  if (!exists) {
    const fresh = newTableFor(deps, id, batchType, candidates, deps.ids.uuid());
    const files: string[] = [];
    let staged: Awaited<ReturnType<typeof stageFor>>;
    try {
      staged = await stageFor(fresh, files);
    } catch (e) {
      await deleteQuietly(deps.store, files);
      if (e instanceof UseGenericPath) return undefined;
      throw e;
    }
    const committed = await stageOrGeneric(() =>
      createAndCommit(deps, id, stageFor, { metadata: fresh.metadata, staged, files }),
    );
    return committed && tableResult(name, committed.created, 0, committed, 'columnar');
  }
  const committed = await stageOrGeneric(() => commitStaged(deps, id, stageFor));
  return committed && tableResult(name, false, 0, committed, 'columnar');
}

/**
 * The type the parts' records give the table (fitted to `base`, the table as it is, with the
 * promotions their values need), or undefined when the generic path must decide: the columns
 * conflict, the type cannot join the table's, nothing is typed, or the table would pass
 * `guards.maxColumnsPerTable` (the generic path admits records one by one then).
 */
export async function decideColumnar(
  deps: Pick<LoadDeps, 'config'>,
  id: TableIdentifier,
  parts: readonly ColumnarPart[],
  base: LoadedTable | undefined,
): Promise<{ batchType: StructType; fit: FitOptions } | undefined> {
  const cfg = deps.config;
  const hints = hintsFor(cfg, id.name);
  const batchType = await inferParts(parts, hints, cfg.inference.detectTimestamps);
  if (!batchType || batchType.fields.length === 0) return undefined;
  let fit: FitOptions = {};
  let have = new Set<string>();
  if (base) {
    const m = base.metadata;
    const current = currentSchema(m);
    have = schemaColumnPaths(current);
    fit = await fitParts(current, parts, batchType, hints);
    try {
      unionByName(
        current,
        fitToExisting(schemaStruct(current), batchType, fit),
        m['last-column-id'],
        m['format-version'],
        {
          partitionTransforms: partitionSourceTransforms(m['partition-specs']),
        },
      );
    } catch (e) {
      if (isFloeError(e, ErrorKind.SchemaIncompatible)) return undefined;
      throw e;
    }
  }
  let columns = have.size;
  for (const p of schemaColumnPaths({ schemaId: 0, fields: batchType.fields })) if (!have.has(p)) columns++;
  if (columns > cfg.limits.maxColumnsPerTable) return undefined;
  return { batchType, fit };
}

/**
 * Encodes every part's records for `schema` and `spec` and stores the files (each stored while
 * the next is encoded: object stores are network round trips). Throws `UseGenericPath` when a
 * part cannot be written so (its values do not convert; the encoder failed on them).
 */
export async function writeParts(
  deps: Pick<LoadDeps, 'store' | 'ids' | 'maxRowsPerFile'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  parts: readonly ColumnarPart[],
  staged: string[],
): Promise<DataFile[]> {
  if (!supportsColumnar(schema)) throw new UseGenericPath();
  const options = { compression: codecOf(m), maxRows: deps.maxRowsPerFile ?? 1_000_000 };
  const puts: Promise<DataFile>[] = [];
  let failed = false;
  const encoding = settleAll(
    parts.map(async (part) => {
      const files = await part.encode(schema, spec, options);
      if (files === undefined) {
        failed = true;
        return;
      }
      for (const f of files) {
        const put = putDataFile(deps, m, schema, spec, f.tuple, f.file, puts.length, staged);
        put.catch(() => undefined); // settled below
        puts.push(put);
      }
    }),
  );
  // A part that fails to encode must not leave the other parts' puts running behind the caller.
  await encoding.catch(async (e) => {
    await Promise.allSettled(puts);
    throw e;
  });
  const written = await settleAll(puts);
  if (failed) throw new UseGenericPath();
  return written;
}

/**
 * The fast path's records as generic records (re-parsed), when a table needs the generic path;
 * `reshape` gives each the shape the field lists gave it on the fast path (`RecordRules.project`).
 */
export async function reparse(
  batch: ColumnarTableBatch | readonly ColumnarPart[],
  reshape?: (value: Record<string, JsonValue>) => Record<string, JsonValue>,
): Promise<PendingRecord[]> {
  const read = Array.isArray(batch)
    ? await readBackParts(batch as readonly ColumnarPart[])
    : await (batch as ColumnarTableBatch).provenance();
  return read.map((p) => {
    const value = parseJsonRecord(p.raw) as Record<string, JsonValue>;
    return { ...p, value: reshape ? reshape(value) : value };
  });
}

export function mergeBySeq(a: PendingRecord[], b: PendingRecord[]): PendingRecord[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  return [...a, ...b].sort((x, y) => x.seq - y.seq);
}
