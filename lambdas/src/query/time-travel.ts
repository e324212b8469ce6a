/**
 * Choosing the snapshot a query reads (Iceberg time travel), pure:
 * - as of a time: the snapshot that was current then — the last entry of the main branch's history
 *   (`snapshot-log`) with `timestamp-ms` ≤ the time, as Java's `SnapshotUtil.snapshotIdAsOfTime`
 *   and Trino's `FOR TIMESTAMP AS OF` do;
 * - a snapshot id (exact 64-bit, never a JS number) or a branch / tag name.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { Snapshot } from '../iceberg/snapshot.ts';
import { snapshotAncestors, snapshotById, type TableMetadata } from '../iceberg/table-metadata.ts';

export type SnapshotSelector =
  | { readonly kind: 'current' }
  | { readonly kind: 'as-of'; readonly ms: bigint }
  | { readonly kind: 'snapshot-id'; readonly id: bigint }
  | { readonly kind: 'ref'; readonly name: string };

export const CURRENT: SnapshotSelector = { kind: 'current' };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** `--snapshot` value: a snapshot id (digits, exact) or a branch / tag name. */
export function parseSnapshotArg(text: string): SnapshotSelector {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) {
    const id = BigInt(t);
    if (id < INT64_MIN || id > INT64_MAX) {
      throw new FloeError(ErrorKind.DataInvalid, `snapshot id ${t} is not a 64-bit integer`);
    }
    return { kind: 'snapshot-id', id };
  }
  if (t === '') throw new FloeError(ErrorKind.DataInvalid, 'empty snapshot id');
  return { kind: 'ref', name: t };
}

/**
 * The snapshot id `selector` picks in `m`; undefined for `current` (the scan then reads the current
 * snapshot, or nothing when there is none). `table` names the table in errors.
 */
export function selectSnapshot(
  m: TableMetadata,
  selector: SnapshotSelector,
  table: string,
): bigint | undefined {
  switch (selector.kind) {
    case 'current':
      return undefined;
    case 'as-of':
      return snapshotAsOf(m, selector.ms, table);
    case 'snapshot-id':
      if (snapshotById(m, selector.id)) return selector.id;
      throw new FloeError(
        ErrorKind.NotFound,
        `table ${table} has no snapshot ${selector.id}; ${knownSnapshots(m)} (floe snapshots ${table} lists them)`,
        { context: { table, snapshotId: String(selector.id) } },
      );
    case 'ref': {
      const ref = m.refs[selector.name];
      if (ref) return ref['snapshot-id'];
      const names = Object.keys(m.refs);
      throw new FloeError(
        ErrorKind.NotFound,
        `table ${table} has no branch or tag '${selector.name}'${names.length > 0 ? ` (it has ${names.join(', ')})` : ''}; a snapshot id is digits only`,
        { context: { table, ref: selector.name } },
      );
    }
  }
}

/** The snapshot current at `ms` (epoch milliseconds) on the main branch. */
export function snapshotAsOf(m: TableMetadata, ms: bigint, table: string): bigint {
  const history = mainHistory(m);
  let chosen: { readonly 'timestamp-ms': bigint; readonly 'snapshot-id': bigint } | undefined;
  for (const e of history) if (e['timestamp-ms'] <= ms) chosen = e;
  if (!chosen) {
    const first = history[0];
    throw new FloeError(
      ErrorKind.NotFound,
      first === undefined
        ? `table ${table} has no snapshots, so nothing to read as of ${isoMs(ms)}`
        : `table ${table} has no snapshot at or before ${isoMs(ms)}: its first snapshot (${first['snapshot-id']}) was committed at ${isoMs(first['timestamp-ms'])}`,
      { context: { table, asOf: isoMs(ms) } },
    );
  }
  if (!snapshotById(m, chosen['snapshot-id'])) {
    throw new FloeError(
      ErrorKind.NotFound,
      `table ${table}: snapshot ${chosen['snapshot-id']}, current at ${isoMs(ms)}, has expired (its files may be gone)`,
      { context: { table, snapshotId: String(chosen['snapshot-id']) } },
    );
  }
  return chosen['snapshot-id'];
}

