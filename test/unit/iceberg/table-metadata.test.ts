import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FloeError, isFloeError } from '../../../lambdas/src/errors.ts';
import { parseJson, stringifyJson } from '../../../lambdas/src/iceberg/json.ts';
import {
  currentSchema,
  currentSnapshot,
  defaultSpec,
  parseTableMetadata,
  schemaById,
  serializeTableMetadata,
  snapshotAncestors,
  snapshotById,
  specById,
} from '../../../lambdas/src/iceberg/table-metadata.ts';
import { FIXTURES_ROOT } from '../../helpers/fixture-root.ts';

const ROOT = FIXTURES_ROOT;
const EXAMPLES = join(ROOT, 'metadata-json-examples');

/** The files metadata-json-examples/README.md lists as rejected (Java or iceberg-rust). */
const INVALID: Record<string, RegExp> = {
  'apache-iceberg-core/TableMetadataUnsupportedVersion.json': /unsupported format-version 42/,
  'apache-iceberg-core/TableMetadataV1MissingSchemaType.json': /"type": "struct"/,
  'apache-iceberg-core/TableMetadataV2CurrentSchemaNotFound.json': /current-schema-id 2 not found/,
  'apache-iceberg-core/TableMetadataV2MissingLastPartitionId.json': /'last-partition-id'/,
  'apache-iceberg-core/TableMetadataV2MissingPartitionSpecs.json': /'partition-specs'/,
  'apache-iceberg-core/TableMetadataV2MissingSchemas.json': /'schemas'/,
  'apache-iceberg-core/TableMetadataV2MissingSortOrder.json': /'sort-orders'/,
  'iceberg-rust/TableMetadataV1NoValidSchema.json': /'current-schema-id'/,
  'iceberg-rust/TableMetadataV1PartitionSpecsWithoutDefaultId.json': /'default-spec-id'/,
};
/** iceberg-rust test templates: `{{ placeholders }}` stand for values, not real metadata. */
const TEMPLATES = new Set([
  'iceberg-rust/example_empty_table_metadata_v2.json',
  'iceberg-rust/example_table_metadata_v2_partition_evolution.json',
]);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : n.endsWith('.json') ? [p] : [];
  });
}

const allFiles = walk(ROOT).sort();
const validFiles = allFiles.filter((f) => {
  const rel = relative(EXAMPLES, f);
  return !(rel in INVALID) && !TEMPLATES.has(rel);
});

describe('parseTableMetadata on every fixture', () => {
  it('finds the fixtures (and every listed invalid/template file exists)', () => {
    expect(allFiles.length).toBeGreaterThan(50);
    for (const rel of [...Object.keys(INVALID), ...TEMPLATES])
      expect(allFiles).toContain(join(EXAMPLES, rel));
  });

  it.each(Object.entries(INVALID))('rejects %s', (rel, message) => {
    let err: unknown;
    try {
      parseTableMetadata(readFileSync(join(EXAMPLES, rel), 'utf8'), rel);
    } catch (e) {
      err = e;
    }
    expect(isFloeError(err, 'DataInvalid')).toBe(true);
    expect((err as FloeError).message).toMatch(message);
    expect((err as FloeError).message).toContain(rel);
  });

  it.each(validFiles.map((f) => [relative(ROOT, f), f]))('accepts and round-trips %s', (_rel, file) => {
    const text = readFileSync(file, 'utf8');
    const m = parseTableMetadata(text);
    const raw = parseJson(text) as Record<string, unknown>;
    expect(m['format-version']).toBe(Number(raw['format-version']));
    expect(currentSchema(m).schemaId).toBe(m['current-schema-id']);
    expect(m['last-updated-ms']).toBe(BigInt(raw['last-updated-ms'] as number));
    // Every snapshot id survives exactly (they exceed 2^53).
    const rawIds = ((raw.snapshots as Record<string, unknown>[] | undefined) ?? []).map((s) =>
      BigInt(s['snapshot-id'] as number | bigint),
    );
    expect(m.snapshots.map((s) => s['snapshot-id'])).toEqual(rawIds);
    for (const pretty of [2, 0]) {
      const text2 = serializeTableMetadata(m, pretty);
      const m2 = parseTableMetadata(text2);
      expect(m2).toEqual(m);
      expect(serializeTableMetadata(m2, pretty)).toBe(text2);
    }
  });
});

