/**
 * Routing a batch: each record is guarded (its size), taken by the JSON fast path when it can be,
 * else decoded (JSON, or GSR-framed Avro via the schema registry), routed to its table and checked
 * against the table's field lists and rules. What cannot land becomes a dead letter.
 *
 * The loop runs once per record: its steps are plain functions over one `Routing` (no closures
 * per record), and it awaits only the schema registry and the rules (when the config has some).
 */
import {
  type FloeConfig,
  hasDebeziumTables,
  hasRecordRules,
  readerDepthLimit,
  routerFor,
  upsertFor,
} from '../../config.ts';
import { ColumnarTableBatch } from '../../engine/columnar-batch.ts';
import { type DeadLetter, DeadLetterReason } from '../../engine/dead-letters.ts';
import { FastPath } from '../../engine/fast-path.ts';
import { RecordRules, type RuleResult, type TypedRuleResult } from '../../engine/record-rules.ts';
import { changeOfRouted } from '../../engine/routed-change.ts';
import { errorText } from '../../engine/row-files.ts';
import { isTombstoneBytes } from '../../records/change-event.ts';
import {
  type DecodeContext,
  type DecodedAvro,
  type DecodedRecord,
  decodeJsonRecord,
  decodeRecord,
} from '../../records/decode.ts';
import { formatJsonRecord, type JsonObject, type ParseOptions } from '../../records/json-line.ts';
import type { KinesisBatch } from '../../records/kinesis-event.ts';
import { type Consolidator, compileConsolidation } from '../../routing/consolidate.ts';
import type { RouteResult, Router } from '../../routing/index.ts';
import { compileSchemaNameRouter } from '../../routing/route.ts';
import { beyondLimits, routingView } from './avro-routing.ts';
import { type IngestDeps, registryOf } from './deps.ts';
import { letter } from './letters.ts';
import type { Routed, TableWork } from './routed.ts';

/** Routing's state for one batch: what it compiled from the config once, and what it found so far. */
interface Routing extends Routed {
  readonly cfg: FloeConfig;
  readonly router: Router;
  readonly bySchemaName: (schemaName: string) => RouteResult;
  readonly consolidator: Consolidator | undefined;
  /** Field lists and rules (`hasRecordRules`), if the config has any. */
  readonly rules: RecordRules | undefined;
  /** How JSON records are parsed (`format: json`). */
  readonly jsonOptions: ParseOptions;
  /** Whether a Debezium tombstone may arrive (an upsert table reads Debezium envelopes). */
  readonly tombstones: boolean;
  /** How GSR-framed records are decoded (`format: avro-gsr`). */
  readonly decodeContext: DecodeContext;
}

/** A JSON record routed to its table (consolidated first, when a consolidation rule matched). */
interface RoutedJson {
  readonly w: TableWork;
  readonly value: JsonObject;
  /** The value is not the record as it came (write `value`, not the original bytes). */
  readonly transformed: boolean;
  /** Routed as a DynamoDB change record (its table's key is the change's `Keys`). */
  readonly dynamodb?: true;
}

const utf8 = new TextDecoder('utf-8');

/** Decodes, guards, routes and checks every record: per-table work and dead letters. */
export async function routeRecords(deps: IngestDeps, batch: KinesisBatch): Promise<Routed> {
  const r = await startRouting(deps, batch);
  const { rules } = r;
  for (let i = 0; i < batch.records.length; i++) {
    if (takeBytes(r, i)) continue;
    let decoded: DecodedRecord | undefined;
    if (r.cfg.format === 'json') {
      decoded = decodeJson(r, i);
      if (decoded === undefined) continue; // dead-lettered
    } else {
      decoded = await decodeFramed(r, i);
      if (decoded === undefined) break; // the registry is unreachable
    }
    // Rules are awaited only when the config has some (no await per record otherwise).
    if (decoded.kind === 'dead-letter') {
      reject(r, i, decoded.reason as DeadLetter['reason'], decoded.detail);
    } else if (decoded.kind === 'avro') {
      const table = routeAvro(r, i, decoded);
      if (table !== undefined)
        takeAvro(r, i, decoded, table, rules && (await rules.checkTyped(decoded.row, decoded.struct, table)));
    } else {
      const routed = routeJson(r, i, decoded.value as JsonObject);
      const json = routed && changeOf(r, i, routed);
      if (json !== undefined) takeJson(r, i, json, rules && (await rules.check(json.value, json.w.table)));
    }
  }
  for (const table of r.fast?.tables.keys() ?? []) workFor(r, table);
  const { work, fast, dead, deadCounts, failures, noRowChanges } = r;
  return { batch, work, fast, dead, deadCounts, failures, noRowChanges };
}

