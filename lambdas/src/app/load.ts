import { hasRecordRules, readerDepthLimit, tableId, upsertFor } from '../config.ts';
import { FastPath, fastRouting, loadTableColumnar, mergeBySeq, reparse } from '../engine/columnar-stage.ts';
import { type DeadLetter, DeadLetterReason } from '../engine/dead-letters.ts';
import { loadTable } from '../engine/generic-stage.ts';
import type {
  LoadDeps,
  LoadReport,
  LoadSource,
  PendingRecord,
  TableFailure,
  TableLoadResult,
} from '../engine/load-types.ts';
import { RecordRules } from '../engine/record-rules.ts';
import { type ChangeOp, readChange } from '../records/change-event.ts';
import { isTooDeep, JsonNumberText, type JsonValue, parseJsonRecord } from '../records/json-line.ts';
import { invalidUtf8Offset } from '../records/shape-scanner.ts';
import { compileConsolidation } from '../routing/consolidate.ts';
import { compileRouter, type RouteResult } from '../routing/index.ts';

export type {
  LoadDeps,
  LoadProgress,
  LoadReport,
  LoadSource,
  TableFailure,
  TableLoadResult,
} from '../engine/load-types.ts';

const utf8Decoder = new TextDecoder('utf-8');
/** For lines that fail the strict decode: the dead letter keeps a readable copy. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isBlank(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

async function* batchesOf(lines: NonNullable<LoadSource['lines']>): AsyncGenerator<readonly string[]> {
  if (Symbol.iterator in lines) {
    const all = Array.isArray(lines) ? (lines as readonly string[]) : [...(lines as Iterable<string>)];
    yield all;
    return;
  }
  for await (const item of lines) yield typeof item === 'string' ? [item] : item;
}

export async function loadSources(deps: LoadDeps, sources: readonly LoadSource[]): Promise<LoadReport> {
  const byTable = new Map<string, PendingRecord[]>();
  const dead: Record<string, number> = {};
  const reject = async (d: DeadLetter) => {
    dead[d.reason] = (dead[d.reason] ?? 0) + 1;
    await deps.onDeadLetter(d);
  };
  const router = compileRouter(deps.config.routing);
  const consolidator = compileConsolidation(deps.config.consolidate ?? []);
  // Field lists and guards: only the generic path applies them, so fastRouting is false then.
  const rules = hasRecordRules(deps.config) ? await RecordRules.create(deps.config, deps.catalog) : undefined;
  const fast =
    deps.fastPath !== false && fastRouting(deps.config) ? new FastPath(deps.config, router) : undefined;
  let lines = 0;
  const maxBytes = deps.config.limits.maxRecordBytes;
  const readerDepth = readerDepthLimit(deps.config);
  // For the load history: which sources fed each table (tables that grew while a source was read).
  const fedBy = new Map<string, string[]>();
  const tableSizes = (): Map<string, number> => {
    const m = new Map<string, number>();
    for (const [t, r] of byTable) m.set(t, r.length);
    for (const [t, b] of fast?.tables ?? []) m.set(t, (m.get(t) ?? 0) + b.rowCount);
    return m;
  };
  for (const src of sources) {
    const sizesBefore = deps.history ? tableSizes() : undefined;
    let n = 0;
    /**
     * The generic path for one line. An exception nobody foresaw (a bug in parsing, routing or a
     * rule) is isolated to this line: a `write-failed` dead letter, and the load goes on.
     */
    const generic = async (raw: string): Promise<void> => {
      try {
        await genericLine(raw);
      } catch (e) {
        await reject({
          source: src.name,
          line: n,
          reason: DeadLetterReason.WriteFailed,
          detail: `reading the record: ${errText(e)}`,
          raw,
        });
      }
    };
    /** Parse, check, route, keep the record. */
    const genericLine = async (raw: string): Promise<void> => {
      if (raw.trim() === '') return;
      const refuse = (reason: DeadLetter['reason'], detail: string, table?: string) =>
        reject({ source: src.name, line: n, reason, detail, raw, ...(table === undefined ? {} : { table }) });
      let value: JsonValue;
      try {
        value = parseJsonRecord(raw, { maxDepth: readerDepth });
      } catch (e) {
        const deep = isTooDeep(e);
        return refuse(
          deep ? DeadLetterReason.GuardMaxDepth : DeadLetterReason.MalformedJson,
          deep ? `guard maxNestingDepth: record ${errText(e)}` : errText(e),
        );
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        return refuse(DeadLetterReason.NotAnObject, `expected a JSON object, got ${jsonKindOf(value)}`);
      let obj = value as Record<string, JsonValue>;
      const consolidated = consolidator?.(obj);
      if (consolidated && !consolidated.ok)
        return refuse(DeadLetterReason.ConsolidationFailed, consolidated.detail, consolidated.table);
      if (consolidated) obj = consolidated.value;
      const route: RouteResult = consolidated
        ? { ok: true, table: consolidated.table, rule: 'consolidated' }
        : router(obj);
      if (!route.ok) return refuse(routeReason(route), route.detail);
      // Upsert tables: the record is a change; its row (the key alone for a delete) goes on.
      let op: ChangeOp | undefined;
      const upsert = upsertFor(deps.config, route.table);
      if (upsert) {
        const change = readChange(upsert, obj, route.table);
        if (!change.ok) return refuse(change.reason, change.detail, route.table);
        op = change.op;
        obj = change.row;
      }
      if (rules) {
        const checked = await rules.check(obj, route.table);
        if (!checked.ok) return refuse(checked.reason, checked.detail, route.table);
        obj = checked.value;
      }
      let bucket = byTable.get(route.table);
      if (!bucket) {
        bucket = [];
        byTable.set(route.table, bucket);
      }
      bucket.push({ seq: lines, source: src.name, line: n, raw, value: obj, ...(op ? { op } : {}) });
    };
    /** A record over `guards.maxRecordBytes`: refused before any parsing, in constant time. */
    const tooLarge = (bytes: Uint8Array | undefined, size: number): DeadLetter => ({
      source: src.name,
      line: n,
      reason: DeadLetterReason.GuardMaxRecordBytes,
      detail: `guard maxRecordBytes: record is ${size} bytes, limit ${maxBytes}`,
      raw: bytes === undefined ? '' : utf8Decoder.decode(bytes),
    });
    const progress = () => {
      if (n % 50_000 === 0) deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
    };
    if (src.chunks) {
      for await (const chunk of src.chunks) {
        const len = chunk.length;
        let pos = 0;
        while (pos < len) {
          let nl = chunk.indexOf(10, pos);
          if (nl < 0) nl = len;
          const end = nl > pos && chunk[nl - 1] === 13 ? nl - 1 : nl;
          n++;
          lines++;
          progress();
          if (end - pos > maxBytes) {
            await reject(tooLarge(chunk.subarray(pos, end), end - pos));
          } else if (!isBlank(chunk, pos, end)) {
            const route = fast?.takeBytes(chunk, pos, end, lines, src.name, n);
            if (route !== true) {
              const bytes = chunk.subarray(pos, end);
              const raw = decodeLine(bytes);
              if (raw === undefined) {
                await reject({
                  source: src.name,
                  line: n,
                  reason: DeadLetterReason.MalformedJson,
                  detail: `invalid UTF-8 at byte ${invalidUtf8Offset(bytes, 0, bytes.length)}: the line is not UTF-8 text`,
                  raw: utf8Decoder.decode(bytes),
                });
              } else if (route === undefined) await generic(raw);
              else
                await reject({
                  source: src.name,
                  line: n,
                  reason: routeReason(route),
                  detail: route.detail,
                  raw,
                });
            }
          }
          pos = nl + 1;
        }
      }
    } else {
      for await (const batch of batchesOf(src.lines ?? [])) {
        for (const raw of batch) {
          n++;
          lines++;
          progress();
          if (raw.trim() === '') continue;
          const bytes = raw.length * 3 > maxBytes ? Buffer.byteLength(raw) : 0;
          if (bytes > maxBytes) {
            await reject({ ...tooLarge(undefined, bytes), raw });
            continue;
          }
          const route = fast?.take(raw, lines, src.name, n);
          if (route === true) continue;
          if (route !== undefined) {
            await reject({
              source: src.name,
              line: n,
              reason: routeReason(route),
              detail: route.detail,
              raw,
            });
            continue;
          }
          await generic(raw);
        }
      }
    }
    deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
    for (const [t, size] of sizesBefore ? tableSizes() : []) {
      if (size > (sizesBefore!.get(t) ?? 0)) fedBy.set(t, (fedBy.get(t) ?? []).concat(src.name));
    }
  }

  const tables: TableLoadResult[] = [];
  const failures: TableFailure[] = [];
  const names = [...new Set([...byTable.keys(), ...(fast?.tables.keys() ?? [])])].sort();
  for (const table of names) {
    let records = byTable.get(table) ?? [];
    let columnar = fast?.tables.get(table);
    let count = records.length + (columnar?.rowCount ?? 0);
    try {
      const id = tableId(deps.config, table);
      const plan = await deps.history?.planTable(id, fedBy.get(table) ?? []);
      if (plan && plan.skip.size > 0) {
        // Leave out what the table already holds (before parsing); the generic path takes the rest.
        const kept = (r: { readonly source: string }) => !plan.skip.has(r.source);
        const rest = (columnar?.provenance ?? [])
          .filter(kept)
          .map((p) => ({ ...p, value: parseJsonRecord(p.raw) as Record<string, JsonValue> }));
        records = mergeBySeq(records.filter(kept), rest);
        columnar = undefined;
        count = records.length;
        if (count === 0) continue;
      }
      deps.onProgress?.({ kind: 'table-start', table, records: count });
      const tableDeps = plan ? { ...deps, summary: { ...deps.summary, ...plan.summary } } : deps;
      const result =
        (columnar && records.length === 0 ? await loadTableColumnar(tableDeps, id, columnar) : undefined) ??
        (await loadTable(tableDeps, id, mergeBySeq(records, columnar ? reparse(columnar) : []), reject));
      tables.push(result);
      deps.onProgress?.({ kind: 'table-done', table, result });
    } catch (error) {
      // One table's failure (I/O, a conflict budget spent) must not stop the others; its records
      // are not bad input, so they are reported as not loaded rather than dead-lettered.
      failures.push({ table, records: count, error });
      deps.onProgress?.({ kind: 'table-failed', table, error });
    }
  }
  return { lines, rows: tables.reduce((n, t) => n + t.rows, 0), deadLetters: dead, tables, failures };
}

/** The line as text, or undefined when it is not valid UTF-8 (never silently U+FFFD). */
function decodeLine(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function jsonKindOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'bigint' || typeof v === 'number' || v instanceof JsonNumberText) return 'a number';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function routeReason(route: { reason: 'no-route' | 'illegal-name' | 'not-allowed' }): DeadLetter['reason'] {
  if (route.reason === 'illegal-name') return DeadLetterReason.IllegalTableName;
  if (route.reason === 'not-allowed') return DeadLetterReason.TableNotAllowed;
  return DeadLetterReason.NoRoute;
}