describe('parseTableMetadata normalisation', () => {
  const v2Valid = readFileSync(join(EXAMPLES, 'apache-iceberg-core/TableMetadataV2Valid.json'), 'utf8');

  it('keeps 64-bit ids exact through parse → serialise → parse', () => {
    const text = readFileSync(join(ROOT, 'duckdb-equality-deletes/metadata/v3.metadata.json'), 'utf8');
    expect(text).toContain('7342794868382145167');
    const m = parseTableMetadata(text);
    expect(m['current-snapshot-id']).toBe(7342794868382145167n);
    expect(m.refs.main?.['snapshot-id']).toBe(7342794868382145167n);
    const out = serializeTableMetadata(m);
    expect(out).toContain('"current-snapshot-id": 7342794868382145167');
    expect(parseTableMetadata(out)['current-snapshot-id']).toBe(7342794868382145167n);
  });

  it('implies refs.main from current-snapshot-id when refs are absent', () => {
    const m = parseTableMetadata(v2Valid);
    expect(m.refs).toEqual({ main: { 'snapshot-id': 3055729675574597004n, type: 'branch' } });
    expect(currentSnapshot(m)?.['manifest-list']).toBe('s3://a/b/2.avro');
    expect(snapshotAncestors(m, 3055729675574597004n).map((s) => s['snapshot-id'])).toEqual([
      3055729675574597004n,
      3051729675574597004n,
    ]);
    expect(snapshotById(m, 1n)).toBeUndefined();
    expect(schemaById(m, 0)?.fields).toHaveLength(1);
    expect(defaultSpec(m).fields[0]?.transform).toBe('identity');
    expect(() => specById(m, 7)).toThrow(/partition spec 7 not found/);
  });

  it.each([
    ['-1', '-1'],
    ['null', 'null'],
    ['absent', undefined],
  ])('treats current-snapshot-id %s as no snapshot', (_name, value) => {
    const j = JSON.parse(
      readFileSync(join(EXAMPLES, 'apache-iceberg-core/TableMetadataV2ValidMinimal.json'), 'utf8'),
    );
    if (value !== undefined) j['current-snapshot-id'] = JSON.parse(value);
    const m = parseTableMetadata(JSON.stringify(j));
    expect(m['current-snapshot-id']).toBeUndefined();
    expect(currentSnapshot(m)).toBeUndefined();
    expect(m.refs).toEqual({});
  });

  it('reads v1 with deprecated schema / partition-spec and inline manifests', () => {
    const m = parseTableMetadata(
      readFileSync(join(ROOT, 'duckdb-v1-legacy-manifests-field/metadata/v2.metadata.json'), 'utf8'),
    );
    expect(m['format-version']).toBe(1);
    expect(m['last-sequence-number']).toBe(0n);
    expect(m['partition-specs']).toEqual([
      {
        'spec-id': 0,
        fields: [{ name: 'category', transform: 'identity', 'source-id': 2, 'field-id': 1000 }],
      },
    ]);
    expect(m['sort-orders']).toEqual([{ 'order-id': 0, fields: [] }]);
    expect(m.snapshots[0]?.manifests).toHaveLength(1);
    expect(m.snapshots[0]?.['sequence-number']).toBeUndefined();
    const out = JSON.parse(serializeTableMetadata(m));
    expect(out.schema.fields).toHaveLength(3);
    expect(out['partition-spec']).toHaveLength(1);
    expect(out['last-sequence-number']).toBeUndefined();
  });

  it('keeps v3 fields: next-row-id, encryption keys, snapshot key-id, field defaults', () => {
    const enc = parseTableMetadata(
      readFileSync(join(EXAMPLES, 'iceberg-rust/TableMetadataV3ValidEncryption.json'), 'utf8'),
    );
    expect(enc['next-row-id']).toBe(0n);
    expect(enc['encryption-keys']).toHaveLength(2);
    expect(enc.snapshots[0]?.['key-id']).toBe('1fb95f04-7f98-4b1f-a08f-e810cfb907ff');
    const min = parseTableMetadata(
      readFileSync(join(EXAMPLES, 'apache-iceberg-core/TableMetadataV3ValidMinimal.json'), 'utf8'),
    );
    expect(currentSchema(min).fields[0]?.initialDefault).toBe(1);
    const out = JSON.parse(serializeTableMetadata(min));
    expect(out['current-snapshot-id']).toBeNull();
    expect(out['next-row-id']).toBe(0);
  });

  it('rejects inconsistent refs, dangling current snapshots, future sequence numbers and unordered logs', () => {
    const base = parseJson(v2Valid) as Record<string, unknown>;
    const cases: Array<[string, (j: Record<string, unknown>) => void, RegExp]> = [
      [
        'main mismatch',
        (j) => (j.refs = { main: { 'snapshot-id': 3051729675574597004n, type: 'branch' } }),
        /does not match refs.main/,
      ],
      ['unknown current', (j) => (j['current-snapshot-id'] = 42), /current-snapshot-id 42 not found/],
      ['seq > last', (j) => (j['last-sequence-number'] = 0), /sequence-number 1 > last-sequence-number 0/],
      [
        'unordered log',
        (j) =>
          (j['snapshot-log'] = [
            { 'timestamp-ms': 1555100955770, 'snapshot-id': 1 },
            { 'timestamp-ms': 1515100955770, 'snapshot-id': 1 },
          ]),
        /snapshot-log is not time-ordered/,
      ],
      ['v2 without uuid', (j) => delete j['table-uuid'], /'table-uuid'/],
      ['v3 without next-row-id', (j) => (j['format-version'] = 3), /'next-row-id'/],
      [
        'bad ref type',
        (j) => (j.refs = { main: { 'snapshot-id': 3055729675574597004n, type: 'trunk' } }),
        /"branch" or "tag"/,
      ],
    ];
    for (const [name, mutate, message] of cases) {
      const j = structuredClone(base);
      mutate(j);
      expect(() => parseTableMetadata(stringifyJson(j)), name).toThrow(message);
    }
  });
});

