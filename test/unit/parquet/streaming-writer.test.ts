import { describe, expect, it } from 'vitest';
import { fromBinary } from '../../../lambdas/src/iceberg/conversions.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { decimal, field, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Row } from '../../../lambdas/src/iceberg/values.ts';
import {
  type DataFileResult,
  readDataFile,
  readFooter,
  writeColumnarDataFile,
  writeDataFile,
} from '../../../lambdas/src/parquet/index.ts';
import { StreamingDataFileWriter } from '../../../lambdas/src/parquet/streaming-writer.ts';
import { getField } from '../../../lambdas/src/parquet/thrift-compact.ts';

const schema: Schema = {
  schemaId: 1,
  fields: [
    field(1, 'id', T.long, true),
    field(2, 'b', T.boolean),
    field(3, 'i', T.int),
    field(4, 'f', T.float),
    field(5, 'd', T.double),
    field(6, 'dec', decimal(18, 2)),
    field(7, 'day', T.date),
    field(8, 'ts', T.timestamptz),
    field(9, 's', T.string),
    field(10, 'u', T.uuid),
    field(11, 'bin', T.binary),
    field(12, 'st', struct([field(13, 'a', T.int), field(14, 'name', T.string)])),
    field(15, 'tags', list(16, T.string)),
    field(17, 'm', map(18, T.string, 19, T.long)),
    field(20, 'none', T.string),
  ],
};

