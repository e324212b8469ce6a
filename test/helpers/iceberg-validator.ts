/**
 * An INDEPENDENT Iceberg table validator for tests.
 *
 * It checks a table's metadata JSON, manifest lists, manifests and live files against the Iceberg
 * table spec (format/spec.md of apache/iceberg, referred to below by section) and, where the spec
 * leaves a detail to implementations, against what the Java reference implementation does (named
 * in each rule). It never imports lambdas/src: our own Iceberg/Avro/Parquet code is what it checks.
 * Metadata JSON is read with lossless-json (snapshot ids exceed 2^53), Avro with avsc
 * (test/unit/avro/avsc-reader.ts) and Parquet footers with hyparquet.
 *
 * Every problem has a stable `code`; `knownDefects` lists codes to ignore for fixtures that are
 * known to be broken (they are reported under `ignored` instead).
 *
 * The live rows of a snapshot with its deletes applied: `readTableRows` in iceberg-rows.ts, which
 * reuses the manifest decoding exported here.
 */
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import avsc from 'avsc';
import type { SchemaElement } from 'hyparquet';
import { parquetMetadata } from 'hyparquet';
import { parse as parseLossless } from 'lossless-json';
import { expect } from 'vitest';
import { readWithAvsc } from '../unit/avro/avsc-reader.ts';

// ---------------------------------------------------------------------------------------------
// API

export type SnapshotSelection = 'current' | 'all' | 'none';

export interface ValidateOptions {
  /** The table metadata file's content (GZIP-compressed content is accepted). */
  readonly metadataJson: string | Uint8Array;
  /** Where the metadata file lives; used as the `path` of metadata problems. */
  readonly metadataLocation?: string;
  /** Reads a whole file by the URI the metadata names (the caller maps URIs to storage). */
  readonly read: (uri: string) => Promise<Uint8Array>;
  /** Whether a file exists; without it a failing `read` counts as a missing file. */
  readonly exists?: (uri: string) => Promise<boolean>;
  /**
   * Which snapshots to walk (manifest list → manifests → live files): the current one (default),
   * every snapshot in the metadata, or none (metadata JSON checks only).
   */
  readonly snapshots?: SnapshotSelection;
  /** Problem codes to ignore (known defects of a fixture); they are reported under `ignored`. */
  readonly knownDefects?: readonly string[];
  /**
   * Clock-skew tolerance for the time order of snapshot-log / metadata-log entries and
   * `last-updated-ms`; Java's TableMetadata allows one minute (ONE_MINUTE). Default 60000.
   */
  readonly clockSkewToleranceMs?: number;
}

export interface Problem {
  readonly code: string;
  readonly message: string;
  /** The file the problem is about (metadata, manifest list, manifest or data/delete file URI). */
  readonly path?: string;
  /** The snapshot being checked when the problem was found. */
  readonly snapshotId?: string;
}

export interface ValidationStats {
  /** Snapshots walked. */
  snapshots: number;
  /** Distinct manifests read. */
  manifests: number;
  /** Live data files of the current snapshot. */
  dataFiles: number;
  /** Live delete files (position, equality, deletion vectors) of the current snapshot. */
  deleteFiles: number;
  /** Sum of `record_count` over the current snapshot's live data files (deletes not applied). */
  liveRecords: bigint;
}

export interface ValidationReport {
  /** No problem other than the ignored known defects. */
  readonly ok: boolean;
  readonly problems: Problem[];
  /** Problems whose code is in `knownDefects`. */
  readonly ignored: Problem[];
  /**
   * Findings that are not errors: things the spec requires but the Java reference implementation
   * itself never writes (manifest `schema-id`), or deprecated-but-readable forms (v1 `manifests`).
   */
  readonly warnings: Problem[];
  readonly stats: ValidationStats;
}

/** Validates a table and fails the test with the list of problems if there are any. */
export async function expectValidTable(opts: ValidateOptions): Promise<ValidationReport> {
  const report = await validateTable(opts);
  expect(report.problems.map(formatProblem), 'Iceberg table validation problems').toEqual([]);
  return report;
}

export function formatProblem(p: Problem): string {
  const where = [p.snapshotId ? `snapshot ${p.snapshotId}` : '', p.path ?? ''].filter(Boolean).join(' ');
  return `${p.code}: ${p.message}${where ? ` [${where}]` : ''}`;
}

/**
 * `read`/`exists` over the local file system: `file://` URIs and plain paths, or any URI through
 * `resolve` (for fixtures whose metadata names their writer's original locations).
 */
export function localTableIo(resolve: (uri: string) => string = defaultResolve): {
  read: (uri: string) => Promise<Uint8Array>;
  exists: (uri: string) => Promise<boolean>;
} {
  return {
    read: async (uri) => new Uint8Array(await fs.readFile(resolve(uri))),
    exists: async (uri) => {
      try {
        return (await fs.stat(resolve(uri))).isFile();
      } catch {
        return false;
      }
    },
  };
}

function defaultResolve(uri: string): string {
  return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
}

// ---------------------------------------------------------------------------------------------
// Small value helpers (lossless JSON numbers are parsed as bigint when integral)

type Json = Record<string, unknown>;

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function big(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return undefined;
}

