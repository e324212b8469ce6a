import { describe, expect, it } from 'vitest';
import { type FloeError, isFloeError } from '../../../../lambdas/src/errors.ts';
import {
  applyUpdates,
  checkRequirements,
  newTableMetadata,
  type TableRequirement,
  type TableUpdate,
} from '../../../../lambdas/src/iceberg/metadata/index.ts';
import {
  currentSchema,
  parseTableMetadata,
  serializeTableMetadata,
} from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../../../lambdas/src/iceberg/types.ts';
import { EVENT_SCHEMA, LOCATION, newEventTable, snapshot, T0, UUID } from './helpers.ts';

function thrown(f: () => unknown): FloeError {
  try {
    f();
  } catch (e) {
    if (isFloeError(e)) return e;
    throw e;
  }
  throw new Error('expected a FloeError');
}

const append = (id: bigint, seq: bigint, ts: number, parent?: bigint): TableUpdate[] => [
  { action: 'add-snapshot', snapshot: snapshot(id, seq, ts, parent) },
  { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
];

describe('newTableMetadata', () => {
  it("assigns fresh ids in Java's order and re-maps spec and identifier source ids", () => {
    const m = newEventTable();
    const s = currentSchema(m);
    // A struct's own fields first, then each nested type in turn.
    expect(s.fields.map((f) => [f.name, f.id])).toEqual([
      ['event_id', 1],
      ['ts', 2],
      ['customer', 3],
      ['items', 4],
    ]);
    const customer = s.fields[2]!.type;
    expect(customer.kind === 'struct' && customer.fields.map((f) => f.id)).toEqual([5, 6]);
    const items = s.fields[3]!.type;
    expect(items.kind === 'list' && items.elementId).toBe(7);
    expect(
      items.kind === 'list' && items.element.kind === 'struct' && items.element.fields.map((f) => f.id),
    ).toEqual([8, 9]);
    expect(m['last-column-id']).toBe(9);
    expect(s.schemaId).toBe(0);
    expect(s.identifierFieldIds).toEqual([1]);
    expect(m['partition-specs']).toEqual([
      { 'spec-id': 0, fields: [{ name: 'ts_day', transform: 'day', 'source-id': 2, 'field-id': 1000 }] },
    ]);
    expect(m['last-partition-id']).toBe(1000);
    expect(m['sort-orders']).toEqual([{ 'order-id': 0, fields: [] }]);
    expect(m['last-sequence-number']).toBe(0n);
    expect(m['current-snapshot-id']).toBeUndefined();
    expect(m['next-row-id']).toBeUndefined();
    expect(m.properties).toEqual({
      'write.parquet.compression-codec': 'zstd',
      'write.target-file-size-bytes': '134217728',
      'write.metadata.delete-after-commit.enabled': 'true',
      'write.metadata.previous-versions-max': '100',
    });
  });

  it('strips a trailing slash, drops reserved properties, lets user properties override defaults', () => {
    const m = newEventTable(3, {
      location: `${LOCATION}/`,
      properties: { 'format-version': '3', 'write.parquet.compression-codec': 'snappy', owner: 'floe' },
      spec: undefined,
      sortOrder: {
        'order-id': 5,
        fields: [{ transform: 'identity', 'source-id': 50, direction: 'asc', 'null-order': 'nulls-first' }],
      },
    });
    expect(m.location).toBe(LOCATION);
    expect(m.properties['format-version']).toBeUndefined();
    expect(m.properties['write.parquet.compression-codec']).toBe('snappy');
    expect(m.properties.owner).toBe('floe');
    expect(m['next-row-id']).toBe(0n);
    expect(m['last-partition-id']).toBe(999);
    expect(m['sort-orders']).toEqual([
      {
        'order-id': 1,
        fields: [{ transform: 'identity', 'source-id': 1, direction: 'asc', 'null-order': 'nulls-first' }],
      },
    ]);
    expect(m['default-sort-order-id']).toBe(1);
    expect(JSON.parse(serializeTableMetadata(m))['current-snapshot-id']).toBeNull();
  });

  it('rejects v3-only types in a v2 table and partition sources inside lists', () => {
    const ns = { ...EVENT_SCHEMA, fields: [...EVENT_SCHEMA.fields, field(99, 'ts_ns', T.timestamp_ns)] };
    expect(thrown(() => newEventTable(2, { schema: ns })).message).toMatch(
      /ts_ns \(timestamp_ns\) requires format version 3/,
    );
    expect(newEventTable(3, { schema: ns })['last-column-id']).toBe(10);
    const inList = {
      'spec-id': 0,
      fields: [{ name: 'sku', transform: 'identity', 'source-id': 71, 'field-id': 1000 }],
    };
    expect(thrown(() => newEventTable(2, { spec: inList })).message).toMatch(
      /items.element.sku must be a primitive outside lists/,
    );
    const unknown = {
      'spec-id': 0,
      fields: [{ name: 'x', transform: 'identity', 'source-id': 404, 'field-id': 1000 }],
    };
    expect(thrown(() => newEventTable(2, { spec: unknown })).message).toMatch(/unknown source column id 404/);
  });
});

describe('applyUpdates: snapshots', () => {
  it('adds a snapshot, moves main, logs it, and leaves the base untouched', () => {
    const base = newEventTable();
    const frozen = serializeTableMetadata(base);
    const m = applyUpdates(base, append(11n, 1n, T0 + 500), {
      nowMs: T0 + 900,
      metadataLocation: `${LOCATION}/metadata/00000-a.metadata.json`,
    });
    expect(serializeTableMetadata(base)).toBe(frozen);
    expect(m['last-sequence-number']).toBe(1n);
    expect(m['current-snapshot-id']).toBe(11n);
    expect(m.refs).toEqual({ main: { 'snapshot-id': 11n, type: 'branch' } });
    // Java: the commit time is the added snapshot's timestamp.
    expect(m['last-updated-ms']).toBe(BigInt(T0 + 500));
    expect(m['snapshot-log']).toEqual([{ 'timestamp-ms': BigInt(T0 + 500), 'snapshot-id': 11n }]);
    expect(m['metadata-log']).toEqual([
      { 'timestamp-ms': BigInt(T0), 'metadata-file': `${LOCATION}/metadata/00000-a.metadata.json` },
    ]);
    expect(parseTableMetadata(serializeTableMetadata(m))).toEqual(m);
  });

  it('requires sequence-number = last + 1: stale is a retryable conflict, a gap is invalid', () => {
    const m1 = applyUpdates(newEventTable(), append(11n, 1n, T0), { nowMs: T0 });
    const stale = thrown(() => applyUpdates(m1, append(12n, 1n, T0 + 1, 11n), { nowMs: T0 + 1 }));
    expect(stale.kind).toBe('CommitConflict');
    expect(stale.retryable).toBe(true);
    expect(stale.message).toMatch(/sequence-number 1 .* already 1/);
    const gap = thrown(() => applyUpdates(m1, append(12n, 3n, T0 + 1, 11n), { nowMs: T0 + 1 }));
    expect(gap.kind).toBe('DataInvalid');
    expect(gap.message).toMatch(/sequence-number 3, expected 2/);
    const { 'sequence-number': _s, ...noSeq } = snapshot(12n, 2n, T0 + 1, 11n);
    expect(
      thrown(() => applyUpdates(m1, [{ action: 'add-snapshot', snapshot: noSeq }], { nowMs: T0 })).message,
    ).toMatch(/no sequence-number/);
    expect(thrown(() => applyUpdates(m1, append(11n, 2n, T0 + 1), { nowMs: T0 })).kind).toBe('AlreadyExists');
    expect(applyUpdates(m1, append(12n, 2n, T0 + 1, 11n), { nowMs: T0 + 1 })['last-sequence-number']).toBe(
      2n,
    );
  });

  it('v3: advances next-row-id by added-rows and rejects a first-row-id behind it', () => {
    const lineage = (
      id: bigint,
      seq: bigint,
      first: bigint,
      added: bigint,
      parent?: bigint,
    ): TableUpdate[] => [
      {
        action: 'add-snapshot',
        snapshot: snapshot(id, seq, T0, parent, { 'first-row-id': first, 'added-rows': added }),
      },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
    ];
    const m1 = applyUpdates(newEventTable(3), lineage(1n, 1n, 0n, 10n), { nowMs: T0 });
    expect(m1['next-row-id']).toBe(10n);
    const m2 = applyUpdates(m1, lineage(2n, 2n, 10n, 5n, 1n), { nowMs: T0 });
    expect(m2['next-row-id']).toBe(15n);
    const behind = thrown(() => applyUpdates(m2, lineage(3n, 3n, 14n, 1n, 2n), { nowMs: T0 }));
    expect(behind.kind).toBe('CommitConflict');
    expect(behind.message).toMatch(/first-row-id 14 behind table next-row-id 15/);
    expect(thrown(() => applyUpdates(m2, append(3n, 3n, T0, 2n), { nowMs: T0 })).message).toMatch(
      /first-row-id and added-rows/,
    );
  });

  it('keeps only the final main snapshot of one commit in the snapshot log', () => {
    const m = applyUpdates(newEventTable(), [...append(1n, 1n, T0 + 1), ...append(2n, 2n, T0 + 2, 1n)], {
      nowMs: T0 + 3,
    });
    expect(m['snapshot-log'].map((e) => e['snapshot-id'])).toEqual([2n]);
    expect(m.snapshots.map((s) => s['snapshot-id'])).toEqual([1n, 2n]);
  });

  it('remove-snapshots drops dangling refs and the log before a removed snapshot', () => {
    let m = newEventTable();
    m = applyUpdates(m, append(1n, 1n, T0 + 1), { nowMs: T0 + 1 });
    m = applyUpdates(m, append(2n, 2n, T0 + 2, 1n), { nowMs: T0 + 2 });
    m = applyUpdates(
      m,
      [{ action: 'set-snapshot-ref', 'ref-name': 'audit', type: 'tag', 'snapshot-id': 1n }],
      { nowMs: T0 + 3 },
    );
    m = applyUpdates(m, append(3n, 3n, T0 + 4, 2n), { nowMs: T0 + 4 });
    const r = applyUpdates(m, [{ action: 'remove-snapshots', 'snapshot-ids': [2n] }], { nowMs: T0 + 5 });
    expect(r.snapshots.map((s) => s['snapshot-id'])).toEqual([1n, 3n]);
    expect(Object.keys(r.refs).sort()).toEqual(['audit', 'main']);
    expect(r['snapshot-log'].map((e) => e['snapshot-id'])).toEqual([3n]);
    const noMain = applyUpdates(r, [{ action: 'remove-snapshot-ref', 'ref-name': 'main' }], {
      nowMs: T0 + 6,
    });
    expect(noMain['current-snapshot-id']).toBeUndefined();
    expect(JSON.parse(serializeTableMetadata(noMain))['current-snapshot-id']).toBe(-1);
    expect(
      thrown(() =>
        applyUpdates(m, [{ action: 'set-snapshot-ref', 'ref-name': 'x', type: 'tag', 'snapshot-id': 9n }], {
          nowMs: T0,
        }),
      ).message,
    ).toMatch(/ref 'x' to unknown snapshot 9/);
  });

  it('trims metadata-log to write.metadata.previous-versions-max (or the override), keeping the newest', () => {
    let m = applyUpdates(
      newEventTable(),
      [{ action: 'set-properties', updates: { 'write.metadata.previous-versions-max': '3' } }],
      {
        nowMs: T0,
      },
    );
    for (let v = 1; v <= 5; v++) {
      m = applyUpdates(m, append(BigInt(v), BigInt(v), T0 + v, v > 1 ? BigInt(v - 1) : undefined), {
        nowMs: T0 + v,
        metadataLocation: `${LOCATION}/metadata/0000${v}-x.metadata.json`,
      });
    }
    expect(m['metadata-log'].map((e) => e['metadata-file'])).toEqual(
      [3, 4, 5].map((v) => `${LOCATION}/metadata/0000${v}-x.metadata.json`),
    );
    expect(m['metadata-log'].at(-1)?.['timestamp-ms']).toBe(BigInt(T0 + 4));
    const one = applyUpdates(m, append(6n, 6n, T0 + 6, 5n), {
      nowMs: T0 + 6,
      metadataLocation: 'f6',
      maxPreviousVersions: 0,
    });
    expect(one['metadata-log'].map((e) => e['metadata-file'])).toEqual(['f6']);
  });
});

describe('applyUpdates: schema, spec, sort order, properties, version', () => {
  const base = newEventTable();
  const wider = { schemaId: 0, fields: [...currentSchema(base).fields, field(10, 'user_agent', T.string)] };

  it('adds a schema with the next id, tracks last-column-id, and set-current-schema -1 picks it', () => {
    const m = applyUpdates(
      base,
      [
        { action: 'add-schema', schema: wider },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
      {
        nowMs: T0 + 1,
      },
    );
    expect(m.schemas.map((s) => s.schemaId)).toEqual([0, 1]);
    expect(m['current-schema-id']).toBe(1);
    expect(m['last-column-id']).toBe(10);
    expect(m['last-updated-ms']).toBe(BigInt(T0 + 1));
    // Adding an identical schema again reuses its id instead of creating schema 2.
    const again = applyUpdates(
      m,
      [
        { action: 'add-schema', schema: { ...wider, schemaId: 42 } },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
      {
        nowMs: T0 + 2,
      },
    );
    expect(again.schemas.map((s) => s.schemaId)).toEqual([0, 1]);
    expect(again['current-schema-id']).toBe(1);
    const back = applyUpdates(
      again,
      [
        { action: 'add-schema', schema: currentSchema(base) },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
      {
        nowMs: T0 + 3,
      },
    );
    expect(back['current-schema-id']).toBe(0);
  });

  it('rejects set-current-schema -1 with nothing added, unknown ids, and v3-only types in v2', () => {
    expect(
      thrown(() => applyUpdates(base, [{ action: 'set-current-schema', 'schema-id': -1 }], { nowMs: T0 }))
        .message,
    ).toMatch(/no.*added|none was added/);
    expect(
      thrown(() => applyUpdates(base, [{ action: 'set-current-schema', 'schema-id': 5 }], { nowMs: T0 }))
        .message,
    ).toMatch(/unknown schema id 5/);
    const ns = { schemaId: 0, fields: [field(10, 'at', T.timestamptz_ns)] };
    expect(
      thrown(() => applyUpdates(base, [{ action: 'add-schema', schema: ns }], { nowMs: T0 })).message,
    ).toMatch(/at \(timestamptz_ns\)/);
  });

  it('adds specs with new ids, reuses an equivalent one, and raises last-partition-id', () => {
    const spec = {
      'spec-id': 0,
      fields: [
        { name: 'ts_day', transform: 'day', 'source-id': 2, 'field-id': 1000 },
        { name: 'country', transform: 'identity', 'source-id': 6, 'field-id': 1001 },
      ],
    };
    const m = applyUpdates(
      base,
      [
        { action: 'add-spec', spec },
        { action: 'set-default-spec', 'spec-id': -1 },
      ],
      { nowMs: T0 },
    );
    expect(m['default-spec-id']).toBe(1);
    expect(m['last-partition-id']).toBe(1001);
    const same = applyUpdates(m, [{ action: 'add-spec', spec: { ...spec, 'spec-id': 8 } }], { nowMs: T0 });
    expect(same['partition-specs']).toHaveLength(2);
    const bad = {
      'spec-id': 0,
      fields: [{ name: 'x', transform: 'identity', 'source-id': 77, 'field-id': 1002 }],
    };
    expect(
      thrown(() => applyUpdates(base, [{ action: 'add-spec', spec: bad }], { nowMs: T0 })).message,
    ).toMatch(/unknown source column id 77/);
  });

  it('adds sort orders from id 1 and reuses identical ones', () => {
    const order = {
      'order-id': 0,
      fields: [
        {
          transform: 'identity',
          'source-id': 2,
          direction: 'desc' as const,
          'null-order': 'nulls-last' as const,
        },
      ],
    };
    const m = applyUpdates(
      base,
      [
        { action: 'add-sort-order', 'sort-order': order },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
      ],
      {
        nowMs: T0,
      },
    );
    expect(m['sort-orders'].map((o) => o['order-id'])).toEqual([0, 1]);
    expect(m['default-sort-order-id']).toBe(1);
    const again = applyUpdates(m, [{ action: 'add-sort-order', 'sort-order': { ...order, 'order-id': 3 } }], {
      nowMs: T0,
    });
    expect(again['sort-orders']).toHaveLength(2);
  });

  it('sets/removes properties and location, and rejects reserved property names', () => {
    const m = applyUpdates(
      base,
      [
        { action: 'set-properties', updates: { owner: 'a', 'commit.retry.num-retries': '2' } },
        { action: 'remove-properties', removals: ['owner', 'write.target-file-size-bytes'] },
        { action: 'set-location', location: 's3://other/place/' },
        { action: 'assign-uuid', uuid: 'new-uuid' },
      ],
      { nowMs: T0 },
    );
    expect(m.properties.owner).toBeUndefined();
    expect(m.properties['write.target-file-size-bytes']).toBeUndefined();
    expect(m.properties['commit.retry.num-retries']).toBe('2');
    expect(m.location).toBe('s3://other/place');
    expect(m['table-uuid']).toBe('new-uuid');
    expect(
      thrown(() =>
        applyUpdates(base, [{ action: 'set-properties', updates: { 'current-snapshot-id': '1' } }], {
          nowMs: T0,
        }),
      ).message,
    ).toMatch(/'current-snapshot-id' is reserved/);
  });

  it('upgrades 2 → 3 with next-row-id 0 and refuses downgrades', () => {
    const v3 = applyUpdates(base, [{ action: 'upgrade-format-version', 'format-version': 3 }], { nowMs: T0 });
    expect(v3['format-version']).toBe(3);
    expect(v3['next-row-id']).toBe(0n);
    expect(
      thrown(() =>
        applyUpdates(v3, [{ action: 'upgrade-format-version', 'format-version': 2 }], { nowMs: T0 }),
      ).message,
    ).toMatch(/cannot downgrade from format v3 to v2/);
    expect(applyUpdates(base, [], { nowMs: T0 + 99 })).toBe(base);
  });

  it('rejects an unknown action (exhaustive switch)', () => {
    const bogus = { action: 'drop-table' } as unknown as TableUpdate;
    expect(thrown(() => applyUpdates(base, [bogus], { nowMs: T0 })).message).toMatch(
      /unknown table update "drop-table"/,
    );
  });
});

describe('checkRequirements', () => {
  const base = applyUpdates(newEventTable(), append(11n, 1n, T0), { nowMs: T0 });

  it('passes when every requirement holds', () => {
    const ok: TableRequirement[] = [
      { type: 'assert-table-uuid', uuid: UUID },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 11n },
      { type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': null },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 9 },
      { type: 'assert-current-schema-id', 'current-schema-id': 0 },
      { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 },
      { type: 'assert-default-spec-id', 'default-spec-id': 0 },
      { type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 },
    ];
    expect(() => checkRequirements(base, ok)).not.toThrow();
    expect(() => checkRequirements(undefined, [{ type: 'assert-create' }])).not.toThrow();
  });

  const failing: Array<[TableRequirement, RegExp]> = [
    [{ type: 'assert-create' }, /already exists/],
    [{ type: 'assert-table-uuid', uuid: 'other' }, /table-uuid is 6d3c8a4e.*expected other/],
    [
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 10n },
      /ref 'main' is at snapshot 11, expected 10/,
    ],
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }, /ref 'main' was created/],
    [{ type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': 11n }, /ref 'dev' is missing/],
    [
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 8 },
      /last-column-id is 9, expected 8/,
    ],
    [{ type: 'assert-current-schema-id', 'current-schema-id': 1 }, /current-schema-id is 0, expected 1/],
    [
      { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 999 },
      /last-partition-id is 1000/,
    ],
    [{ type: 'assert-default-spec-id', 'default-spec-id': 1 }, /default-spec-id is 0/],
    [{ type: 'assert-default-sort-order-id', 'default-sort-order-id': 1 }, /default-sort-order-id is 0/],
  ];
  it.each(failing.map(([r, m], i) => [`${i} ${r.type}`, r, m] as const))(
    'fails %s with a retryable CommitConflict',
    (_n, req, message) => {
      const e = thrown(() => checkRequirements(base, [req]));
      expect(e.kind).toBe('CommitConflict');
      expect(e.retryable).toBe(true);
      expect(e.message).toMatch(message);
    },
  );

  it('fails every non-create requirement when the table does not exist', () => {
    expect(
      thrown(() => checkRequirements(undefined, [{ type: 'assert-table-uuid', uuid: UUID }])).message,
    ).toMatch(/does not exist/);
  });
});

describe('newTableMetadata input is not mutated', () => {
  it('keeps the caller schema ids', () => {
    newTableMetadata({
      location: LOCATION,
      schema: EVENT_SCHEMA,
      formatVersion: 2,
      tableUuid: UUID,
      nowMs: T0,
    });
    expect(EVENT_SCHEMA.fields.map((f) => f.id)).toEqual([50, 51, 52, 53]);
  });
});
