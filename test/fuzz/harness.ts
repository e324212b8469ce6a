/**
 * Runs a fuzzed sequence through one of Floe's record paths and checks the result against the
 * model (model.ts):
 *
 * - `floe load`, columnar fast path (the CLI's byte-chunk input) and generic path;
 * - the streaming ingest (genuine Kinesis batches, dynalite ledger) and the committer.
 *
 * Properties, per sequence: no table-level failure; every line is exactly one of a row (in the
 * table its route names, read back with exactly the model's values by DuckDB and by hyparquet) or
 * a dead letter; a dead letter's reason is one the model can justify (a malformed line, or a value
 * the table — or any table — cannot hold exactly); never `write-failed` (each is a bug); and every
 * table passes the independent Iceberg validator (test/helpers/iceberg-validator.ts), every
 * snapshot walked — after every streaming sequence, and after one `floe load` sequence in
 * `VALIDATE_LOAD_EVERY` (chosen by the sequence's text, so a replay validates the same ones).
 */
import { readFileSync } from 'node:fs';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { loadSources } from '../../lambdas/src/app/load.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import type { LocalDynamo } from '../helpers/dynalite.ts';
import {
  currentSnapshotOf,
  type Duck,
  fileWarehouse,
  liveFiles,
  type TestWarehouse,
  tempDir,
} from '../helpers/e2e.ts';
import { batchOf, records, startPipeline } from '../helpers/pipeline.ts';
import { validateWarehouse } from '../helpers/warehouse-validation.ts';
import type { FuzzLine } from './json-shapes.ts';
import {
  type Canon,
  canonEqual,
  type FieldJson,
  hasLoneSurrogate,
  NoFit,
  rowOf,
  selfConflict,
  showCanon,
  tableOf,
} from './model.ts';
import { nestedProtoField, readWithDuckDB, readWithHyparquet } from './readers.ts';

export interface Outcome {
  /** fid → where it landed and what the readers returned. */
  readonly rows: Map<number, { table: string; row: { [k: string]: Canon } }[]>;
  /** fid → its dead letters. */
  readonly dead: Map<number, { reason: string; detail: string }[]>;
  /** Table → its current schema's fields (as the table's metadata.json holds them). */
  readonly schemas: Map<string, FieldJson[]>;
  /** Table-level failures (must be none). */
  readonly failures: string[];
  /** Rows the two readers disagree on. */
  readonly readerDiffs: string[];
  /** Problems the independent Iceberg validator finds in the tables (must be none). */
  readonly invalid: string[];
}

const NS = 'default';
const textEncoder = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Paths

export async function runLoad(duck: Duck, lines: readonly FuzzLine[], fastPath: boolean): Promise<Outcome> {
  const tmp = tempDir('floe-fuzz-');
  try {
    const wh = fileWarehouse(tmp.dir);
    const dead: DeadLetter[] = [];
    const bytes = textEncoder.encode(lines.map((l) => l.text).join('\n'));
    const report = await loadSources(
      {
        catalog: wh.catalog,
        store: wh.store,
        clock: fixedClock(Date.UTC(2025, 2, 14)),
        ids: seededIds(1),
        config: parseConfig({}),
        onDeadLetter: (d) => {
          dead.push(d);
        },
        sleep: async () => undefined,
        fastPath,
      },
      [
        {
          name: 'fuzz.ndjson',
          chunks: (async function* () {
            yield bytes;
          })(),
        },
      ],
    );
    const out = emptyOutcome();
    for (const f of report.failures) out.failures.push(`table ${f.table}: ${errText(f.error)}`);
    for (const d of dead) addDead(out, fidOfLine(lines, d.line), d.reason, d.detail);
    await readTables(duck, wh, out);
    if (validatesLoad(lines)) await validateTables(wh, out);
    return out;
  } finally {
    tmp.cleanup();
  }
}

/** Where a sequence is cut into batches: derived from its length, so shrinking keeps it valid. */
export function streamingCuts(lines: readonly FuzzLine[]): number[] {
  const n = lines.length;
  return n < 3 ? [1] : [Math.floor(n / 3), Math.floor((2 * n) / 3)];
}