export function int(v: unknown): number | undefined {
  const b = big(v);
  return b === undefined ? undefined : Number(b);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function has(o: Json, k: string): boolean {
  return Object.hasOwn(o, k) && o[k] !== undefined;
}

function parseJsonLossless(text: string): unknown {
  return parseLossless(text, null, (s: string) => (/^-?\d+$/.test(s) ? BigInt(s) : Number(s)));
}

function decodeText(data: string | Uint8Array): string {
  if (typeof data === 'string') return data;
  const bytes = data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : data;
  return new TextDecoder().decode(bytes);
}

// ---------------------------------------------------------------------------------------------
// Table model (what the walk needs from the metadata)

interface SchemaInfo {
  readonly id: number;
  /** Field id → Iceberg type (primitive type string, or 'struct' / 'list' / 'map'). */
  readonly types: Map<number, string>;
}

export interface SpecField {
  readonly fieldId: number | undefined;
  readonly sourceIds: number[];
  readonly transform: string;
  readonly name: string;
}

export interface SnapshotInfo {
  readonly id: bigint;
  readonly idText: string;
  readonly parentId: bigint | undefined;
  readonly seq: bigint;
  readonly timestampMs: bigint | undefined;
  readonly manifestList: string | undefined;
  readonly manifests: string[] | undefined;
  readonly summary: Json | undefined;
  readonly schemaId: number | undefined;
}

export interface TableModel {
  readonly formatVersion: number;
  readonly schemas: Map<number, SchemaInfo>;
  readonly currentSchemaId: number | undefined;
  readonly specs: Map<number, SpecField[]>;
  readonly snapshots: SnapshotInfo[];
  readonly currentSnapshotId: bigint | undefined;
  /** Every field id of every schema (including list element / map key and value ids). */
  readonly allFieldIds: Set<number>;
  readonly nameMapping: unknown[] | undefined;
}

/** Spec §Reserved Field IDs: metadata columns that may appear in data and delete files. */
const RESERVED_FIELD_IDS = new Set([
  2147483646, 2147483645, 2147483644, 2147483643, 2147483642, 2147483546, 2147483545, 2147483544, 2147483543,
  2147483542, 2147483541, 2147483540, 2147483539,
]);
/** Spec §Reserved Field IDs: "Iceberg tables must not use field ids greater than 2147483447". */
const MAX_TABLE_FIELD_ID = 2147483447;

// ---------------------------------------------------------------------------------------------
// Validation context

class Ctx {
  readonly problems: Problem[] = [];
  readonly warnings: Problem[] = [];
  private readonly seen = new Set<string>();
  snapshotId: string | undefined;

  constructor(readonly metadataPath: string | undefined) {}

  add(code: string, message: string, path?: string): void {
    this.push(this.problems, code, message, path);
  }

  warn(code: string, message: string, path?: string): void {
    this.push(this.warnings, code, message, path);
  }

  private push(list: Problem[], code: string, message: string, path?: string): void {
    const p = path ?? this.metadataPath;
    // A manifest or file shared by several snapshots reports a problem once.
    const key = `${list === this.problems ? 'p' : 'w'}|${code}|${p ?? ''}|${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    list.push({
      code,
      message,
      ...(p === undefined ? {} : { path: p }),
      ...(this.snapshotId === undefined ? {} : { snapshotId: this.snapshotId }),
    });
  }
}

export async function validateTable(opts: ValidateOptions): Promise<ValidationReport> {
  const ctx = new Ctx(opts.metadataLocation);
  const stats: ValidationStats = {
    snapshots: 0,
    manifests: 0,
    dataFiles: 0,
    deleteFiles: 0,
    liveRecords: 0n,
  };
  let meta: unknown;
  try {
    meta = parseJsonLossless(decodeText(opts.metadataJson));
  } catch (e) {
    ctx.add('metadata.json', `metadata is not valid JSON: ${(e as Error).message}`);
  }
  if (meta !== undefined) {
    let model: TableModel | undefined;
    if (isObj(meta)) model = checkMetadata(meta, ctx, opts.clockSkewToleranceMs ?? 60_000);
    else ctx.add('metadata.json', 'metadata is not a JSON object');
    const which = opts.snapshots ?? 'current';
    if (model && which !== 'none') await new Walker(model, ctx, opts, stats).run(which);
  }
  const known = new Set(opts.knownDefects ?? []);
  const problems = ctx.problems.filter((p) => !known.has(p.code));
  const ignored = ctx.problems.filter((p) => known.has(p.code));
  return { ok: problems.length === 0, problems, ignored, warnings: ctx.warnings, stats };
}

/**
 * The parsed metadata JSON and the table model the walk uses (for iceberg-rows.ts), with the
 * problems the metadata checks found; throws when the metadata is unusable.
 */
export function readTableModel(metadataJson: string | Uint8Array): {
  meta: Json;
  model: TableModel;
  problems: Problem[];
} {
  const meta = parseJsonLossless(decodeText(metadataJson));
  if (!isObj(meta)) throw new Error('table metadata is not a JSON object');
  const ctx = new Ctx(undefined);
  const model = checkMetadata(meta, ctx, 60_000);
  if (!model) throw new Error(`unusable table metadata: ${ctx.problems.map(formatProblem).join('; ')}`);
  return { meta, model, problems: ctx.problems };
}

// ---------------------------------------------------------------------------------------------
// Metadata JSON (spec §Table Metadata Fields, §Snapshots, §Snapshot References, Appendix C/E)

const REQUIRED_FIELDS: Record<number, string[]> = {
  1: ['format-version', 'location', 'last-updated-ms', 'last-column-id', 'schema', 'partition-spec'],
  2: [
    'format-version',
    'table-uuid',
    'location',
    'last-sequence-number',
    'last-updated-ms',
    'last-column-id',
    'schemas',
    'current-schema-id',
    'partition-specs',
    'default-spec-id',
    'last-partition-id',
    'sort-orders',
    'default-sort-order-id',
  ],
};
REQUIRED_FIELDS[3] = [...(REQUIRED_FIELDS[2] ?? []), 'next-row-id'];

const OPERATIONS = new Set(['append', 'replace', 'overwrite', 'delete']);

function checkMetadata(m: Json, ctx: Ctx, skewMs: number): TableModel | undefined {
  const fv = int(m['format-version']);
  if (fv === undefined || fv < 1 || fv > 3) {
    // Spec: "Implementations must throw an exception if a table's version is higher than the
    // supported version". This validator knows v1..v3.
    ctx.add(
      'metadata.format-version',
      `unsupported or missing format-version ${String(m['format-version'])}`,
    );
    return undefined;
  }
  for (const k of REQUIRED_FIELDS[fv] ?? []) {
    if (!has(m, k) || m[k] === null) ctx.add('metadata.required_field', `v${fv} metadata requires '${k}'`);
  }
  if (fv === 1 && has(m, 'last-sequence-number') && big(m['last-sequence-number']) !== 0n) {
    // Appendix E: v1 metadata does not write it; Java: "Sequence number must be 0 in v1".
    ctx.add('metadata.last-sequence-number', 'v1 metadata must not have a non-zero last-sequence-number');
  }

  // Schemas ------------------------------------------------------------------------------------
  const schemas = new Map<number, SchemaInfo>();
  const allFieldIds = new Set<number>();
  const lastColumnId = int(m['last-column-id']);
  const addSchema = (s: unknown, fallbackId: number | undefined, where: string) => {
    if (!isObj(s)) {
      ctx.add('schema.invalid', `${where} is not an object`);
      return;
    }
    if (s.type !== 'struct') ctx.add('schema.invalid', `${where} must have "type": "struct" (Appendix C)`);
    const id = int(s['schema-id']) ?? fallbackId;
    if (id === undefined) {
      ctx.add('schema.invalid', `${where} has no schema-id`);
      return;
    }
    if (schemas.has(id) && where !== 'schema')
      ctx.add('metadata.duplicate_schema_id', `schema-id ${id} appears twice`);
    const types = new Map<number, string>();
    walkSchemaType(
      s,
      (fid, type, path) => {
        if (types.has(fid))
          ctx.add('schema.duplicate_field_id', `schema ${id}: field id ${fid} is used twice (${path})`);
        types.set(fid, type);
        allFieldIds.add(fid);
        if (fid > MAX_TABLE_FIELD_ID)
          ctx.add('schema.reserved_field_id', `schema ${id}: field id ${fid} is reserved`);
        if (lastColumnId !== undefined && fid > lastColumnId) {
          ctx.add(
            'metadata.last-column-id',
            `last-column-id ${lastColumnId} < field id ${fid} (${path}) of schema ${id}`,
          );
        }
      },
      (msg) => ctx.add('schema.invalid', `schema ${id}: ${msg}`),
    );
    if (!schemas.has(id)) schemas.set(id, { id, types });
  };
  if (Array.isArray(m.schemas)) {
    for (const [i, s] of m.schemas.entries()) addSchema(s, undefined, `schemas[${i}]`);
  } else if (has(m, 'schemas')) ctx.add('schema.invalid', "'schemas' must be a list");
  if (has(m, 'schema')) addSchema(m.schema, 0, 'schema');
  let currentSchemaId = int(m['current-schema-id']);
  if (currentSchemaId === undefined && isObj(m.schema)) currentSchemaId = int(m.schema['schema-id']) ?? 0;
  if (currentSchemaId !== undefined && !schemas.has(currentSchemaId)) {
    ctx.add('metadata.current-schema-id', `current-schema-id ${currentSchemaId} is not in schemas`);
  }

  // Partition specs -----------------------------------------------------------------------------
  const specs = new Map<number, SpecField[]>();
  const lastPartitionId = int(m['last-partition-id']);
  const addSpec = (specId: number, fields: unknown, where: string) => {
    if (!Array.isArray(fields)) {
      ctx.add('spec.invalid', `${where}: fields must be a list`);
      return;
    }
    const out: SpecField[] = [];
    fields.forEach((f, i) => {
      if (!isObj(f)) {
        ctx.add('spec.invalid', `${where}: field ${i} is not an object`);
        return;
      }
      // v1 partition fields may lack field-id: Java assigns 1000, 1001, ... in order.
      const fieldId = int(f['field-id']) ?? (fv === 1 ? 1000 + i : undefined);
      if (fieldId === undefined) ctx.add('spec.invalid', `${where}: field ${i} has no field-id`);
      const sourceIds = Array.isArray(f['source-ids'])
        ? f['source-ids'].map(int).filter((x): x is number => x !== undefined)
        : [int(f['source-id'])].filter((x): x is number => x !== undefined);
      if (sourceIds.length === 0) ctx.add('spec.invalid', `${where}: field ${i} has no source-id`);
      for (const sid of sourceIds) {
        if (!allFieldIds.has(sid)) ctx.add('spec.source_id', `${where}: source id ${sid} is in no schema`);
      }
      const transform = str(f.transform) ?? '';
      if (!transform) ctx.add('spec.invalid', `${where}: field ${i} has no transform`);
      if (fieldId !== undefined && lastPartitionId !== undefined && fieldId > lastPartitionId) {
        ctx.add(
          'metadata.last-partition-id',
          `last-partition-id ${lastPartitionId} < partition field id ${fieldId} (${where})`,
        );
      }
      out.push({ fieldId, sourceIds, transform, name: str(f.name) ?? '' });
    });
    if (!specs.has(specId)) specs.set(specId, out);
  };
  if (Array.isArray(m['partition-specs'])) {
    m['partition-specs'].forEach((s, i) => {
      const id = isObj(s) ? int(s['spec-id']) : undefined;
      if (!isObj(s) || id === undefined) {
        ctx.add('spec.invalid', `partition-specs[${i}] has no spec-id`);
        return;
      }
      if (specs.has(id)) ctx.add('metadata.duplicate_spec_id', `spec-id ${id} appears twice`);
      addSpec(id, s.fields, `partition spec ${id}`);
    });
    if (m['partition-specs'].length === 0) ctx.add('spec.invalid', 'partition-specs is empty');
  }
  if (has(m, 'partition-spec') && !Array.isArray(m['partition-specs']))
    addSpec(0, m['partition-spec'], 'partition-spec');
  const defaultSpecId = int(m['default-spec-id']);
  if (defaultSpecId !== undefined && !specs.has(defaultSpecId)) {
    ctx.add('metadata.default-spec-id', `default-spec-id ${defaultSpecId} is not in partition-specs`);
  }

  // Sort orders ---------------------------------------------------------------------------------
  if (Array.isArray(m['sort-orders'])) {
    const ids = new Set<number>();
    for (const o of m['sort-orders']) {
      const id = isObj(o) ? int(o['order-id']) : undefined;
      if (id === undefined) ctx.add('sort_order.invalid', 'a sort order has no order-id');
      else if (ids.has(id)) ctx.add('metadata.duplicate_sort_order_id', `order-id ${id} appears twice`);
      else ids.add(id);
    }
    const def = int(m['default-sort-order-id']);
    if (def !== undefined && !ids.has(def)) {
      ctx.add('metadata.default-sort-order-id', `default-sort-order-id ${def} is not in sort-orders`);
    }
  }

  // Snapshots -----------------------------------------------------------------------------------
  const snapshots: SnapshotInfo[] = [];
  const byId = new Map<bigint, SnapshotInfo>();
  const lastSeq = fv >= 2 ? big(m['last-sequence-number']) : 0n;
  const nextRowId = big(m['next-row-id']);
  const rawSnapshots = m.snapshots ?? [];
  if (!Array.isArray(rawSnapshots)) ctx.add('snapshot.invalid', "'snapshots' must be a list");
  for (const [i, s] of (Array.isArray(rawSnapshots) ? rawSnapshots : []).entries()) {
    if (!isObj(s)) {
      ctx.add('snapshot.invalid', `snapshots[${i}] is not an object`);
      continue;
    }
    const id = big(s['snapshot-id']);
    if (id === undefined) {
      ctx.add('snapshot.required_field', `snapshots[${i}] has no snapshot-id`);
      continue;
    }
    const label = `snapshot ${id}`;
    if (byId.has(id)) ctx.add('snapshot.duplicate_id', `${label} appears twice`);
    if (!has(s, 'timestamp-ms')) ctx.add('snapshot.required_field', `${label} has no timestamp-ms`);
    // Appendix E: "Snapshot field sequence-number must default to 0" when reading v1 snapshots;
    // Java omits the key when it is 0.
    const seq = big(s['sequence-number']) ?? 0n;
    if (fv >= 2 && lastSeq !== undefined && seq > lastSeq) {
      ctx.add(
        'metadata.last-sequence-number',
        `last-sequence-number ${lastSeq} < sequence-number ${seq} of ${label}`,
      );
    }
    const manifestList = str(s['manifest-list']);
    const manifests = Array.isArray(s.manifests) ? s.manifests.map((x) => String(x)) : undefined;
    if (manifestList !== undefined && has(s, 'manifests')) {
      ctx.add(
        'snapshot.manifests_and_list',
        `${label}: 'manifests' must be omitted when 'manifest-list' is present`,
      );
    }
    if (manifestList === undefined) {
      if (fv >= 2 && seq > 0n)
        ctx.add('snapshot.required_field', `${label}: v${fv} snapshots require 'manifest-list'`);
      else if (manifests === undefined)
        ctx.add('snapshot.required_field', `${label} has neither manifest-list nor manifests`);
      else ctx.warn('snapshot.v1_manifests_field', `${label} uses the deprecated v1 'manifests' list`);
    }
    const summary = isObj(s.summary) ? s.summary : undefined;
    if (summary === undefined) {
      if (fv >= 2) ctx.add('snapshot.required_field', `${label}: v${fv} snapshots require 'summary'`);
    } else if (!has(summary, 'operation')) {
      ctx.add('snapshot.summary_operation', `${label}: summary has no 'operation'`);
    } else if (!OPERATIONS.has(String(summary.operation))) {
      ctx.add('snapshot.summary_operation', `${label}: unknown operation '${String(summary.operation)}'`);
    }
    const schemaId = int(s['schema-id']);
    if (schemaId !== undefined && !schemas.has(schemaId)) {
      ctx.add('snapshot.schema-id', `${label}: schema-id ${schemaId} is not in schemas`);
    }
    // v3 row lineage: next-row-id is "higher than all assigned row IDs"; a snapshot assigns
    // [first-row-id, first-row-id + added-rows).
    const firstRowId = big(s['first-row-id']);
    const addedRows = big(s['added-rows']);
    if (fv >= 3 && firstRowId !== undefined && addedRows !== undefined && nextRowId !== undefined) {
      if (firstRowId + addedRows > nextRowId) {
        ctx.add('metadata.next-row-id', `next-row-id ${nextRowId} < first-row-id + added-rows of ${label}`);
      }
    }
    const info: SnapshotInfo = {
      id,
      idText: id.toString(),
      parentId: big(s['parent-snapshot-id']),
      seq,
      timestampMs: big(s['timestamp-ms']),
      manifestList,
      manifests,
      summary,
      schemaId,
    };
    snapshots.push(info);
    if (!byId.has(id)) byId.set(id, info);
  }
  if (fv >= 2) {
    // Each commit takes last-sequence-number + 1 (spec §Sequence Numbers; Java rejects a snapshot
    // whose sequence number is not greater than the table's), so numbers are unique and grow along
    // parent links. Snapshots from before a v1 → v2 upgrade all read as 0.
    const seqs = new Map<bigint, bigint>();
    for (const s of snapshots) {
      if (s.seq === 0n) continue;
      const other = seqs.get(s.seq);
      if (other !== undefined && other !== s.id) {
        ctx.add(
          'snapshot.duplicate_sequence_number',
          `snapshots ${other} and ${s.id} share sequence-number ${s.seq}`,
        );
      }
      seqs.set(s.seq, s.id);
      const parent = s.parentId === undefined ? undefined : byId.get(s.parentId);
      if (parent && !(s.seq > parent.seq)) {
        ctx.add(
          'snapshot.sequence_number_order',
          `snapshot ${s.id} has sequence-number ${s.seq}, not greater than its parent ${parent.id}'s ${parent.seq}`,
        );
      }
    }
  }

  // Current snapshot and refs (spec §Snapshot References; Java TableMetadata.validateRefs) -------
  const rawCurrent = big(m['current-snapshot-id']);
  const currentSnapshotId = rawCurrent === undefined || rawCurrent === -1n ? undefined : rawCurrent;
  if (currentSnapshotId !== undefined && !byId.has(currentSnapshotId)) {
    ctx.add('metadata.current-snapshot-id', `current-snapshot-id ${currentSnapshotId} is not in snapshots`);
  }
  if (has(m, 'refs') && m.refs !== null) {
    if (!isObj(m.refs)) ctx.add('ref.invalid', "'refs' must be an object");
    else {
      for (const [name, ref] of Object.entries(m.refs)) {
        const rid = isObj(ref) ? big(ref['snapshot-id']) : undefined;
        if (!isObj(ref) || rid === undefined) {
          ctx.add('ref.required_field', `ref '${name}' has no snapshot-id`);
          continue;
        }
        if (ref.type !== 'branch' && ref.type !== 'tag')
          ctx.add('ref.type', `ref '${name}' has type ${String(ref.type)}`);
        if (name === 'main' && ref.type !== 'branch') ctx.add('ref.type', "'main' must be a branch");
        if (!byId.has(rid))
          ctx.add('ref.unknown_snapshot', `ref '${name}' points at missing snapshot ${rid}`);
        if (name === 'main' && rid !== currentSnapshotId) {
          ctx.add(
            'metadata.current-snapshot-id',
            `current-snapshot-id ${String(currentSnapshotId ?? 'none')} != refs.main ${rid}`,
          );
        }
      }
    }
  }

  // Logs (spec §Table Metadata Fields; order checks as Java's TableMetadata, with its tolerance) -
  const lastUpdated = big(m['last-updated-ms']);
  const checkLog = (key: 'snapshot-log' | 'metadata-log') => {
    const log = m[key];
    if (log === undefined || log === null) return;
    if (!Array.isArray(log)) {
      ctx.add(`${key.replace('-', '_')}.invalid`, `'${key}' must be a list`);
      return;
    }
    const code = key.replace('-', '_');
    let prev: bigint | undefined;
    for (const [i, e] of log.entries()) {
      const ts = isObj(e) ? big(e['timestamp-ms']) : undefined;
      if (!isObj(e) || ts === undefined) {
        ctx.add(`${code}.invalid`, `${key}[${i}] has no timestamp-ms`);
        continue;
      }
      if (key === 'snapshot-log') {
        const sid = big(e['snapshot-id']);
        if (sid === undefined || !byId.has(sid)) {
          // Java drops every entry up to the last one naming an expired snapshot.
          ctx.add(
            'snapshot_log.unknown_snapshot',
            `snapshot-log[${i}] names missing snapshot ${String(sid)}`,
          );
        }
      } else if (str(e['metadata-file']) === undefined) {
        ctx.add('metadata_log.invalid', `metadata-log[${i}] has no metadata-file`);
      }
      if (prev !== undefined && ts - prev < -BigInt(skewMs)) {
        ctx.add(`${code}.order`, `${key}[${i}] (${ts}) is earlier than the entry before it (${prev})`);
      }
      prev = ts;
    }
    if (prev !== undefined && lastUpdated !== undefined && lastUpdated - prev < -BigInt(skewMs)) {
      ctx.add(
        'metadata.last-updated-ms',
        `last-updated-ms ${lastUpdated} is before the last ${key} entry (${prev})`,
      );
    }
  };
  checkLog('snapshot-log');
  checkLog('metadata-log');

  const props = isObj(m.properties) ? m.properties : {};
  let nameMapping: unknown[] | undefined;
  const nm = props['schema.name-mapping.default'];
  if (typeof nm === 'string') {
    try {
      const parsed = JSON.parse(nm) as unknown;
      if (Array.isArray(parsed)) nameMapping = parsed;
    } catch {
      ctx.add('metadata.name_mapping', 'schema.name-mapping.default is not valid JSON');
    }
  }

  return {
    formatVersion: fv,
    schemas,
    currentSchemaId,
    specs,
    snapshots,
    currentSnapshotId,
    allFieldIds,
    nameMapping,
  };
}

