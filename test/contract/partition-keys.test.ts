/**
 * Object names built from partition paths (Java's `partitionToPath` escaping, overlong segments
 * shortened) are storable and retrievable in every object store: put, get, list, delete round-trip
 * on the local disk (file:// and a mapped http:// prefix) and on S3 (s3rver, real SDK requests).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { fileUri, LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import type { PartitionSpec } from '../../lambdas/src/iceberg/partition-spec.ts';
import { partitionPath, partitionTuple } from '../../lambdas/src/iceberg/partitioning.ts';
import type { Schema } from '../../lambdas/src/iceberg/schema.ts';
import { field, T } from '../../lambdas/src/iceberg/types.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';
import { startS3rver } from './object-store.contract.ts';

/** Partition values of every awkward kind (the empty string and null included). */
const AWKWARD_VALUES: readonly (string | null)[] = [
  'eu/west',
  '/../../etc/passwd',
  'a b',
  'a+b',
  '100%',
  '%2F',
  'k=v&x=y',
  'what?',
  '#tag',
  'back\\slash',
  'tab\tnew\nline\u0000nul\u0001',
  'é ü',
  '東京',
  '😀🎉',
  '',
  null,
  'null',
  '..',
  'x'.repeat(1000),
  `${'x'.repeat(999)}y`,
  '😀'.repeat(1000),
];

const schema: Schema = { schemaId: 0, fields: [field(1, 's', T.string)] };
const spec: PartitionSpec = {
  'spec-id': 1,
  fields: [
    { 'source-id': 1, 'field-id': 1000, name: 's', transform: 'identity' },
    { 'source-id': 1, 'field-id': 1001, name: 's_trunc', transform: 'truncate[3]' },
    { 'source-id': 1, 'field-id': 1002, name: 's_bucket', transform: 'bucket[8]' },
  ],
};

/** Data-file names as `putDataFile` builds them, one per awkward value. */
function dataFileNames(): string[] {
  return AWKWARD_VALUES.map(
    (v, i) =>
      `t/data/${partitionPath(spec, schema, partitionTuple(spec, schema, { s: v }))}/0000${i}-f.parquet`,
  );
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * Writes one object per name (its content is its own URI), then checks get, list and delete. With
 * `exactListing`, `list` returns exactly the URIs written (S3 keys are the raw text).
 */
function partitionKeySuite(open: () => Promise<{ store: ObjectStore; root: string }>, exactListing: boolean) {
  it('puts, gets, lists and deletes every escaped partition path', async () => {
    const { store, root } = await open();
    const written = dataFileNames().map((n) => `${root}/${n}`);
    expect(new Set(written).size).toBe(written.length);
    for (const u of written) await store.put(u, u);
    for (const u of written) expect(text(await store.get(u))).toBe(u);

    const listed = await store.list(`${root}/t/data`);
    expect(listed).toHaveLength(written.length);
    if (exactListing) expect(listed).toEqual([...written].sort());
    // Every listed URI names one written object, each exactly once.
    const contents = await Promise.all(listed.map(async (u) => text(await store.get(u))));
    expect([...contents].sort()).toEqual([...written].sort());

    // Delete half through listed URIs and half through written ones: nothing remains.
    const listedFor = new Map(contents.map((c, i) => [c, listed[i]!]));
    for (const [i, u] of written.entries()) await store.delete(i % 2 === 0 ? listedFor.get(u)! : u);
    for (const u of written) expect(await store.exists(u)).toBe(false);
    expect(await store.list(`${root}/t/data`)).toEqual([]);
  });
}

describe('partition paths as object names', () => {
  it('have no segment over the file-name limit', () => {
    for (const n of dataFileNames()) {
      for (const seg of n.split('/')) expect(Buffer.byteLength(seg)).toBeLessThanOrEqual(255); // NAME_MAX
    }
  });
});

describe('LocalObjectStore (file://): escaped partition paths', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'floe-pkeys-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  partitionKeySuite(async () => ({ store: new LocalObjectStore(), root: fileUri(dir) }), false);
});

describe('LocalObjectStore (mapped http:// prefix): escaped partition paths', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'floe-pkeys-http-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const prefix = 'http://127.0.0.1:9/wh';
  partitionKeySuite(async () => ({ store: new LocalObjectStore([{ prefix, dir }]), root: prefix }), false);
});

describe('S3ObjectStore on s3rver: escaped partition paths', () => {
  let s: Awaited<ReturnType<typeof startS3rver>>;
  beforeAll(async () => {
    s = await startS3rver();
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  partitionKeySuite(async () => ({ store: new S3ObjectStore(s.client), root: 's3://bucket/pkeys' }), true);

  it('stores the escaped text itself as the key (no decoding on the way)', async () => {
    const store = new S3ObjectStore(s.client);
    const key = 'raw/region=eu%2Fwest/s=a+b%2Bc%25%3D/00000-f.parquet';
    await store.put(`s3://bucket/${key}`, 'x');
    const out = await s.client.send(new ListObjectsV2Command({ Bucket: 'bucket', Prefix: 'raw/' }));
    expect(out.Contents?.map((o) => o.Key)).toEqual([key]);
    // A key that differs only by an escape is another object.
    expect(await store.exists('s3://bucket/raw/region=eu/west/s=a+b%2Bc%25%3D/00000-f.parquet')).toBe(false);
    expect(await store.exists('s3://bucket/raw/region=eu%2Fwest/s=a b+c%=/00000-f.parquet')).toBe(false);
  });
});