/** Compiles what routing needs from the config, once per batch. */
async function startRouting(deps: IngestDeps, batch: KinesisBatch): Promise<Routing> {
  const cfg = deps.config;
  const router = routerFor(cfg);
  const bySchemaName = compileSchemaNameRouter(cfg.routing);
  const consolidator = compileConsolidation(cfg.consolidate ?? []);
  const rules = hasRecordRules(cfg) ? await RecordRules.create(cfg, deps.catalog) : undefined;
  const sources = [batch.shardId];
  // A record's bytes are the batch's: the columns note where, and dead letters read them there.
  const resolveRaw = (_source: number, position: number, length: number, seq: number) =>
    batch.records[seq]!.data.subarray(position, position + length);
  const fast =
    cfg.format === 'json' && deps.fastPath !== false
      ? new FastPath({
          config: cfg,
          router,
          ...(rules ? { rules } : {}),
          batchFor: () => new ColumnarTableBatch(sources, resolveRaw),
        })
      : undefined;
  const jsonOptions: ParseOptions = { maxDepth: readerDepthLimit(cfg) };
  return {
    batch,
    work: new Map(),
    fast,
    dead: [],
    deadCounts: {},
    noRowChanges: { count: 0 },
    tombstones: hasDebeziumTables(cfg),
    failures: [],
    cfg,
    router,
    bySchemaName,
    consolidator,
    rules,
    jsonOptions,
    decodeContext: {
      format: cfg.format,
      jsonFallback: cfg.jsonFallback,
      lookupSchema: (id) => registryOf(deps).getSchemaVersion(id),
      json: jsonOptions,
    },
  };
}

export function routeReason(reason: 'no-route' | 'illegal-name' | 'not-allowed'): DeadLetter['reason'] {
  if (reason === 'illegal-name') return DeadLetterReason.IllegalTableName;
  if (reason === 'not-allowed') return DeadLetterReason.TableNotAllowed;
  return DeadLetterReason.NoRoute;
}

/**
 * Handles record `i` from its bytes alone, if it can: true when it is larger than the guard
 * allows (a dead letter) or the fast path scanned it (taken, or a dead letter when its route
 * failed); false when it must be decoded.
 */
function takeBytes(r: Routing, i: number): boolean {
  const data = r.batch.records[i]!.data;
  const limits = r.cfg.limits;
  if (data.length > limits.maxRecordBytes) {
    reject(
      r,
      i,
      DeadLetterReason.GuardMaxRecordBytes,
      `guard maxRecordBytes: record is ${data.length} bytes, limit ${limits.maxRecordBytes}`,
    );
    return true;
  }
  if (r.tombstones && isTombstoneBytes(data)) {
    r.noRowChanges.count++;
    return true;
  }
  if (!r.fast) return false;
  const outcome = r.fast.takeBytes(data, 0, data.length, { seq: i, source: 0, line: i + 1, position: 0 });
  if (outcome === true) return true;
  if (outcome === undefined) return false;
  reject(r, i, outcome.reason, outcome.detail, outcome.table);
  return true;
}

/** Record `i` parsed as JSON; undefined when the reader threw (the record is dead-lettered). */
function decodeJson(r: Routing, i: number): DecodedRecord | undefined {
  try {
    return decodeJsonRecord(r.batch.records[i]!.data, r.jsonOptions);
  } catch (e) {
    // Pure code that threw: a bug, isolated to this record (a retry would fail the same way).
    reject(r, i, DeadLetterReason.WriteFailed, `reading the record: ${errorText(e)}`);
    return undefined;
  }
}

/** Record `i` decoded from its GSR frame; undefined when the registry could not be asked. */
async function decodeFramed(r: Routing, i: number): Promise<DecodedRecord | undefined> {
  const record = r.batch.records[i]!;
  try {
    return await decodeRecord(record.data, r.decodeContext);
  } catch (e) {
    // The registry is unreachable: stage what came before, retry from this record.
    r.failures.push({ table: '(schema registry)', firstSequence: record.sequenceNumber, error: e });
    return undefined;
  }
}

/** The table of an Avro record (by its fields or its schema name); undefined: dead-lettered. */
function routeAvro(r: Routing, i: number, decoded: DecodedAvro): string | undefined {
  const route =
    r.cfg.routing.avroRouteBy === 'fields'
      ? r.router(routingView(decoded.row, r.cfg.routing.routingField))
      : r.bySchemaName(decoded.recordName);
  if (route.ok) return route.table;
  reject(r, i, routeReason(route.reason), route.detail);
  return undefined;
}