/** Calls `onField` for every field id in an Iceberg schema JSON type (struct fields, list elements, map keys/values). */
function walkSchemaType(
  t: unknown,
  onField: (id: number, type: string, path: string) => void,
  onError: (msg: string) => void,
  path = '',
): void {
  if (typeof t === 'string') return;
  if (!isObj(t)) {
    onError(`invalid type at ${path || 'root'}`);
    return;
  }
  const kind = t.type;
  const typeName = (x: unknown) => (typeof x === 'string' ? x : isObj(x) ? String(x.type) : '?');
  if (kind === 'struct') {
    if (!Array.isArray(t.fields)) {
      onError(`struct at ${path || 'root'} has no fields list`);
      return;
    }
    for (const f of t.fields) {
      const id = isObj(f) ? int(f.id) : undefined;
      const name = isObj(f) ? String(f.name) : '?';
      const p = path ? `${path}.${name}` : name;
      if (!isObj(f) || id === undefined) {
        onError(`field ${p} has no id`);
        continue;
      }
      onField(id, typeName(f.type), p);
      walkSchemaType(f.type, onField, onError, p);
    }
  } else if (kind === 'list') {
    const id = int(t['element-id']);
    if (id === undefined) onError(`list at ${path} has no element-id`);
    else onField(id, typeName(t.element), `${path}.element`);
    walkSchemaType(t.element, onField, onError, `${path}.element`);
  } else if (kind === 'map') {
    const k = int(t['key-id']);
    const v = int(t['value-id']);
    if (k === undefined || v === undefined) onError(`map at ${path} lacks key-id/value-id`);
    if (k !== undefined) onField(k, typeName(t.key), `${path}.key`);
    if (v !== undefined) onField(v, typeName(t.value), `${path}.value`);
    walkSchemaType(t.key, onField, onError, `${path}.key`);
    walkSchemaType(t.value, onField, onError, `${path}.value`);
  }
}

// ---------------------------------------------------------------------------------------------
// Avro access by field id

type AvroType = unknown;

interface AvroField {
  readonly name: string;
  readonly type: AvroType;
  readonly fieldId: number | undefined;
  readonly raw: Json;
}

class AvroNames {
  private readonly named = new Map<string, Json>();

  constructor(root: AvroType) {
    this.register(root);
  }

  private register(t: AvroType): void {
    if (Array.isArray(t)) {
      for (const b of t) this.register(b);
      return;
    }
    if (!isObj(t)) return;
    if (typeof t.name === 'string' && (t.type === 'record' || t.type === 'fixed' || t.type === 'enum')) {
      this.named.set(t.name, t);
      if (typeof t.namespace === 'string') this.named.set(`${t.namespace}.${t.name}`, t);
    }
    if (Array.isArray(t.fields)) for (const f of t.fields) if (isObj(f)) this.register(f.type);
    if (t.items !== undefined) this.register(t.items);
    if (t.values !== undefined) this.register(t.values);
    if (isObj(t.type) || Array.isArray(t.type)) this.register(t.type);
  }