const uuid = (k: number): string => `${k.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;

/** Row `k` of batch `batch`: every batch has different bounds, so a wrong merge shows. */
function row(batch: number, k: number): Row {
  const v = batch * 1000 + k;
  return {
    id: BigInt(v),
    b: batch === 1 ? true : k % 2 === 0,
    i: k % 5 === 0 ? null : batch === 2 ? -v : v,
    f: batch === 0 && k === 0 ? 0 : batch === 2 && k === 1 ? -0 : k * 0.5 + batch,
    d: k % 7 === 3 ? Number.NaN : v / 3,
    dec: BigInt(v * 100 - 50_000),
    day: 19_000 + v,
    ts: 1_700_000_000_000_000n + BigInt(v) * (batch === 1 ? -1n : 1n),
    s: `${String.fromCharCode(0x61 + ((batch * 7 + k) % 26))}-${v}`,
    u: uuid(batch === 2 ? 0xffff_0000 + k : v),
    bin: Uint8Array.of(batch, k & 0xff),
    st: k % 4 === 0 ? null : { a: v, name: k % 3 === 0 ? null : `n${v}` },
    tags: k % 3 === 0 ? null : k % 3 === 1 ? [] : [`t${v}`, null],
    m: k % 2 === 0 ? new Map([[`k${v}`, BigInt(v)]]) : null,
    none: null,
  };
}

/** A batch in which every optional column is null. */
function nullRow(k: number): Row {
  return { id: BigInt(5000 + k) };
}

async function stream(batches: readonly (readonly Row[])[], rowGroupRows?: number): Promise<DataFileResult> {
  const w = new StreamingDataFileWriter(schema, rowGroupRows === undefined ? {} : { rowGroupRows });
  for (const b of batches) await w.add(b);
  expect(w.recordCount).toBe(batches.reduce((n, b) => n + b.length, 0));
  return w.finish();
}

function batchesOf(sizes: readonly number[]): Row[][] {
  return sizes.map((n, batch) => Array.from({ length: n }, (_, k) => row(batch, k)));
}

const normalize = (rows: Row[]) =>
  JSON.stringify(rows, (_k, v) =>
    typeof v === 'bigint'
      ? `${v}n`
      : v instanceof Map
        ? [...v]
        : v instanceof Uint8Array
          ? [...v]
          : typeof v === 'number' && Number.isNaN(v)
            ? 'NaN'
            : Object.is(v, -0)
              ? '-0'
              : v,
  );

function expectSameMetrics(a: DataFileResult, b: DataFileResult): void {
  expect(a.recordCount).toBe(b.recordCount);
  expect(a.metrics.valueCounts).toEqual(b.metrics.valueCounts);
  expect(a.metrics.nullValueCounts).toEqual(b.metrics.nullValueCounts);
  expect(a.metrics.nanValueCounts).toEqual(b.metrics.nanValueCounts);
  expect(a.metrics.lowerBounds).toEqual(b.metrics.lowerBounds);
  expect(a.metrics.upperBounds).toEqual(b.metrics.upperBounds);
  expect([...a.metrics.columnSizes.keys()]).toEqual([...b.metrics.columnSizes.keys()]);
  expect(a.metrics.splitOffsets.length).toBe(b.metrics.splitOffsets.length);
}

describe('StreamingDataFileWriter', () => {
  it('writes the rows of several add() calls as writeDataFile writes them all at once', async () => {
    const batches = batchesOf([40, 25, 60]);
    const all = batches.flat();
    const streamed = await stream(batches);
    const whole = writeDataFile(schema, all);
    expect(normalize(readDataFile(streamed.bytes, schema))).toBe(
      normalize(readDataFile(whole.bytes, schema)),
    );
    expect(readDataFile(streamed.bytes, schema)).toHaveLength(125);
    expectSameMetrics(streamed, whole);
  });

  it('merges bounds across batches: each extreme comes from a different batch', async () => {
    const streamed = await stream(batchesOf([10, 10, 10]));
    const lower = (id: number, t: Parameters<typeof fromBinary>[0]) =>
      fromBinary(t, streamed.metrics.lowerBounds.get(id)!);
    const upper = (id: number, t: Parameters<typeof fromBinary>[0]) =>
      fromBinary(t, streamed.metrics.upperBounds.get(id)!);
    expect(lower(3, T.int)).toBe(-2009); // batch 2 holds the negative ints
    expect(upper(3, T.int)).toBe(1009); // batch 1 the largest positive
    expect(Object.is(lower(4, T.float), -0)).toBe(true); // -0.0 (batch 2) below +0.0 (batch 0)
    expect(lower(8, T.timestamptz)).toBe(1_700_000_000_000_000n - 1009n); // batch 1 goes backwards
    expect(upper(8, T.timestamptz)).toBe(1_700_000_000_000_000n + 2009n);
    expect(lower(2, T.boolean)).toBe(false);
    expect(upper(2, T.boolean)).toBe(true);
    expect(upper(10, T.uuid)).toBe(uuid(0xffff_0009));
    expect(streamed.metrics.nanValueCounts.get(5)).toBe(3n);
  });

  it('puts the same footer schema (field ids on every column) as writeDataFile', async () => {
    const streamed = await stream(batchesOf([5, 5]));
    const whole = writeDataFile(schema, batchesOf([5, 5]).flat());
    const schemaOf = (bytes: Uint8Array) => getField(readFooter(bytes), 2);
    expect(schemaOf(streamed.bytes)).toEqual(schemaOf(whole.bytes));
    const ids = (
      schemaOf(streamed.bytes) as { items: { fields: { id: number; value: unknown }[] }[] }
    ).items.flatMap((el) => el.fields.filter((f) => f.id === 9).map((f) => f.value));
    expect(ids.sort((a, b) => Number(a) - Number(b))).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ]);
  });

  it('handles a batch in which every optional column is null', async () => {
    const batches = [
      batchesOf([12])[0]!,
      Array.from({ length: 9 }, (_, k) => nullRow(k)),
      batchesOf([0, 7])[1]!,
    ];
    const streamed = await stream(batches);
    const whole = writeDataFile(schema, batches.flat());
    expect(normalize(readDataFile(streamed.bytes, schema))).toBe(
      normalize(readDataFile(whole.bytes, schema)),
    );
    expectSameMetrics(streamed, whole);
    // A column null in every row has counts but no bounds.
    expect(streamed.metrics.nullValueCounts.get(20)).toBe(28n);
    expect(streamed.metrics.lowerBounds.has(20)).toBe(false);
    // A file of only all-null batches has no bounds either (but the required id has).
    const onlyNulls = await stream([[nullRow(0)], [nullRow(1), nullRow(2)]]);
    expect([...onlyNulls.metrics.lowerBounds.keys()]).toEqual([1]);
    expect(onlyNulls.metrics.nullValueCounts.get(9)).toBe(3n);
  });

  it('writes row groups across batch boundaries, like writeDataFile with the same rowGroupRows', async () => {
    const batches = batchesOf([30, 45, 20]);
    const streamed = await stream(batches, 40);
    const whole = writeDataFile(schema, batches.flat(), { rowGroupRows: 40 });
    expect(streamed.metrics.splitOffsets).toHaveLength(3);
    expectSameMetrics(streamed, whole);
    expect(normalize(readDataFile(streamed.bytes, schema))).toBe(
      normalize(readDataFile(whole.bytes, schema)),
    );
  });

  it('splits a large add() into slices and still writes every row', async () => {
    const big = Array.from({ length: 70_000 }, (_, k) => ({ id: BigInt(k), s: `s${k % 100}`, i: k }));
    const streamed = await stream([big]);
    const back = readDataFile(streamed.bytes, schema);
    expect(back).toHaveLength(70_000);
    expect(back[69_999]).toMatchObject({ id: 69_999n, i: 69_999, s: 's99' });
    expectSameMetrics(streamed, writeDataFile(schema, big));
  });

  it('writes a columnar batch in slices as writeColumnarDataFile writes it at once', async () => {
    // Flat columns only (the columnar writer's reach): longs, doubles with NaN, strings as bytes
    // with nulls, a struct that is sometimes null; more rows than one slice holds.
    const flat: Schema = {
      schemaId: 1,
      fields: [
        field(1, 'id', T.long, true),
        field(2, 'd', T.double),
        field(3, 's', T.string),
        field(4, 'st', struct([field(5, 'a', T.long)])),
      ],
    };
    const n = 150_000;
    const id = new BigInt64Array(n);
    const d = new Float64Array(n);
    const text = new TextEncoder();
    const chunks: Uint8Array[] = [];
    const offsets = new Int32Array(n + 1);
    const sValid = new Uint8Array(n);
    const a = new BigInt64Array(n);
    const stValid = new Uint8Array(n);
    let at = 0;
    for (let k = 0; k < n; k++) {
      id[k] = BigInt(n - k);
      d[k] = k % 1000 === 7 ? Number.NaN : k * 0.25 - 1000;
      sValid[k] = k % 9 === 0 ? 0 : 1;
      const bytes = sValid[k] ? text.encode(`v${(k * 7919) % 100_000}`) : new Uint8Array(0);
      chunks.push(bytes);
      at += bytes.length;
      offsets[k + 1] = at;
      a[k] = BigInt(k % 50);
      stValid[k] = k % 4 === 0 ? 0 : 1;
    }
    const data = new Uint8Array(at);
    let o = 0;
    for (const c of chunks) {
      data.set(c, o);
      o += c.length;
    }
    const batch = {
      rowCount: n,
      leaves: new Map([
        [1, { values: { kind: 'int64' as const, values: id } }],
        [2, { values: { kind: 'float64' as const, values: d } }],
        [3, { values: { kind: 'utf8-bytes' as const, data, offsets }, valid: sValid }],
        [5, { values: { kind: 'int64' as const, values: a } }],
      ]),
      structValid: new Map([[4, stValid]]),
    };
    const w = new StreamingDataFileWriter(flat);
    await w.addColumns(batch);
    const streamed = await w.finish();
    const whole = writeColumnarDataFile(flat, batch);
    expect(streamed.recordCount).toBe(n);
    expect(normalize(readDataFile(streamed.bytes, flat))).toBe(normalize(readDataFile(whole.bytes, flat)));
    expectSameMetrics(streamed, whole);
  });

  it('writes an empty file when no row was added', async () => {
    const w = new StreamingDataFileWriter(schema);
    await w.add([]);
    const f = await w.finish();
    expect(f.recordCount).toBe(0);
    expect(readDataFile(f.bytes, schema)).toEqual([]);
  });

  it('rejects a bad value naming the column, and is unusable afterwards', async () => {
    const w = new StreamingDataFileWriter(schema);
    await w.add(batchesOf([5])[0]!);
    await expect(w.add([{ id: 1n, i: 'nope' }])).rejects.toThrow(/'i'|\bi\b/);
    await expect(w.add([{ id: 2n }])).rejects.toThrow(/after it failed/);
    await expect(w.finish()).rejects.toThrow(/after it failed/);
    // A new writer still works (the aborted stream let go of the shared state).
    const again = await stream(batchesOf([3, 3]));
    expect(again.recordCount).toBe(6);
  });
});