/** Adds a routed Avro record to its table: reshaped by the rules (`checked`, if any), within the guards. */
function takeAvro(
  r: Routing,
  i: number,
  decoded: DecodedAvro,
  table: string,
  checked: TypedRuleResult | undefined,
): void {
  let avro = decoded;
  if (upsertFor(r.cfg, table)) {
    const detail = `table '${table}': upsert tables read JSON change events; an Avro record has no operation Floe can read yet`;
    reject(r, i, DeadLetterReason.BadOperation, detail, table);
    return;
  }
  if (checked) {
    if (!checked.ok) {
      reject(r, i, checked.reason, checked.detail, table);
      return;
    }
    avro = { ...decoded, row: checked.row, struct: checked.struct };
  }
  const beyond = beyondLimits(avro, r.cfg.limits);
  if (beyond) {
    reject(r, i, beyond.reason, beyond.detail, table);
    return;
  }
  workFor(r, table).avro.push({ index: i, decoded: avro });
}

/** Routes a JSON record (consolidating it first, if a rule says so); undefined: dead-lettered. */
function routeJson(r: Routing, i: number, value: JsonObject): RoutedJson | undefined {
  let consolidated: ReturnType<Consolidator> | undefined;
  let route: RouteResult;
  try {
    consolidated = r.consolidator?.(value);
    route =
      consolidated?.ok === true
        ? { ok: true, table: consolidated.table, rule: 'consolidated' }
        : consolidated === undefined
          ? r.router(value)
          : { ok: false, reason: 'no-route', detail: consolidated.detail };
  } catch (e) {
    reject(r, i, DeadLetterReason.WriteFailed, `routing the record: ${errorText(e)}`);
    return undefined;
  }
  if (consolidated && !consolidated.ok) {
    reject(r, i, DeadLetterReason.ConsolidationFailed, consolidated.detail, consolidated.table);
    return undefined;
  }
  if (!route.ok) {
    reject(r, i, routeReason(route.reason), route.detail);
    return undefined;
  }
  if (consolidated) return { w: workFor(r, route.table), value: consolidated.value, transformed: true };
  return route.rule === 'dynamodb'
    ? { w: workFor(r, route.table), value, transformed: false, dynamodb: true }
    : { w: workFor(r, route.table), value, transformed: false };
}

/**
 * An upsert table's record read as a change (records/change-event.ts): the row it writes (the key
 * alone for a delete), its operation noted; undefined: dead-lettered (no key, unknown operation).
 */
function changeOf(r: Routing, i: number, json: RoutedJson): RoutedJson | undefined {
  const change = changeOfRouted(r.cfg, json.w.table, json.value, json.dynamodb === true);
  if (!change) return json;
  if (!change.ok) {
    if (change.reason === 'no-row') r.noRowChanges.count++;
    else reject(r, i, change.reason, change.detail, json.w.table);
    return undefined;
  }
  json.w.ops.set(i, change.op);
  if (change.version !== undefined) json.w.versions.set(i, change.version);
  return change.row === json.value ? json : { ...json, value: change.row, transformed: true };
}

/** Adds a routed JSON record to its table, as the rules left it (`checked`, when there are any). */
function takeJson(r: Routing, i: number, json: RoutedJson, checked: RuleResult | undefined): void {
  const { w } = json;
  let { value, transformed } = json;
  if (checked) {
    if (!checked.ok) {
      reject(r, i, checked.reason, checked.detail, w.table);
      return;
    }
    if (checked.value !== value) transformed = true;
    value = checked.value;
  }
  if (transformed) w.transformed.set(i, formatJsonRecord(value));
  w.json.push({
    seq: i,
    source: r.batch.shardId,
    line: i + 1,
    raw: utf8.decode(r.batch.records[i]!.data),
    value,
  });
}

function reject(r: Routing, i: number, reason: DeadLetter['reason'], detail: string, table?: string): void {
  const d = letter(r.batch, i, reason, detail, table);
  r.dead.push(d);
  r.deadCounts[d.reason] = (r.deadCounts[d.reason] ?? 0) + 1;
}

function workFor(r: Routing, table: string): TableWork {
  let w = r.work.get(table);
  if (!w) {
    const rules = r.rules;
    w = {
      table,
      json: [],
      avro: [],
      transformed: new Map(),
      ops: new Map(),
      versions: new Map(),
      ...(rules ? { reshape: (value: JsonObject) => rules.project(value, table) } : {}),
    };
    r.work.set(table, w);
  }
  return w;
}