  /** The non-null branch of an optional union, with named references resolved. */
  resolve(t: AvroType): Json | string | undefined {
    let x = t;
    if (Array.isArray(x)) {
      const branches = x.filter((b) => b !== 'null');
      x = branches.length === 1 ? branches[0] : undefined;
    }
    if (typeof x === 'string') return this.named.get(x) ?? x;
    if (isObj(x) && (isObj(x.type) || Array.isArray(x.type))) return this.resolve(x.type);
    return isObj(x) ? x : undefined;
  }

  fields(t: AvroType): AvroField[] {
    const r = this.resolve(t);
    if (!isObj(r) || !Array.isArray(r.fields)) return [];
    return r.fields.filter(isObj).map((f) => ({
      name: String(f.name),
      type: f.type,
      fieldId: int(f['field-id']),
      raw: f,
    }));
  }
}

function byId(fields: readonly AvroField[]): Map<number, AvroField> {
  const out = new Map<number, AvroField>();
  for (const f of fields) if (f.fieldId !== undefined && !out.has(f.fieldId)) out.set(f.fieldId, f);
  return out;
}

/** Reads field `id` of an avsc record: `undefined` if the file's schema has no such field. */
function get(rec: unknown, ids: Map<number, AvroField>, id: number): unknown {
  const f = ids.get(id);
  if (!f || !isObj(rec)) return undefined;
  const v = rec[f.name];
  return v === undefined ? null : v;
}

// Field ids of the manifest list and manifest Avro schemas (spec §Manifest Lists, §Manifests).
interface ExpectedIds {
  /** name → field id */
  readonly fields: Record<string, number>;
  /** name → nested expectations (record fields, list element, map key/value) */
  readonly nested?: Record<string, { element?: number; key?: number; value?: number; record?: ExpectedIds }>;
}

const FIELD_SUMMARY_IDS: ExpectedIds = {
  fields: { contains_null: 509, contains_nan: 518, lower_bound: 510, upper_bound: 511 },
};

const MANIFEST_FILE_IDS: ExpectedIds = {
  fields: {
    manifest_path: 500,
    manifest_length: 501,
    partition_spec_id: 502,
    content: 517,
    sequence_number: 515,
    min_sequence_number: 516,
    added_snapshot_id: 503,
    added_files_count: 504,
    added_data_files_count: 504, // Java's v1 name
    existing_files_count: 505,
    existing_data_files_count: 505,
    deleted_files_count: 506,
    deleted_data_files_count: 506,
    added_rows_count: 512,
    existing_rows_count: 513,
    deleted_rows_count: 514,
    partitions: 507,
    key_metadata: 519,
    first_row_id: 520,
  },
  nested: { partitions: { element: 508, record: FIELD_SUMMARY_IDS } },
};

const DATA_FILE_IDS: ExpectedIds = {
  fields: {
    content: 134,
    file_path: 100,
    file_format: 101,
    partition: 102,
    record_count: 103,
    file_size_in_bytes: 104,
    block_size_in_bytes: 105,
    file_ordinal: 106,
    sort_columns: 107,
    column_sizes: 108,
    value_counts: 109,
    null_value_counts: 110,
    distinct_counts: 111,
    lower_bounds: 125,
    upper_bounds: 128,
    key_metadata: 131,
    split_offsets: 132,
    equality_ids: 135,
    nan_value_counts: 137,
    sort_order_id: 140,
    first_row_id: 142,
    referenced_data_file: 143,
    content_offset: 144,
    content_size_in_bytes: 145,
  },
  nested: {
    sort_columns: { element: 112 },
    column_sizes: { key: 117, value: 118 },
    value_counts: { key: 119, value: 120 },
    null_value_counts: { key: 121, value: 122 },
    distinct_counts: { key: 123, value: 124 },
    lower_bounds: { key: 126, value: 127 },
    upper_bounds: { key: 129, value: 130 },
    split_offsets: { element: 133 },
    equality_ids: { element: 136 },
    nan_value_counts: { key: 138, value: 139 },
  },
};

const MANIFEST_ENTRY_IDS: ExpectedIds = {
  fields: { status: 0, snapshot_id: 1, sequence_number: 3, file_sequence_number: 4, data_file: 2 },
  nested: { data_file: { record: DATA_FILE_IDS } },
};