describe('serializeTableMetadata', () => {
  it("writes Java's key order and -1 for a v2 table without a snapshot", () => {
    const m = parseTableMetadata(
      readFileSync(join(EXAMPLES, 'apache-iceberg-core/TableMetadataV2ValidMinimal.json'), 'utf8'),
    );
    const keys = Object.keys(JSON.parse(serializeTableMetadata(m)));
    expect(keys).toEqual([
      'format-version',
      'table-uuid',
      'location',
      'last-sequence-number',
      'last-updated-ms',
      'last-column-id',
      'current-schema-id',
      'schemas',
      'default-spec-id',
      'partition-specs',
      'last-partition-id',
      'default-sort-order-id',
      'sort-orders',
      'properties',
      'current-snapshot-id',
      'refs',
      'snapshots',
      'statistics',
      'partition-statistics',
      'snapshot-log',
      'metadata-log',
    ]);
    expect(JSON.parse(serializeTableMetadata(m))['current-snapshot-id']).toBe(-1);
    expect(serializeTableMetadata(m, 0)).not.toContain('\n');
  });

  it('writes snapshot keys in Java order with operation first in the summary', () => {
    const m = parseTableMetadata(
      readFileSync(
        join(ROOT, 'duckdb-v1-pyiceberg-merch/metadata/00004-v3-upgraded-v1-null-counts.metadata.json'),
        'utf8',
      ),
    );
    const out = JSON.parse(serializeTableMetadata(m));
    expect(Object.keys(out.snapshots[1])).toEqual([
      'sequence-number',
      'snapshot-id',
      'parent-snapshot-id',
      'timestamp-ms',
      'summary',
      'manifest-list',
      'schema-id',
    ]);
    expect(Object.keys(out.snapshots[1].summary)[0]).toBe('operation');
    expect(Object.keys(out).indexOf('next-row-id')).toBe(Object.keys(out).indexOf('current-snapshot-id') + 1);
  });
});

describe('serializeTableMetadata: snapshot texts written once and reused', () => {
  it.each([
    ['plain properties', {}],
    ['a property that looks like the snapshots marker', { tricky: '\u0000floe-snapshots' }],
  ])('writes the same bytes as a plain serialisation, at every indent (%s)', async (_what, properties) => {
    const { newTableMetadata, applyUpdates } = await import('../../../lambdas/src/iceberg/metadata/index.ts');
    let m = newTableMetadata({
      location: 's3://b/t',
      schema: { schemaId: 0, fields: [{ id: 1, name: 'x', required: false, type: { kind: 'long' } }] },
      spec: { 'spec-id': 0, fields: [] },
      properties,
      formatVersion: 2,
      tableUuid: '00000000-0000-4000-8000-000000000000',
      nowMs: 1_700_000_000_000,
    });
    for (let i = 1; i <= 3; i++) {
      const snapshot = {
        'snapshot-id': BigInt(i) * 3_000_000_000_000_000_000n,
        'sequence-number': BigInt(i),
        'timestamp-ms': 1_700_000_000_000n + BigInt(i),
        'manifest-list': `s3://b/t/metadata/snap-${i}.avro`,
        summary: { operation: 'append' as const, 'added-records': String(i), odd: '\u0000S1' },
        'schema-id': 0,
      };
      m = applyUpdates(
        m,
        [
          { action: 'add-snapshot', snapshot },
          {
            action: 'set-snapshot-ref',
            'ref-name': 'main',
            type: 'branch',
            'snapshot-id': snapshot['snapshot-id'],
          },
        ],
        { nowMs: 1_700_000_000_000 + i },
      );
    }
    for (const indent of [0, 2, 4]) {
      const text = serializeTableMetadata(m, indent);
      // The lossless parser + writer round trip is the plain serialisation of the same tree.
      expect(text).toBe(stringifyJson(parseJson(text), indent));
      expect(parseTableMetadata(text, 'x').snapshots.map((s) => s['snapshot-id'])).toEqual([
        3_000_000_000_000_000_000n,
        6_000_000_000_000_000_000n,
        9_000_000_000_000_000_000n,
      ]);
      expect(parseTableMetadata(text, 'x').snapshots[0]!.summary.odd).toBe('\u0000S1');
      // Serialising again (the cache warm) gives the same bytes.
      expect(serializeTableMetadata(m, indent)).toBe(text);
    }
  });
});