/** The sequence cut into `cuts` Kinesis batches of one shard, ingested and committed in turn. */
export async function runStreaming(
  duck: Duck,
  dynamo: LocalDynamo,
  lines: readonly FuzzLine[],
  cuts: readonly number[],
  seed: number,
): Promise<Outcome> {
  const tmp = tempDir('floe-fuzz-stream-');
  try {
    const p = await startPipeline(dynamo, tmp.dir, { seed });
    const out = emptyOutcome();
    const shard = 'shardId-000000000000';
    const recs = records(lines.map((l) => l.text));
    const bounds = [0, ...cuts.filter((c) => c > 0 && c < lines.length), lines.length];
    for (let b = 0; b + 1 < bounds.length; b++) {
      const part = recs.slice(bounds[b], bounds[b + 1]);
      if (part.length === 0) continue;
      const r = await ingestBatch(p.ingestDeps(), batchOf(shard, part));
      for (const f of r.failures) out.failures.push(`ingest ${f.table}: ${errText(f.error)}`);
      const c = await runCommitter(p.committerDeps());
      for (const t of c.tables)
        if (t.status !== 'committed' && t.status !== 'nothing-to-commit')
          out.failures.push(`commit ${t.table}: ${t.status} ${errText(t.error)}`);
    }
    const bySeq = new Map(recs.map((r, i) => [r.sequenceNumber, lines[i]!.fid]));
    for (const d of await p.deadLetters.list()) {
      const fid = d.sequenceNumber === undefined ? undefined : bySeq.get(d.sequenceNumber);
      addDead(out, fid ?? -1, d.reason, d.detail);
    }
    await readTables(duck, p.wh, out);
    await validateTables(p.wh, out);
    return out;
  } finally {
    tmp.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// Reading back

/**
 * The outcome of a warehouse filled some other way (e.g. `floe local up` + `floe send`): its
 * tables read back, and its dead letters, each mapped to the fid of its line by `fidOf`.
 */
export async function outcomeOf(
  duck: Duck,
  wh: Pick<TestWarehouse, 'store' | 'catalog'>,
  dead: readonly { reason: string; detail: string; raw: string; sequenceNumber?: string }[],
  fidOf: (d: { raw: string; sequenceNumber?: string }) => number,
): Promise<Outcome> {
  const out = emptyOutcome();
  for (const d of dead) addDead(out, fidOf(d), d.reason, d.detail);
  await readTables(duck, wh, out);
  return out;
}

async function readTables(
  duck: Duck,
  wh: Pick<TestWarehouse, 'store' | 'catalog'>,
  out: Outcome,
): Promise<void> {
  let tables: string[] = [];
  try {
    tables = await wh.catalog.listTables(NS);
  } catch {
    return; // no namespace: nothing landed
  }
  for (const table of tables) {
    const loaded = await wh.catalog.loadTable({ namespace: NS, name: table });
    // The schema as the metadata file says, read without Floe's parser.
    const meta = JSON.parse(readFileSync(wh.store.pathOf(loaded.metadataLocation), 'utf8'));
    const schema = meta.schemas.find(
      (s: { 'schema-id': number }) => s['schema-id'] === meta['current-schema-id'],
    );
    const fields = schema.fields as FieldJson[];
    out.schemas.set(table, fields);
    const snap = currentSnapshotOf(loaded.metadata);
    if (!snap) continue;
    const paths = (await liveFiles(wh.store, snap)).map((f) => wh.store.pathOf(f.file.file_path));
    const viaDuck = await readWithDuckDB(duck, paths, fields);
    // hyparquet builds nested structs as plain objects and cannot hold a `__proto__` field.
    const viaHyp = nestedProtoField(fields) ? viaDuck : await readWithHyparquet(paths, fields);
    const key = (r: { [k: string]: Canon }) => showCanon(r);
    const a = viaDuck.map(key).sort();
    const b = viaHyp.map(key).sort();
    if (a.join('\n') !== b.join('\n'))
      out.readerDiffs.push(`${table}: DuckDB ${a.join(' | ')} ≠ hyparquet ${b.join(' | ')}`);
    for (const row of viaDuck) {
      const fid = row.fid;
      const n = typeof fid === 'bigint' ? Number(fid) : -1;
      const list = out.rows.get(n) ?? [];
      list.push({ table, row });
      out.rows.set(n, list);
    }
  }
}

/** The independent Iceberg validator over every table, every snapshot walked. */
async function validateTables(wh: Pick<TestWarehouse, 'store' | 'catalog'>, out: Outcome): Promise<void> {
  out.invalid.push(...(await validateWarehouse(wh, { snapshots: 'all' })).problems);
}

/**
 * One `floe load` sequence in this many is validated (`FLOE_FUZZ_VALIDATE_EVERY=1`: all of them).
 * A load sequence takes ~30 ms and its validation ~7 ms (metadata JSON, manifest list, manifest
 * and Parquet footers of every table; a load makes one snapshot, so `current` would save
 * nothing): validating all would make the 600-run suite ~25 % slower, one in three ~8 %.
 * Streaming sequences (several commits, so several snapshots) cost far more to run and are all
 * validated.
 */
export const VALIDATE_LOAD_EVERY = Math.max(1, Number(process.env.FLOE_FUZZ_VALIDATE_EVERY ?? 3));

/**
 * Whether `runLoad` validates this sequence: by a hash of its text, so a replay (and each shrink
 * step, for its own text) decides the same way every time.
 */
export function validatesLoad(lines: readonly FuzzLine[]): boolean {
  let h = 0x811c9dc5; // FNV-1a over the UTF-16 code units
  for (const l of lines)
    for (let i = 0; i < l.text.length; i++) h = Math.imul(h ^ l.text.charCodeAt(i), 0x01000193);
  return (h >>> 0) % VALIDATE_LOAD_EVERY === 0;
}

// ---------------------------------------------------------------------------------------------
// Checking

/** Every way the outcome breaks the properties (empty: all hold). */
export function violations(
  lines: readonly FuzzLine[],
  out: Outcome,
  opts: { readonly allowGuards?: boolean } = {},
): string[] {
  const v: string[] = [
    ...out.failures.map((f) => `table-level failure: ${f}`),
    ...out.readerDiffs.map((d) => `readers disagree: ${d}`),
    ...out.invalid.map((p) => `invalid Iceberg table: ${p}`),
  ];
  const fids = new Set(lines.map((l) => l.fid));
  for (const fid of out.rows.keys()) if (!fids.has(fid)) v.push(`a row with fid ${fid} that was never sent`);
  for (const fid of out.dead.keys())
    if (!fids.has(fid)) v.push(`a dead letter for fid ${fid} that was never sent`);
  for (const line of lines) {
    const rows = out.rows.get(line.fid) ?? [];
    const dead = out.dead.get(line.fid) ?? [];
    const at = `line ${line.fid} ${short(line.text)}`;
    if (rows.length + dead.length !== 1) {
      v.push(
        `${at}: ${rows.length} rows and ${dead.length} dead letters (${dead.map((d) => d.reason).join(', ')}), want exactly one of either`,
      );
      continue;
    }
    if (line.kind === 'garbage') {
      if (dead[0]?.reason !== 'malformed-json')
        v.push(`${at}: a malformed line must be a malformed-json dead letter`);
      continue;
    }
    const table = tableOf(line.record);
    if (rows.length === 1) {
      const got = rows[0]!;
      if (got.table !== table) v.push(`${at}: landed in ${got.table}, routes to ${table}`);
      const fields = out.schemas.get(got.table) ?? [];
      const want = rowOf(line.record, fields);
      if (want instanceof NoFit)
        v.push(`${at}: landed, but cannot be held exactly by its table: ${want.why}`);
      else if (!canonEqual(want, got.row))
        v.push(`${at}: read back ${showCanon(got.row)}, want ${showCanon(want)}`);
      continue;
    }
    const d = dead[0]!;
    if (d.reason === 'write-failed') {
      v.push(`${at}: write-failed (an unforeseen error, isolated by the safety net): ${d.detail}`);
      continue;
    }
    if (opts.allowGuards && d.reason.startsWith('guard-')) continue;
    if (d.reason === 'malformed-json' && hasLoneSurrogate(line.record)) continue;
    if (d.reason !== 'type-conflict' && d.reason !== 'invalid-value') {
      v.push(`${at}: dead letter '${d.reason}' (${d.detail}) has no cause in the record`);
      continue;
    }
    const fields = out.schemas.get(table);
    // Strict: a value-less `{}` or `[]` whose column cannot hold it also justifies refusing.
    const why = fields ? rowOf(line.record, fields, true) : undefined;
    const justified = why instanceof NoFit || selfConflict(line.record) !== undefined;
    if (!justified)
      v.push(`${at}: dead-lettered (${d.reason}: ${d.detail}) though its table holds it exactly`);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------

function emptyOutcome(): Outcome {
  return {
    rows: new Map(),
    dead: new Map(),
    schemas: new Map(),
    failures: [],
    readerDiffs: [],
    invalid: [],
  };
}

function addDead(out: Outcome, fid: number, reason: string, detail: string): void {
  const list = out.dead.get(fid) ?? [];
  list.push({ reason, detail });
  out.dead.set(fid, list);
}

/** Load dead letters carry 1-based line numbers; fids are line numbers too. */
function fidOfLine(lines: readonly FuzzLine[], line: number): number {
  return lines[line - 1]?.fid ?? -1;
}

function short(s: string): string {
  return s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s;
}

function errText(e: unknown): string {
  return e instanceof Error
    ? `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}`
    : String(e);
}

/** What a fuzz run saw, so a test can show its property was not vacuous. */
export class FuzzStats {
  records = 0;
  landed = 0;
  readonly deadByReason = new Map<string, number>();
  tables = 0;

  add(lines: readonly FuzzLine[], out: Outcome): void {
    this.records += lines.length;
    for (const rows of out.rows.values()) this.landed += rows.length;
    for (const ds of out.dead.values())
      for (const d of ds) this.deadByReason.set(d.reason, (this.deadByReason.get(d.reason) ?? 0) + 1);
    this.tables += out.schemas.size;
  }

  get dead(): number {
    return [...this.deadByReason.values()].reduce((a, b) => a + b, 0);
  }

  toString(): string {
    return `${this.records} records: ${this.landed} landed in ${this.tables} tables, ${this.dead} dead letters (${[...this.deadByReason].map(([r, n]) => `${r} ${n}`).join(', ')})`;
  }
}