/** Checks the `field-id` / `element-id` / key and value ids of an Avro record schema (Appendix A, Avro "Field IDs"). */
function checkAvroIds(
  names: AvroNames,
  recordType: AvroType,
  expected: ExpectedIds,
  where: string,
  report: (msg: string) => void,
): void {
  for (const f of names.fields(recordType)) {
    const want = expected.fields[f.name];
    if (f.fieldId === undefined) {
      report(`${where}.${f.name} has no field-id`);
      continue;
    }
    if (want !== undefined && f.fieldId !== want)
      report(`${where}.${f.name} has field-id ${f.fieldId}, expected ${want}`);
    const nested = expected.nested?.[f.name];
    if (!nested) continue;
    const t = names.resolve(f.type);
    if (!isObj(t)) continue;
    if (t.type === 'array') {
      const items = names.resolve(t.items);
      if (nested.key !== undefined || nested.value !== undefined) {
        // A map with non-string keys: array of key/value records, logicalType "map".
        for (const [k, id] of [
          ['key', nested.key],
          ['value', nested.value],
        ] as const) {
          const field = names.fields(items).find((x) => x.name === k);
          if (!field || field.fieldId === undefined) report(`${where}.${f.name}.${k} has no field-id`);
          else if (id !== undefined && field.fieldId !== id) {
            report(`${where}.${f.name}.${k} has field-id ${field.fieldId}, expected ${id}`);
          }
        }
      } else {
        const el = int(t['element-id']);
        if (el === undefined) report(`${where}.${f.name} has no element-id`);
        else if (nested.element !== undefined && el !== nested.element) {
          report(`${where}.${f.name} has element-id ${el}, expected ${nested.element}`);
        }
        if (nested.record) checkAvroIds(names, items, nested.record, `${where}.${f.name}.element`, report);
      }
    } else if (t.type === 'map') {
      const k = int(t['key-id']);
      const v = int(t['value-id']);
      if (nested.key !== undefined && k !== nested.key)
        report(`${where}.${f.name} has key-id ${String(k)}, expected ${nested.key}`);
      if (nested.value !== undefined && v !== nested.value) {
        report(`${where}.${f.name} has value-id ${String(v)}, expected ${nested.value}`);
      }
    } else if (t.type === 'record' && nested.record) {
      checkAvroIds(names, t, nested.record, `${where}.${f.name}`, report);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Avro object container framing (Avro spec, "Object Container Files")

const AVRO_HEADER = avsc.Type.forSchema({
  type: 'record',
  name: 'AvroHeader',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'AvroMagic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'AvroSync', size: 16 } },
  ],
});
const AVRO_LONG = avsc.Type.forSchema('long');

/**
 * Walks the container's blocks: "a file header, followed by one or more file data blocks", each
 * block being an object count, a byte size, the data and the file's 16-byte sync marker. avsc's
 * streaming decoder stops quietly at a truncated block, so this is checked separately. Returns an
 * error message, or the number of objects the blocks declare.
 */
function avroFraming(bytes: Uint8Array): { error: string } | { objects: number } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = AVRO_HEADER.decode(buf, 0) as {
    value: { magic: Buffer; sync: Buffer } | undefined;
    offset: number;
  };
  if (header.offset < 0 || !header.value) return { error: 'truncated header' };
  if (!header.value.magic.equals(Buffer.from([0x4f, 0x62, 0x6a, 0x01]))) return { error: 'bad magic' };
  const sync = header.value.sync;
  let pos = header.offset;
  let objects = 0;
  while (pos < buf.length) {
    const count = AVRO_LONG.decode(buf, pos) as { value: number; offset: number };
    if (count.offset < 0) return { error: `truncated block header at byte ${pos}` };
    const size = AVRO_LONG.decode(buf, count.offset) as { value: number; offset: number };
    if (size.offset < 0) return { error: `truncated block header at byte ${pos}` };
    const end = size.offset + size.value;
    if (count.value < 0 || size.value < 0 || end + 16 > buf.length)
      return { error: `truncated block at byte ${pos}` };
    if (!buf.subarray(end, end + 16).equals(sync))
      return { error: `block at byte ${pos} is not followed by the sync marker` };
    objects += count.value;
    pos = end + 16;
  }
  return { objects };
}

/** Decodes an Avro container with avsc after checking its framing. */
export async function readAvro(bytes: Uint8Array): Promise<Awaited<ReturnType<typeof readWithAvsc>>> {
  const framing = avroFraming(bytes);
  if ('error' in framing) throw new Error(framing.error);
  const decoded = await readWithAvsc(bytes);
  if (decoded.records.length !== framing.objects) {
    throw new Error(`blocks declare ${framing.objects} objects but ${decoded.records.length} decode`);
  }
  return decoded;
}

// ---------------------------------------------------------------------------------------------
// Decoded manifest lists and manifests

interface FieldSummary {
  readonly containsNull: boolean | null;
  readonly containsNan: boolean | null;
  readonly lower: Uint8Array | null;
  readonly upper: Uint8Array | null;
}

export interface ManifestFileRec {
  readonly path: string;
  readonly length: bigint | null;
  readonly specId: number | null;
  /** undefined: the list has no such column (v1). */
  readonly content: number | null | undefined;
  readonly seq: bigint | null | undefined;
  readonly minSeq: bigint | null | undefined;
  readonly addedSnapshotId: bigint | null;
  readonly counts: {
    readonly added: bigint | null | undefined;
    readonly existing: bigint | null | undefined;
    readonly deleted: bigint | null | undefined;
    readonly addedRows: bigint | null | undefined;
    readonly existingRows: bigint | null | undefined;
    readonly deletedRows: bigint | null | undefined;
  };
  readonly partitions: FieldSummary[] | null | undefined;
}

interface DecodedList {
  readonly formatVersion: number | undefined;
  readonly manifests: ManifestFileRec[];
}

export interface DataFileRec {
  readonly content: number;
  readonly path: string;
  readonly format: string;
  /** Partition values in the order of the Avro partition record, with their field ids. */
  readonly partition: { fieldId: number | undefined; value: unknown }[];
  readonly recordCount: bigint | undefined;
  readonly fileSize: bigint | undefined;
  readonly equalityIds: number[] | null;
  readonly contentOffset: bigint | null;
  readonly contentSize: bigint | null;
  /** Position deletes and deletion vectors: the one data file they apply to (v2 optional, v3 DVs). */
  readonly referencedDataFile: string | null;
}

export interface EntryRec {
  readonly status: number;
  readonly snapshotId: bigint | null;
  /** undefined: the manifest has no such column (v1). */
  readonly seq: bigint | null | undefined;
  readonly fileSeq: bigint | null | undefined;
  readonly file: DataFileRec;
}

interface DecodedManifest {
  readonly size: number;
  readonly meta: Record<string, string>;
  readonly formatVersion: number | undefined;
  readonly partitionFieldIds: (number | undefined)[];
  readonly entries: EntryRec[];
}

const optBig = (v: unknown): bigint | null | undefined =>
  v === undefined ? undefined : v === null ? null : (big(v) ?? null);

function toBytes(v: unknown): Uint8Array | null {
  return v instanceof Uint8Array ? v : null;
}

export function decodeListRecords(rawSchema: string, records: Record<string, unknown>[]): ManifestFileRec[] {
  const schema = JSON.parse(rawSchema) as AvroType;
  const names = new AvroNames(schema);
  const ids = byId(names.fields(schema));
  const partitionsField = ids.get(507);
  const summaryIds = partitionsField
    ? byId(names.fields((names.resolve(partitionsField.type) as Json | undefined)?.items))
    : new Map<number, AvroField>();
  return records.map((r) => {
    const parts = get(r, ids, 507);
    return {
      path: String(get(r, ids, 500)),
      length: optBig(get(r, ids, 501)) ?? null,
      specId: int(get(r, ids, 502)) ?? null,
      content: ((v) => (v === undefined ? undefined : (int(v) ?? null)))(get(r, ids, 517)),
      seq: optBig(get(r, ids, 515)),
      minSeq: optBig(get(r, ids, 516)),
      addedSnapshotId: optBig(get(r, ids, 503)) ?? null,
      counts: {
        added: optBig(get(r, ids, 504)),
        existing: optBig(get(r, ids, 505)),
        deleted: optBig(get(r, ids, 506)),
        addedRows: optBig(get(r, ids, 512)),
        existingRows: optBig(get(r, ids, 513)),
        deletedRows: optBig(get(r, ids, 514)),
      },
      partitions:
        parts === undefined
          ? undefined
          : Array.isArray(parts)
            ? parts.map((p) => ({
                containsNull: ((v) => (typeof v === 'boolean' ? v : null))(get(p, summaryIds, 509)),
                containsNan: ((v) => (typeof v === 'boolean' ? v : null))(get(p, summaryIds, 518)),
                lower: toBytes(get(p, summaryIds, 510)),
                upper: toBytes(get(p, summaryIds, 511)),
              }))
            : null,
    };
  });
}

export function decodeManifestRecords(
  rawSchema: string,
  records: Record<string, unknown>[],
): { entries: EntryRec[]; partitionFieldIds: (number | undefined)[] } {
  const schema = JSON.parse(rawSchema) as AvroType;
  const names = new AvroNames(schema);
  const ids = byId(names.fields(schema));
  const dataFileField = ids.get(2);
  const dfIds = byId(names.fields(dataFileField?.type));
  const partitionFields = names.fields(dfIds.get(102)?.type);
  const entries = records.map((r): EntryRec => {
    const df = get(r, ids, 2);
    const partition = get(df, dfIds, 102);
    const eq = get(df, dfIds, 135);
    return {
      status: int(get(r, ids, 0)) ?? -1,
      snapshotId: optBig(get(r, ids, 1)) ?? null,
      seq: optBig(get(r, ids, 3)),
      fileSeq: optBig(get(r, ids, 4)),
      file: {
        // Appendix E: data file content "must default to 0 (data)" for v1 manifests.
        content: int(get(df, dfIds, 134)) ?? 0,
        path: String(get(df, dfIds, 100)),
        format: String(get(df, dfIds, 101)),
        partition: partitionFields.map((f) => ({
          fieldId: f.fieldId,
          value: isObj(partition) ? (partition[f.name] ?? null) : null,
        })),
        recordCount: big(get(df, dfIds, 103)),
        fileSize: big(get(df, dfIds, 104)),
        equalityIds: Array.isArray(eq) ? eq.map((x) => int(x) ?? -1) : null,
        contentOffset: optBig(get(df, dfIds, 144)) ?? null,
        contentSize: optBig(get(df, dfIds, 145)) ?? null,
        referencedDataFile: str(get(df, dfIds, 143)) ?? null,
      },
    };
  });
  return { entries, partitionFieldIds: partitionFields.map((f) => f.fieldId) };
}

// ---------------------------------------------------------------------------------------------
// Partition values and bounds (spec Appendix D: binary single-value serialization)

/** The result type of a partition transform on a source type (spec §Partition Transforms). */
function resultType(transform: string, sourceType: string | undefined): string | undefined {
  if (transform === 'identity' || transform === 'void' || /^truncate\[\d+\]$/.test(transform))
    return sourceType;
  if (/^bucket\[\d+\]$/.test(transform)) return 'int';
  if (transform === 'year' || transform === 'month' || transform === 'day' || transform === 'hour')
    return 'int';
  return undefined; // unknown transform: not checked
}

type Comparable = number | bigint | Uint8Array;

export function decimalBytesToBigInt(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return (b[0] ?? 0) & 0x80 ? v - (1n << BigInt(b.length * 8)) : v;
}

/** A bound's bytes as a comparable value of `type`, or undefined if the type is not checked. */
function fromBound(type: string, b: Uint8Array): Comparable | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  try {
    if (type === 'boolean') return b[0] ? 1 : 0;
    if (type === 'int' || type === 'date') return dv.getInt32(0, true);
    if (/^(long|time|timestamp|timestamptz|timestamp_ns|timestamptz_ns)$/.test(type))
      return dv.getBigInt64(0, true);
    if (type === 'float') return dv.getFloat32(0, true);
    if (type === 'double') return dv.getFloat64(0, true);
    if (type === 'string' || type === 'binary' || type.startsWith('fixed')) return b;
    if (type.startsWith('decimal')) return decimalBytesToBigInt(b);
  } catch {
    return undefined;
  }
  return undefined;
}

/** A partition value decoded by avsc as a comparable value of `type`. */
function fromAvro(type: string, v: unknown): Comparable | undefined {
  if (type === 'boolean') return v === true ? 1 : v === false ? 0 : undefined;
  if (type === 'int' || type === 'date' || type === 'float' || type === 'double')
    return typeof v === 'number' ? v : undefined;
  if (/^(long|time|timestamp|timestamptz|timestamp_ns|timestamptz_ns)$/.test(type)) return big(v);
  if (type === 'string') return typeof v === 'string' ? new TextEncoder().encode(v) : undefined;
  if (type === 'binary' || type.startsWith('fixed')) return v instanceof Uint8Array ? v : undefined;
  if (type.startsWith('decimal')) return v instanceof Uint8Array ? decimalBytesToBigInt(v) : undefined;
  return undefined; // uuid (Java's UUID ordering is signed), variant, geo: not checked
}