/**
 * The main branch's history, oldest first: the `snapshot-log`, or — for writers that keep none — the
 * current snapshot's ancestors by commit time.
 */
export function mainHistory(
  m: TableMetadata,
): readonly { readonly 'timestamp-ms': bigint; readonly 'snapshot-id': bigint }[] {
  if (m['snapshot-log'].length > 0) return m['snapshot-log'];
  const head = m.refs.main?.['snapshot-id'] ?? m['current-snapshot-id'];
  if (head === undefined) return [];
  return snapshotAncestors(m, head)
    .reverse()
    .map((s: Snapshot) => ({ 'timestamp-ms': s['timestamp-ms'], 'snapshot-id': s['snapshot-id'] }));
}

function knownSnapshots(m: TableMetadata): string {
  if (m.snapshots.length === 0) return 'it has none';
  const ids = m.snapshots.map((s) => String(s['snapshot-id']));
  return `its snapshots: ${ids.length > 6 ? `${ids.slice(0, 6).join(', ')} … ${ids.length} in all` : ids.join(', ')}`;
}

export function isoMs(ms: bigint): string {
  return new Date(Number(ms)).toISOString();
}

// ---- reading a point in time ----

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?|[A-Za-z][A-Za-z0-9_+\-/]*)?$/i;

/**
 * Epoch milliseconds of a point in time: ISO 8601 (`2025-03-14T15:00:00Z`, `2025-03-14 16:00+01:00`,
 * `2025-03-14`), Trino's `2025-03-14 15:00:00.123 Europe/Vienna`, or epoch milliseconds (digits).
 * A time without a zone is UTC (the zone `floe` prints times in). Digits past milliseconds are cut.
 */
export function parseTimestampMs(text: string): bigint {
  const t = text.trim();
  if (/^\d+$/.test(t)) return BigInt(t);
  const m = ISO.exec(t);
  if (!m) throw badTime(text);
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  const local = Date.UTC(...fields) + Number(frac.padEnd(3, '0').slice(0, 3));
  const check = new Date(Date.UTC(...fields));
  if (
    check.getUTCFullYear() !== fields[0] ||
    check.getUTCMonth() !== fields[1] ||
    check.getUTCDate() !== fields[2] ||
    check.getUTCHours() !== fields[3] ||
    check.getUTCMinutes() !== fields[4] ||
    check.getUTCSeconds() !== fields[5]
  ) {
    throw badTime(text);
  }
  return BigInt(local - zoneOffsetMs(zone, local, text));
}

/** Offset of `zone` from UTC (ms) at wall-clock time `localMs`. */
function zoneOffsetMs(zone: string | undefined, localMs: number, text: string): number {
  if (zone === undefined || /^(Z|UTC)$/i.test(zone)) return 0;
  const fixed = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (fixed) {
    const minutes = Number(fixed[2]) * 60 + Number(fixed[3] ?? '0');
    return (fixed[1] === '-' ? -1 : 1) * minutes * 60_000;
  }
  // A region name (Europe/Vienna): the offset in force at that wall-clock time, via Intl.
  try {
    return offsetAt(zone, localMs - offsetAt(zone, localMs));
  } catch {
    throw badTime(text, `unknown time zone '${zone}'`);
  }
}

function offsetAt(zone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(utcMs));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

function badTime(text: string, why?: string): FloeError {
  return new FloeError(
    ErrorKind.DataInvalid,
    `cannot read '${text}' as a point in time${why ? ` (${why})` : ''}: use ISO 8601 such as 2025-03-14T15:00:00Z or 2025-03-14 16:00:00+01:00, a date (2025-03-14, midnight UTC), or epoch milliseconds`,
    { context: { value: text } },
  );
}
