import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  type DataFileRows,
  deletedPositions,
  type EqualityDeleteFile,
  liveRows,
  type PositionDeleteFile,
} from '../../../lambdas/src/iceberg/row-deletes.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { field, list, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Row } from '../../../lambdas/src/iceberg/values.ts';

const schema: Schema = {
  schemaId: 1,
  fields: [
    field(1, 'id', T.long),
    field(2, 'name', T.string),
    field(3, 'st', struct([field(4, 'k', T.int)])),
    field(5, 'score', T.double),
    field(6, 'raw', T.binary),
    field(7, 'xs', list(8, T.int)),
  ],
};

const PATH = 's3://b/t/data/f.parquet';
const rows: Row[] = [
  { id: 1n, name: 'a', st: { k: 1 }, score: 0, raw: Uint8Array.of(1) },
  { id: 2n, name: null, st: null, score: -0, raw: Uint8Array.of(2) },
  { id: 3n, name: 'c', st: { k: null }, score: Number.NaN, raw: null },
  { id: null, name: 'd', st: { k: 4 }, score: 1.5, raw: Uint8Array.of(1) },
];
const data = (dataSequenceNumber: bigint): DataFileRows => ({ filePath: PATH, dataSequenceNumber, rows });
const ids = (live: Row[]) => live.map((r) => r.id);

function pos(seq: bigint, ...deletes: [string, bigint][]): PositionDeleteFile {
  return { dataSequenceNumber: seq, deletes: deletes.map(([filePath, p]) => ({ filePath, pos: p })) };
}
function eq(seq: bigint, equalityIds: number[], deleteRows: Row[]): EqualityDeleteFile {
  return { dataSequenceNumber: seq, equalityIds, rows: deleteRows };
}

describe('liveRows: position deletes', () => {
  it('removes the listed positions of this file, keeping file order', () => {
    const live = liveRows(schema, data(5n), { position: [pos(5n, [PATH, 0n], [PATH, 2n])] });
    expect(ids(live)).toEqual([2n, null]);
  });

  it('applies when the delete’s sequence number is ≥ the data file’s, not when it is lower', () => {
    expect(ids(liveRows(schema, data(5n), { position: [pos(6n, [PATH, 1n])] }))).toEqual([1n, 3n, null]);
    expect(ids(liveRows(schema, data(5n), { position: [pos(4n, [PATH, 1n])] }))).toEqual([1n, 2n, 3n, null]);
  });

  it('ignores rows for other files and positions past the end', () => {
    const live = liveRows(schema, data(1n), {
      position: [pos(1n, ['s3://b/t/data/other.parquet', 0n], [`${PATH}x`, 1n], [PATH, 4n], [PATH, -1n])],
    });
    expect(ids(live)).toEqual([1n, 2n, 3n, null]);
  });

  it('deletedPositions unions the applicable files', () => {
    const got = deletedPositions(data(2n), [
      pos(2n, [PATH, 3n]),
      pos(3n, [PATH, 0n], [PATH, 3n]),
      pos(1n, [PATH, 1n]),
    ]);
    expect([...got].sort()).toEqual([0, 3]);
  });
});

describe('liveRows: equality deletes', () => {
  it('applies only when the delete’s sequence number is strictly greater', () => {
    const del = [{ id: 1n }];
    expect(ids(liveRows(schema, data(3n), { equality: [eq(4n, [1], del)] }))).toEqual([2n, 3n, null]);
    expect(ids(liveRows(schema, data(3n), { equality: [eq(3n, [1], del)] }))).toEqual([1n, 2n, 3n, null]);
  });

  it('matches null with null', () => {
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [1], [{ id: null }])] }))).toEqual([
      1n,
      2n,
      3n,
    ]);
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [2], [{ name: null }])] }))).toEqual([
      1n,
      3n,
      null,
    ]);
  });

  it('needs every equality column to match', () => {
    const del = [
      { id: 1n, name: 'x' },
      { id: 3n, name: 'c' },
    ];
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [1, 2], del)] }))).toEqual([1n, 2n, null]);
  });

  it('reads nested columns by id; a null parent struct reads as a null column', () => {
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [4], [{ st: { k: 4 } }])] }))).toEqual([
      1n,
      2n,
      3n,
    ]);
    // Row 2 (st null) and row 3 (st.k null) both have a null st.k.
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [4], [{ st: null }])] }))).toEqual([1n, null]);
  });

  it('compares by value: integers as number or bigint, bytes by content, NaN = NaN, -0 ≠ 0', () => {
    const byNumber = liveRows(schema, data(0n), { equality: [eq(1n, [1], [{ id: 2 }])] });
    expect(ids(byNumber)).toEqual([1n, 3n, null]);
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [6], [{ raw: Uint8Array.of(1) }])] }))).toEqual(
      [2n, 3n],
    );
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [5], [{ score: Number.NaN }])] }))).toEqual([
      1n,
      2n,
      null,
    ]);
    expect(ids(liveRows(schema, data(0n), { equality: [eq(1n, [5], [{ score: 0 }])] }))).toEqual([
      2n,
      3n,
      null,
    ]);
  });

  it('combines position and equality deletes', () => {
    const live = liveRows(schema, data(2n), {
      position: [pos(2n, [PATH, 0n])],
      equality: [eq(3n, [2], [{ name: 'd' }]), eq(2n, [2], [{ name: 'c' }])],
    });
    expect(ids(live)).toEqual([2n, 3n]);
  });

  it('refuses an equality id that is not a primitive column of the schema outside lists and maps', () => {
    for (const id of [99, 3, 8]) {
      let caught: unknown;
      try {
        liveRows(schema, data(0n), { equality: [eq(1n, [id], [])] });
      } catch (e) {
        caught = e;
      }
      expect(isFloeError(caught, ErrorKind.SchemaIncompatible), `id ${id}`).toBe(true);
      expect((caught as Error).message).toContain(`equality field id ${id}`);
    }
  });
});