function compare(a: Comparable, b: Comparable): number {
  if (a instanceof Uint8Array && b instanceof Uint8Array)
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Snapshot walk

interface LiveFile {
  readonly manifest: ManifestFileRec | undefined;
  readonly entry: EntryRec;
}

interface FileCheck {
  readonly exists: boolean;
  readonly size?: number;
}

class Walker {
  private readonly lists = new Map<string, Promise<DecodedList | undefined>>();
  /** Per manifest path: decoded, or only its size when it does not decode, or undefined when missing. */
  private readonly manifests = new Map<string, Promise<DecodedManifest | { size: number } | undefined>>();
  private readonly files = new Map<string, Promise<FileCheck>>();
  private readonly checkedManifests = new Set<string>();

  constructor(
    private readonly model: TableModel,
    private readonly ctx: Ctx,
    private readonly opts: ValidateOptions,
    private readonly stats: ValidationStats,
  ) {}

  async run(which: 'current' | 'all'): Promise<void> {
    const snaps =
      which === 'all'
        ? this.model.snapshots
        : this.model.snapshots.filter((s) => s.id === this.model.currentSnapshotId).slice(0, 1);
    for (const snap of snaps) {
      this.ctx.snapshotId = snap.idText;
      this.stats.snapshots++;
      const live = await this.walkSnapshot(snap);
      if (live && snap.id === this.model.currentSnapshotId) {
        for (const f of live) {
          if (f.entry.file.content === 0) {
            this.stats.dataFiles++;
            this.stats.liveRecords += f.entry.file.recordCount ?? 0n;
          } else this.stats.deleteFiles++;
        }
      }
    }
    this.ctx.snapshotId = undefined;
    this.stats.manifests = this.manifests.size;
  }

  private async readFile(uri: string): Promise<{ bytes?: Uint8Array; error?: string }> {
    try {
      if (this.opts.exists && !(await this.opts.exists(uri))) return { error: 'does not exist' };
      return { bytes: await this.opts.read(uri) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }

  /** Manifests of a snapshot with their list entries, or undefined when the list is unusable. */
  private async manifestsOf(
    snap: SnapshotInfo,
  ): Promise<{ path: string; rec: ManifestFileRec | undefined }[] | undefined> {
    if (snap.manifestList === undefined) {
      return snap.manifests?.map((path) => ({ path, rec: undefined }));
    }
    const uri = snap.manifestList;
    let p = this.lists.get(uri);
    if (!p) {
      p = this.decodeList(uri, snap);
      this.lists.set(uri, p);
    }
    const list = await p;
    if (!list) return undefined;
    this.checkListAgainstSnapshot(list, snap, uri);
    return list.manifests.map((rec) => ({ path: rec.path, rec }));
  }

  private async decodeList(uri: string, snap: SnapshotInfo): Promise<DecodedList | undefined> {
    const { bytes, error } = await this.readFile(uri);
    if (!bytes) {
      this.ctx.add('manifest_list.missing', `manifest list cannot be read: ${error ?? ''}`, uri);
      return undefined;
    }
    let decoded: Awaited<ReturnType<typeof readWithAvsc>>;
    try {
      decoded = await readAvro(bytes);
    } catch (e) {
      this.ctx.add(
        'manifest_list.decode',
        `manifest list is not a readable Avro file: ${(e as Error).message}`,
        uri,
      );
      return undefined;
    }
    const schema = JSON.parse(decoded.rawSchema) as AvroType;
    const names = new AvroNames(schema);
    checkAvroIds(names, schema, MANIFEST_FILE_IDS, 'manifest_file', (m) =>
      this.ctx.add('manifest_list.field_id', m, uri),
    );
    const ids = byId(names.fields(schema));
    for (const [id, name] of [
      [500, 'manifest_path'],
      [501, 'manifest_length'],
      [502, 'partition_spec_id'],
      [503, 'added_snapshot_id'],
    ] as const) {
      if (!ids.has(id))
        this.ctx.add('manifest_list.required_field', `manifest list has no ${name} (field ${id})`, uri);
    }
    const fvText = decoded.meta['format-version'];
    const formatVersion = fvText === undefined ? undefined : Number(fvText);
    // A list written for a v2+ commit must carry the v2 fields (Appendix E "Writing v2 metadata");
    // lists from before a v1 → v2 upgrade (sequence number 0) need not.
    const v2 = (formatVersion ?? (this.model.formatVersion >= 2 && snap.seq > 0n ? 2 : 1)) >= 2;
    const manifests = decodeListRecords(decoded.rawSchema, decoded.records);
    if (v2) {
      for (const m of manifests) {
        const missing = Object.entries({
          content: m.content,
          sequence_number: m.seq,
          min_sequence_number: m.minSeq,
          added_files_count: m.counts.added,
          existing_files_count: m.counts.existing,
          deleted_files_count: m.counts.deleted,
          added_rows_count: m.counts.addedRows,
          existing_rows_count: m.counts.existingRows,
          deleted_rows_count: m.counts.deletedRows,
        })
          .filter(([, v]) => v === undefined || v === null)
          .map(([k]) => k);
        if (missing.length > 0) {
          this.ctx.add(
            'manifest_list.required_field',
            `v2+ manifest list entry for ${m.path} lacks ${missing.join(', ')}`,
            uri,
          );
        }
      }
    }
    return { formatVersion, manifests };
  }

  private checkListAgainstSnapshot(list: DecodedList, snap: SnapshotInfo, uri: string): void {
    for (const m of list.manifests) {
      if (m.specId === null || !this.model.specs.has(m.specId)) {
        // spec §Manifest Lists: partition_spec_id "must be listed in table metadata partition-specs".
        this.ctx.add(
          'manifest_list.unknown_spec',
          `${m.path}: partition_spec_id ${String(m.specId)} is not a table spec`,
          uri,
        );
      }
      if (m.content !== undefined && m.content !== null && m.content !== 0 && m.content !== 1) {
        this.ctx.add(
          'manifest_list.content',
          `${m.path}: content ${m.content} is neither 0 (data) nor 1 (deletes)`,
          uri,
        );
      }
      if (this.model.formatVersion === 1 && (m.content ?? 0) !== 0) {
        this.ctx.add('manifest_list.content', `${m.path}: a v1 table cannot have delete manifests`, uri);
      }
      if (typeof m.seq === 'bigint') {
        if (m.seq > snap.seq) {
          this.ctx.add(
            'manifest_list.sequence_number',
            `${m.path}: sequence_number ${m.seq} > the snapshot's sequence-number ${snap.seq}`,
            uri,
          );
        }
        // §Manifest Lists: "the (optimistic) sequence number of the snapshot is written for all new
        // manifest files tracked by the list".
        if (m.addedSnapshotId === snap.id && m.seq !== snap.seq) {
          this.ctx.add(
            'manifest_list.sequence_number',
            `${m.path} was added by this snapshot but has sequence_number ${m.seq}, not ${snap.seq}`,
            uri,
          );
        }
        if (typeof m.minSeq === 'bigint' && m.minSeq > m.seq) {
          this.ctx.add(
            'manifest_list.min_sequence_number',
            `${m.path}: min_sequence_number ${m.minSeq} > sequence_number ${m.seq}`,
            uri,
          );
        }
      }
    }
  }

  private async decodeManifest(uri: string): Promise<DecodedManifest | { size: number } | undefined> {
    const { bytes, error } = await this.readFile(uri);
    if (!bytes) {
      this.ctx.add('manifest.missing', `manifest cannot be read: ${error ?? ''}`, uri);
      return undefined;
    }
    let decoded: Awaited<ReturnType<typeof readWithAvsc>>;
    try {
      decoded = await readAvro(bytes);
    } catch (e) {
      this.ctx.add('manifest.decode', `manifest is not a readable Avro file: ${(e as Error).message}`, uri);
      return { size: bytes.length };
    }
    const schema = JSON.parse(decoded.rawSchema) as AvroType;
    const names = new AvroNames(schema);
    checkAvroIds(names, schema, MANIFEST_ENTRY_IDS, 'manifest_entry', (m) =>
      this.ctx.add('manifest.field_id', m, uri),
    );
    const ids = byId(names.fields(schema));
    const dfIds = byId(names.fields(ids.get(2)?.type));
    for (const [id, name] of [
      [0, 'status'],
      [2, 'data_file'],
    ] as const) {
      if (!ids.has(id))
        this.ctx.add('manifest.required_field', `manifest_entry has no ${name} (field ${id})`, uri);
    }
    for (const [id, name] of [
      [100, 'file_path'],
      [101, 'file_format'],
      [102, 'partition'],
      [103, 'record_count'],
      [104, 'file_size_in_bytes'],
    ] as const) {
      if (ids.has(2) && !dfIds.has(id))
        this.ctx.add('manifest.required_field', `data_file has no ${name} (field ${id})`, uri);
    }
    const fvText = decoded.meta['format-version'];
    const { entries, partitionFieldIds } = decodeManifestRecords(decoded.rawSchema, decoded.records);
    return {
      size: bytes.length,
      meta: decoded.meta,
      formatVersion: fvText === undefined ? undefined : Number(fvText),
      partitionFieldIds,
      entries,
    };
  }

  private async walkSnapshot(snap: SnapshotInfo): Promise<LiveFile[] | undefined> {
    const manifests = await this.manifestsOf(snap);
    if (!manifests) return undefined;
    const live: LiveFile[] = [];
    for (const { path, rec } of manifests) {
      let p = this.manifests.get(path);
      if (!p) {
        p = this.decodeManifest(path);
        this.manifests.set(path, p);
      }
      const man = await p;
      if (!man) continue;
      // §Manifest Lists: manifest_length "Length of the manifest file in bytes".
      if (rec && rec.length !== null && rec.length !== BigInt(man.size)) {
        this.ctx.add(
          'manifest.length',
          `manifest_length ${rec.length} but the file has ${man.size} bytes`,
          path,
        );
      }
      if (!('entries' in man)) continue;
      this.checkManifest(path, rec, man, snap);
      for (const entry of man.entries)
        if (entry.status === 0 || entry.status === 1) live.push({ manifest: rec, entry });
    }
    await this.checkLiveFiles(live, snap);
    this.checkSummary(live, snap);
    return live;
  }

  private checkManifest(
    uri: string,
    rec: ManifestFileRec | undefined,
    man: DecodedManifest,
    snap: SnapshotInfo,
  ): void {
    const add = (code: string, msg: string) => this.ctx.add(code, msg, uri);
    const tableFv = this.model.formatVersion;
    const listSeq = typeof rec?.seq === 'bigint' ? rec.seq : 0n;
    // Which version's writer rules apply: the header's format-version, else a manifest added by a
    // v2+ commit (sequence number > 0) in a v2+ table counts as v2+.
    const fv = man.formatVersion ?? (tableFv >= 2 && listSeq > 0n ? tableFv : 1);
    const headerSpecId = man.meta['partition-spec-id'];
    const specId =
      rec?.specId ??
      (headerSpecId !== undefined && /^\d+$/.test(headerSpecId) ? Number(headerSpecId) : undefined);
    const spec = specId === undefined || specId === null ? undefined : this.model.specs.get(specId);

    // Checks that depend only on the file: once per manifest.
    if (!this.checkedManifests.has(uri)) {
      this.checkedManifests.add(uri);
      // §Manifests: key-value metadata.
      const required = [
        'schema',
        'partition-spec',
        ...(fv >= 2 ? ['partition-spec-id', 'format-version', 'content'] : []),
      ];
      for (const k of required)
        if (man.meta[k] === undefined)
          add('manifest.header', `Avro metadata lacks '${k}' (required for v${fv})`);
      if (fv >= 2 && man.meta['schema-id'] === undefined) {
        // Required by the spec for v2+, but the Java reference implementation never writes it.
        this.ctx.warn(
          'manifest.header_schema_id',
          "Avro metadata lacks 'schema-id' (spec: required for v2+)",
          uri,
        );
      }
      if (man.formatVersion !== undefined && !(man.formatVersion >= 1 && man.formatVersion <= tableFv)) {
        add('manifest.header', `format-version ${man.formatVersion} does not fit a v${tableFv} table`);
      }
      const content = man.meta.content;
      if (content !== undefined && content !== 'data' && content !== 'deletes')
        add('manifest.header', `content '${content}' is neither 'data' nor 'deletes'`);
      const headerSpec = man.meta['partition-spec'];
      if (headerSpec !== undefined) this.checkHeaderSpec(headerSpec, spec, add);
      // §Data File Fields: "the partition struct's field ids must match the ids from the partition spec".
      if (spec && (fv >= 2 || man.partitionFieldIds.some((x) => x !== undefined))) {
        const want = spec.map((f) => f.fieldId);
        if (want.join(',') !== man.partitionFieldIds.join(',')) {
          add(
            'manifest.partition_field_ids',
            `partition struct field ids [${man.partitionFieldIds.join(', ')}] != spec ${specId} field ids [${want.join(', ')}]`,
          );
        }
      }
      for (const e of man.entries) {
        const f = e.file;
        if (![0, 1, 2].includes(e.status)) add('entry.status', `${f.path}: status ${e.status}`);
        if (![0, 1, 2].includes(f.content)) add('file.content', `${f.path}: content ${f.content}`);
        if (tableFv === 1 && f.content !== 0)
          add('file.content', `${f.path}: a v1 table cannot have delete files`);
        if (!/^(avro|orc|parquet|puffin)$/i.test(f.format))
          add('file.format', `${f.path}: file_format '${f.format}'`);
        if (f.recordCount === undefined || f.recordCount < 0n)
          add('file.record_count', `${f.path}: record_count ${String(f.recordCount)}`);
        if (f.fileSize === undefined || f.fileSize < 0n)
          add('file.size', `${f.path}: file_size_in_bytes ${String(f.fileSize)}`);
        if (f.content === 2) {
          // §Data File Fields: equality_ids "Required when content=2"; the ids are table field ids
          // (a dropped column's deletes still apply, so any schema of the table counts).
          if (!f.equalityIds || f.equalityIds.length === 0)
            add('delete.equality_ids', `${f.path}: equality delete without equality_ids`);
          for (const id of f.equalityIds ?? []) {
            if (!this.model.allFieldIds.has(id))
              add('delete.equality_ids', `${f.path}: equality id ${id} is in no table schema`);
          }
        }
        // §Manifest Entry Fields: "If the entry status is 0 (existing) or 2 (deleted), the entry must
        // include both sequence numbers explicitly" (v2+ manifests; v1 ones have no such columns).
        if (
          fv >= 2 &&
          e.status !== 1 &&
          (e.seq === null || e.seq === undefined || e.fileSeq === null || e.fileSeq === undefined)
        ) {
          add(
            'entry.sequence_number_missing',
            `${f.path}: ${e.status === 0 ? 'EXISTING' : 'DELETED'} entry without explicit sequence numbers`,
          );
        }
      }
      const listContent = rec?.content ?? 0;
      const headerContent = content === undefined ? undefined : content === 'deletes' ? 1 : 0;
      if (
        headerContent !== undefined &&
        rec?.content !== undefined &&
        rec.content !== null &&
        headerContent !== rec.content
      ) {
        add(
          'manifest.content_mismatch',
          `header content '${content}' but the manifest list says ${rec.content}`,
        );
      }
      const kind = headerContent ?? listContent;
      // §Manifests: "A manifest may store either data files or delete files, but not both".
      const wrong = man.entries.filter((e) => (kind === 0 ? e.file.content !== 0 : e.file.content === 0));
      if (wrong.length > 0) {
        add(
          'manifest.content_mismatch',
          `${kind === 0 ? 'data' : 'delete'} manifest holds ${wrong.length} entries of the other kind (e.g. ${wrong[0]?.file.path})`,
        );
      }
    }

    if (!rec) return; // v1 `manifests` list: nothing to compare with
    const listUri = snap.manifestList ?? uri;
    const addL = (code: string, msg: string) => this.ctx.add(code, msg, listUri);
    if (
      rec.specId !== null &&
      man.meta['partition-spec-id'] !== undefined &&
      Number(man.meta['partition-spec-id']) !== rec.specId
    ) {
      add(
        'manifest.partition_spec_id',
        `header partition-spec-id ${man.meta['partition-spec-id']} != list partition_spec_id ${rec.specId}`,
      );
    }
    if (rec.content !== undefined && rec.content !== null) {
      const wrong = man.entries.filter((e) =>
        rec.content === 0 ? e.file.content !== 0 : e.file.content === 0,
      );
      if (wrong.length > 0)
        add(
          'manifest.content_mismatch',
          `manifest list content ${rec.content} but the manifest holds ${wrong.length} entries of the other kind`,
        );
    }
    // §Manifest Lists: the file and row counts per status ("when null this is assumed to be non-zero").
    const count = (status: number) => BigInt(man.entries.filter((e) => e.status === status).length);
    const rows = (status: number) =>
      man.entries.filter((e) => e.status === status).reduce((n, e) => n + (e.file.recordCount ?? 0n), 0n);
    const pairs: [string, bigint | null | undefined, bigint][] = [
      ['added_files_count', rec.counts.added, count(1)],
      ['existing_files_count', rec.counts.existing, count(0)],
      ['deleted_files_count', rec.counts.deleted, count(2)],
      ['added_rows_count', rec.counts.addedRows, rows(1)],
      ['existing_rows_count', rec.counts.existingRows, rows(0)],
      ['deleted_rows_count', rec.counts.deletedRows, rows(2)],
    ];
    for (const [name, listed, actual] of pairs) {
      if (typeof listed === 'bigint' && listed !== actual) {
        add('manifest.count_mismatch', `manifest list says ${name} = ${listed}, the manifest has ${actual}`);
      }
    }
    // Entries: snapshot id inheritance and sequence numbers (§Manifest Entry Fields, §Sequence Number Inheritance).
    let minLiveSeq: bigint | undefined;
    for (const e of man.entries) {
      const f = e.file;
      const sid = e.snapshotId ?? rec.addedSnapshotId;
      if (e.status === 1 && rec.addedSnapshotId !== null && sid !== rec.addedSnapshotId) {
        // An ADDED entry records "the snapshot ID in which the file was added", and only the snapshot
        // that writes a manifest adds files in it (Java ManifestMergeManager turns older ADDED entries
        // into EXISTING ones when it rewrites a manifest).
        add(
          'entry.added_snapshot_id',
          `${f.path}: ADDED entry has snapshot_id ${String(sid)}, but the manifest was added by ${rec.addedSnapshotId}`,
        );
      }
      if (e.status === 2 && rec.addedSnapshotId !== null && sid !== rec.addedSnapshotId) {
        // A DELETED entry stores "the snapshot ID in which the file was deleted", and the deletion is
        // recorded by the snapshot that writes the manifest (Java ManifestMergeManager: "only files
        // deleted by this snapshot should be added to the new manifest").
        add(
          'entry.deleted_snapshot_id',
          `${f.path}: DELETED entry has snapshot_id ${String(sid)}, but the manifest was added by ${rec.addedSnapshotId}`,
        );
      }
      // Data sequence number: explicit; inherited by ADDED entries; 0 for v1 manifests (no column);
      // unknown for an EXISTING/DELETED entry that omits it (reported above).
      const dataSeq =
        e.seq ??
        (e.status === 1
          ? typeof rec.seq === 'bigint'
            ? rec.seq
            : 0n
          : e.seq === undefined
            ? 0n
            : undefined);
      for (const [name, v] of [
        ['sequence_number', e.seq],
        ['file_sequence_number', e.fileSeq],
      ] as const) {
        if (typeof v === 'bigint' && typeof rec.seq === 'bigint' && v > rec.seq) {
          add('entry.sequence_number', `${f.path}: ${name} ${v} > the manifest's sequence_number ${rec.seq}`);
        }
      }
      if (e.status !== 2 && dataSeq !== undefined && (minLiveSeq === undefined || dataSeq < minLiveSeq)) {
        minLiveSeq = dataSeq;
      }
    }
    // §Manifest Lists: min_sequence_number is "the minimum data sequence number of all live data or
    // delete files in the manifest": it must not exceed any of them (delete-file pruning relies on it).
    if (typeof rec.minSeq === 'bigint' && minLiveSeq !== undefined && rec.minSeq > minLiveSeq) {
      addL(
        'manifest_list.min_sequence_number',
        `${uri}: min_sequence_number ${rec.minSeq} > a live entry's data sequence number ${minLiveSeq}`,
      );
    }
    if (spec) this.checkPartitionSummaries(uri, rec, man, spec, addL);
  }

  private checkHeaderSpec(
    headerSpec: string,
    spec: SpecField[] | undefined,
    add: (c: string, m: string) => void,
  ): void {
    let fields: unknown;
    try {
      fields = parseJsonLossless(headerSpec);
    } catch {
      add('manifest.header', "'partition-spec' is not JSON");
      return;
    }
    if (!Array.isArray(fields)) {
      add('manifest.header', "'partition-spec' must be the JSON array of the spec's fields");
      return;
    }
    if (!spec) return;
    const describe = (f: { fieldId: number | undefined; sourceIds: number[]; transform: string }) =>
      `${String(f.fieldId)}:${f.sourceIds.join('+')}:${f.transform}`;
    const header = fields.map((f, i) => ({
      fieldId: isObj(f) ? (int(f['field-id']) ?? 1000 + i) : undefined,
      sourceIds: isObj(f)
        ? Array.isArray(f['source-ids'])
          ? f['source-ids'].map((x) => int(x) ?? -1)
          : [int(f['source-id']) ?? -1]
        : [],
      transform: isObj(f) ? String(f.transform) : '',
    }));
    const a = header.map(describe).join(', ');
    const b = spec.map(describe).join(', ');
    if (a !== b)
      add(
        'manifest.partition_spec',
        `header partition-spec [${a}] != table spec [${b}] (field-id:source:transform)`,
      );
  }

  /** §Manifest Lists field_summary: contains_null / contains_nan and bounds must cover every partition value. */
  private checkPartitionSummaries(
    uri: string,
    rec: ManifestFileRec,
    man: DecodedManifest,
    spec: SpecField[],
    add: (c: string, m: string) => void,
  ): void {
    const sums = rec.partitions;
    if (sums === undefined || sums === null) return;
    if (sums.length !== spec.length) {
      add(
        'manifest_list.partition_summary',
        `${uri}: ${sums.length} field summaries for a spec with ${spec.length} fields`,
      );
      return;
    }
    spec.forEach((field, i) => {
      const sum = sums[i];
      if (!sum) return;
      const type = resultType(field.transform, this.sourceType(field.sourceIds[0]));
      let lower: Comparable | undefined;
      let upper: Comparable | undefined;
      if (type && sum.lower) lower = fromBound(type, sum.lower);
      if (type && sum.upper) upper = fromBound(type, sum.upper);
      for (const e of man.entries) {
        const slot =
          e.file.partition.find((x) => x.fieldId !== undefined && x.fieldId === field.fieldId) ??
          e.file.partition[i];
        const v = slot?.value ?? null;
        if (v === null) {
          if (sum.containsNull === false) {
            add(
              'manifest_list.partition_summary',
              `${uri}: field ${field.name} has a null value (${e.file.path}) but contains_null is false`,
            );
          }
          continue;
        }
        if (typeof v === 'number' && Number.isNaN(v)) {
          if (sum.containsNan === false)
            add(
              'manifest_list.partition_summary',
              `${uri}: field ${field.name} has NaN but contains_nan is false`,
            );
          continue;
        }
        if (!type) continue;
        const cv = fromAvro(type, v);
        if (cv === undefined) continue;
        if (lower !== undefined && compare(cv, lower) < 0) {
          add(
            'manifest_list.partition_summary',
            `${uri}: field ${field.name}: value of ${e.file.path} is below lower_bound`,
          );
        }
        if (upper !== undefined && compare(cv, upper) > 0) {
          add(
            'manifest_list.partition_summary',
            `${uri}: field ${field.name}: value of ${e.file.path} is above upper_bound`,
          );
        }
      }
    });
  }

  private sourceType(id: number | undefined): string | undefined {
    if (id === undefined) return undefined;
    const current =
      this.model.currentSchemaId === undefined
        ? undefined
        : this.model.schemas.get(this.model.currentSchemaId);
    const t = current?.types.get(id);
    if (t) return t;
    for (const s of this.model.schemas.values()) {
      const x = s.types.get(id);
      if (x) return x;
    }
    return undefined;
  }

  private async checkLiveFiles(live: LiveFile[], snap: SnapshotInfo): Promise<void> {
    // §Scan Planning: "all file paths marked with ADDED or EXISTING may appear at most once across all
    // manifest files in the snapshot" (deletion vectors share a Puffin file: keyed by offset too).
    const seen = new Set<string>();
    for (const { entry } of live) {
      const key = `${entry.file.path}#${entry.file.contentOffset ?? ''}`;
      if (seen.has(key))
        this.ctx.add('file.duplicate_live', `${entry.file.path} is live more than once`, snap.manifestList);
      seen.add(key);
    }
    for (const { entry } of live) {
      const f = entry.file;
      let p = this.files.get(f.path);
      if (!p) {
        p = this.checkFile(f);
        this.files.set(f.path, p);
      }
      await p;
    }
  }

  private async checkFile(f: DataFileRec): Promise<FileCheck> {
    const { bytes, error } = await this.readFile(f.path);
    if (!bytes) {
      // §Table Metadata Fields: "Valid snapshots are snapshots for which all data files exist".
      this.ctx.add(
        'file.missing',
        `live ${f.content === 0 ? 'data' : 'delete'} file cannot be read: ${error ?? ''}`,
        f.path,
      );
      return { exists: false };
    }
    if (f.fileSize !== undefined && BigInt(bytes.length) !== f.fileSize) {
      this.ctx.add(
        'file.size_mismatch',
        `file_size_in_bytes ${f.fileSize} but the file has ${bytes.length} bytes`,
        f.path,
      );
    }
    if (/^parquet$/i.test(f.format)) this.checkParquet(f, bytes);
    return { exists: true, size: bytes.length };
  }

  private checkParquet(f: DataFileRec, bytes: Uint8Array): void {
    let schema: SchemaElement[];
    let numRows: bigint;
    try {
      const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      const md = parquetMetadata(ab);
      schema = md.schema;
      numRows = md.num_rows;
    } catch (e) {
      this.ctx.add('parquet.decode', `Parquet footer cannot be read: ${(e as Error).message}`, f.path);
      return;
    }
    if (f.recordCount !== undefined && BigInt(numRows) !== f.recordCount) {
      this.ctx.add(
        'parquet.row_count',
        `record_count ${f.recordCount} but the Parquet footer has ${numRows} rows`,
        f.path,
      );
    }
    // Appendix A (Parquet): "Column IDs are required to be stored as field IDs on the parquet schema";
    // they are table field ids or reserved metadata-column ids (§Reserved Field IDs). Files without
    // ids are readable only through schema.name-mapping.default (§Column Projection).
    const fileIds = new Set<number>();
    const missing: string[] = [];
    const unknown: string[] = [];
    walkParquetSchema(schema, this.model.nameMapping, (el, path, mapped) => {
      if (el.field_id === undefined || el.field_id === null) {
        if (!mapped) missing.push(path);
        return;
      }
      fileIds.add(el.field_id);
      if (!this.model.allFieldIds.has(el.field_id) && !RESERVED_FIELD_IDS.has(el.field_id))
        unknown.push(`${path} (${el.field_id})`);
    });
    if (missing.length > 0)
      this.ctx.add('parquet.missing_field_id', `columns without a field id: ${missing.join(', ')}`, f.path);
    if (unknown.length > 0)
      this.ctx.add('parquet.unknown_field_id', `field ids in no table schema: ${unknown.join(', ')}`, f.path);
    if (f.content === 2) {
      // §Data File Fields: "Fields with ids listed in this column must be present in the delete file".
      const absent = (f.equalityIds ?? []).filter((id) => !fileIds.has(id));
      if (absent.length > 0)
        this.ctx.add(
          'delete.equality_ids',
          `equality ids not in the delete file: ${absent.join(', ')}`,
          f.path,
        );
    }
  }

  /**
   * Java SnapshotSummary semantics: totals are live-file sums — `total-records` counts the data
   * files' rows before deletes are applied, `total-files-size` counts data and delete files (a
   * deletion vector by its blob size, ScanTaskUtil.contentSizeInBytes).
   */
  private checkSummary(live: LiveFile[], snap: SnapshotInfo): void {
    const summary = snap.summary;
    if (!summary) return;
    const data = live.filter((f) => f.entry.file.content === 0);
    const deletes = live.filter((f) => f.entry.file.content !== 0);
    const sum = (xs: LiveFile[], g: (f: DataFileRec) => bigint | null | undefined) =>
      xs.reduce((n, x) => n + (g(x.entry.file) ?? 0n), 0n);
    const isDv = (f: DataFileRec) => f.content === 1 && /^puffin$/i.test(f.format) && f.contentSize !== null;
    const expected: Record<string, bigint> = {
      'total-records': sum(data, (f) => f.recordCount),
      'total-data-files': BigInt(data.length),
      'total-delete-files': BigInt(deletes.length),
      'total-files-size': sum(live, (f) => (isDv(f) ? f.contentSize : f.fileSize)),
      'total-position-deletes': sum(
        deletes.filter((f) => f.entry.file.content === 1),
        (f) => f.recordCount,
      ),
      'total-equality-deletes': sum(
        deletes.filter((f) => f.entry.file.content === 2),
        (f) => f.recordCount,
      ),
    };
    for (const [key, want] of Object.entries(expected)) {
      const v = summary[key];
      if (v === undefined) continue;
      if (typeof v !== 'string' || !/^\d+$/.test(v)) {
        this.ctx.add(
          `summary.${key}`,
          `summary ${key} is ${JSON.stringify(String(v))}, not a decimal string`,
          snap.manifestList,
        );
      } else if (BigInt(v) !== want) {
        this.ctx.add(
          `summary.${key}`,
          `summary ${key} = ${v}, the live files give ${want}`,
          snap.manifestList,
        );
      }
    }
  }
}

/**
 * Visits the Parquet schema elements that must carry an Iceberg field id: every column and group
 * except the root, the repeated middle level of 3-level lists and maps, and the `metadata`/`value`
 * members of a variant (Appendix A: they "must not be assigned field IDs").
 */
function walkParquetSchema(
  schema: SchemaElement[],
  nameMapping: unknown[] | undefined,
  visit: (el: SchemaElement, path: string, mappedByName: boolean) => void,
): void {
  let i = 1;
  const mappedFields = (mapping: unknown[] | undefined, name: string): unknown[] | undefined | null => {
    if (!mapping) return null;
    const m = mapping.find((x) => isObj(x) && Array.isArray(x.names) && x.names.includes(name));
    if (!isObj(m)) return null;
    return Array.isArray(m.fields) ? m.fields : undefined;
  };
  const node = (parentPath: string, mapping: unknown[] | undefined, exempt: boolean): void => {
    const el = schema[i++];
    if (!el) return;
    const path = parentPath ? `${parentPath}.${el.name}` : el.name;
    const children = el.num_children ?? 0;
    const sub = mappedFields(mapping, el.name);
    if (!exempt) visit(el, path, sub !== null);
    const kind = el.logical_type?.type ?? el.converted_type;
    if (kind === 'VARIANT') {
      for (let c = 0; c < children; c++) skip();
      return;
    }
    if ((kind === 'LIST' || kind === 'MAP' || kind === 'MAP_KEY_VALUE') && children === 1) {
      const middle = schema[i];
      if (middle && (middle.num_children ?? 0) > 0 && middle.repetition_type === 'REPEATED') {
        i++;
        for (let c = 0; c < (middle.num_children ?? 0); c++)
          node(`${path}.${middle.name}`, sub ?? undefined, false);
        return;
      }
    }
    for (let c = 0; c < children; c++) node(path, sub ?? undefined, false);
  };
  const skip = (): void => {
    const el = schema[i++];
    for (let c = 0; c < (el?.num_children ?? 0); c++) skip();
  };
  const root = schema[0];
  for (let c = 0; c < (root?.num_children ?? 0); c++) node('', nameMapping, false);
}
