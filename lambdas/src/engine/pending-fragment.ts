/**
 * Pending fragments: records the ingest could not write as data files of their table because the
 * table must first be created or evolved (new column, wider type, new partition field). Only the
 * committer changes tables, so the ingest keeps these records, and the committer, under the table's
 * lease, evolves the table and writes them with the evolved field ids.
 *
 * A fragment holds the records' original bytes rather than rows in a provisional schema: rewriting
 * then applies the evolved schema's exact conversions (a value fitted to a timestamp, an int widened
 * to long) from the source, and a record that no longer fits is dead-lettered with its original
 * bytes and stream position. Format: gzip of JSON lines, a header line then one line per record.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { ErrorKind, FloeError } from '../errors.ts';
import type { ChangeOp, UpsertSpec } from '../records/change-event.ts';
import type { DeclaredTypes } from '../records/connect-schema.ts';

export interface FragmentHeader {
  readonly table: string;
  readonly shardId: string;
  /**
   * A table its data declares an upsert table (DynamoDB changes, config.ts `changeTableSpec`):
   * the spec, so the committer knows it without the ingest's config having named it.
   */
  readonly upsert?: UpsertSpec;
  /** Column types the records' own schemas declared (Debezium with schemas, config.ts `declareTableTypes`). */
  readonly types?: DeclaredTypes;
}

export interface FragmentRecord {
  readonly sequenceNumber: string;
  readonly partitionKey: string;
  readonly arrivalMs: number;
  /** The record's bytes as they came from the stream. */
  readonly data: Uint8Array;
  /** JSON records whose field lists changed them: the record to write, as JSON text. */
  readonly value?: string;
  /** Upsert tables: what the record does to its key's row. */
  readonly op?: ChangeOp;
  /** Versioned changes (DynamoDB): the change's version; the newest of a key wins. */
  readonly version?: bigint;
}

const FORMAT = 'floe-pending-fragment';

export function encodeFragment(header: FragmentHeader, records: readonly FragmentRecord[]): Uint8Array {
  const lines = [
    JSON.stringify({
      format: FORMAT,
      version: 1,
      table: header.table,
      shardId: header.shardId,
      ...(header.upsert ? { upsert: header.upsert } : {}),
      ...(header.types ? { types: header.types } : {}),
    }),
  ];
  for (const r of records) {
    lines.push(
      JSON.stringify({
        s: r.sequenceNumber,
        k: r.partitionKey,
        t: r.arrivalMs,
        d: Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength).toString('base64'),
        ...(r.value === undefined ? {} : { v: r.value }),
        ...(r.op === undefined ? {} : { o: r.op }),
        ...(r.version === undefined ? {} : { n: r.version.toString() }),
      }),
    );
  }
  return new Uint8Array(gzipSync(`${lines.join('\n')}\n`, { level: 1 }));
}

export function decodeFragment(
  bytes: Uint8Array,
  where: string,
): { header: FragmentHeader; records: FragmentRecord[] } {
  let text: string;
  try {
    text = gunzipSync(bytes).toString('utf8');
  } catch (e) {
    throw bad(where, `not gzip (${(e as Error).message})`);
  }
  const lines = text.split('\n').filter((l) => l !== '');
  const head = (parse(lines[0] ?? '', where) ?? {}) as {
    format?: unknown;
    version?: unknown;
    table?: unknown;
    shardId?: unknown;
    upsert?: unknown;
    types?: unknown;
  };
  if (
    head.format !== FORMAT ||
    head.version !== 1 ||
    typeof head.table !== 'string' ||
    typeof head.shardId !== 'string'
  ) {
    throw bad(where, 'missing or unknown header');
  }
  const records = lines.slice(1).map((l, i): FragmentRecord => {
    const o = (parse(l, where) ?? {}) as {
      s?: unknown;
      k?: unknown;
      t?: unknown;
      d?: unknown;
      v?: unknown;
      o?: unknown;
      n?: unknown;
    };
    if (
      typeof o.s !== 'string' ||
      typeof o.k !== 'string' ||
      typeof o.t !== 'number' ||
      typeof o.d !== 'string' ||
      (o.o !== undefined && o.o !== 'upsert' && o.o !== 'delete') ||
      (o.n !== undefined && (typeof o.n !== 'string' || !/^\d+$/.test(o.n)))
    ) {
      throw bad(where, `record ${i + 1} is malformed`);
    }
    return {
      sequenceNumber: o.s,
      partitionKey: o.k,
      arrivalMs: o.t,
      data: new Uint8Array(Buffer.from(o.d, 'base64')),
      ...(typeof o.v === 'string' ? { value: o.v } : {}),
      ...(o.o === 'upsert' || o.o === 'delete' ? { op: o.o } : {}),
      ...(typeof o.n === 'string' ? { version: BigInt(o.n) } : {}),
    };
  });
  const upsert = upsertSpecOf(head.upsert);
  const types = typesOf(head.types);
  return {
    header: {
      table: head.table,
      shardId: head.shardId,
      ...(upsert ? { upsert } : {}),
      ...(types ? { types } : {}),
    },
    records,
  };
}

function typesOf(v: unknown): DeclaredTypes | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as { hints?: unknown; required?: unknown };
  if (typeof o.hints !== 'object' || o.hints === null) return undefined;
  // Without a prototype: a column named `__proto__` keeps its entry.
  const hints: Record<string, string> = Object.create(null);
  for (const [k, t] of Object.entries(o.hints)) if (typeof t === 'string') hints[k] = t;
  if (typeof o.required !== 'object' || o.required === null) return { hints };
  const required: Record<string, boolean> = Object.create(null);
  for (const [k, r] of Object.entries(o.required)) if (typeof r === 'boolean') required[k] = r;
  return { hints, required };
}

function upsertSpecOf(v: unknown): UpsertSpec | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as { key?: unknown; envelope?: unknown };
  if (!Array.isArray(o.key) || o.key.length === 0 || !o.key.every((k) => typeof k === 'string'))
    return undefined;
  return { key: o.key as string[], ...(o.envelope === 'dynamodb' ? { envelope: 'dynamodb' as const } : {}) };
}

function parse(line: string, where: string): unknown {
  try {
    return JSON.parse(line);
  } catch (e) {
    throw bad(where, `not JSON lines (${(e as Error).message})`);
  }
}

function bad(where: string, why: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `pending fragment ${where}: ${why}`, { context: { where } });
}
