import { describe, expect, it } from 'vitest';
import {
  anchoredRegExp,
  auditsFor,
  branchFor,
  composeFieldRules,
  DEFAULT_TABLE_PROPERTIES,
  fieldRulesFor,
  hasRecordRules,
  hintsFor,
  parseConfig,
  parsePartitionCandidate,
  partitionCandidatesFor,
  partitionFieldsFor,
  upsertFor,
} from '../../lambdas/src/config.ts';
import { ColumnarTableBatch } from '../../lambdas/src/engine/columnar-batch.ts';
import { FastPath } from '../../lambdas/src/engine/fast-path.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { decimal, field, list, struct, T } from '../../lambdas/src/iceberg/types.ts';
import { compileRouter } from '../../lambdas/src/routing/index.ts';

function configError(json: unknown): FloeError {
  try {
    parseConfig(json);
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
    return e as FloeError;
  }
  throw new Error(`expected ${JSON.stringify(json)} to be rejected`);
}

describe('parseConfig defaults', () => {
  it('an empty config gives the documented defaults', () => {
    const c = parseConfig({});
    expect(c).toEqual({
      format: 'json',
      jsonFallback: false,
      namespace: 'default',
      routing: { routingField: 'event_type', suffix: '_events', defaultTable: 'unknown_events' },
      inference: { hints: {}, detectTimestamps: true },
      partitioning: { candidates: ['event_date', 'region', 'date'], tables: {} },
      tableProperties: { ...DEFAULT_TABLE_PROPERTIES, 'write.target-file-size-bytes': '134217728' },
      formatVersion: 2,
      targetFileSizeBytes: 134217728,
      typeConflict: { default: 'dead-letter', tables: {} },
      limits: { maxRecordBytes: 1_048_576, maxNestingDepth: 32, maxColumnsPerTable: 1_000 },
      source: {
        framings: new Set(['kpl', 'gzip', 'zstd', 'cloudwatch-logs', 'eventbridge', 'dynamodb']),
        maxDecompressedBytes: 64 * 1024 * 1024,
        deferAboveTables: 32,
      },
    });
    expect(parseConfig(undefined)).toEqual(c);
  });

  it('source: framings auto, none or a list; a bounded decompressed size', () => {
    expect([...parseConfig({ source: { framings: 'none' } }).source.framings]).toEqual([]);
    expect([...parseConfig({ source: { framings: ['kpl', 'gzip'] } }).source.framings]).toEqual([
      'kpl',
      'gzip',
    ]);
    expect(parseConfig({ source: { framings: 'auto', maxDecompressedBytes: 4096 } }).source).toEqual({
      framings: new Set(['kpl', 'gzip', 'zstd', 'cloudwatch-logs', 'eventbridge', 'dynamodb']),
      maxDecompressedBytes: 4096,
      deferAboveTables: 32,
    });
    expect(() => parseConfig({ source: { framings: ['kpl', 'lz4'] } })).toThrow(
      /config key 'source.framings': expected 'auto', 'none' or a list of kpl, gzip, zstd, cloudwatch-logs, eventbridge, dynamodb, got "lz4"/,
    );
    expect(() => parseConfig({ source: { maxDecompressedBytes: 10 } })).toThrow(
      /source.maxDecompressedBytes/,
    );
    expect(() => parseConfig({ source: { framing: 'auto' } })).toThrow(/source/);
  });

  it('a full config round-trips with values applied', () => {
    const c = parseConfig({
      namespace: 'lake',
      routing: {
        tableField: 'meta.table',
        routingField: 'type',
        suffix: '',
        template: 'flights_{airport}',
        defaultTable: null,
        allowList: ['flights_sea'],
      },
      inference: {
        hints: {
          '*': { amount: 'decimal(12,2)' },
          order_events: { 'meta.ts': 'timestamptz', amount: 'double' },
        },
        detectTimestamps: false,
      },
      partitioning: {
        candidates: ['day(event_time)', 'bucket[16](customer_id)'],
        tables: { order_events: ['region'] },
      },
      tableProperties: { 'write.parquet.compression-codec': 'snappy', 'commit.retry.num-retries': 10 },
      formatVersion: 3,
      targetFileSizeBytes: 64 * 1024 * 1024,
    });
    expect(c.routing).toEqual({
      tableField: 'meta.table',
      routingField: 'type',
      suffix: '',
      template: 'flights_{airport}',
      defaultTable: null,
      allowList: ['flights_sea'],
    });
    expect(c.formatVersion).toBe(3);
    expect(c.tableProperties).toMatchObject({
      'write.parquet.compression-codec': 'snappy',
      'commit.retry.num-retries': '10',
      'write.target-file-size-bytes': '67108864',
    });
    expect(hintsFor(c, 'order_events')).toEqual({ amount: 'double', 'meta.ts': 'timestamptz' });
    expect(hintsFor(c, 'user_events')).toEqual({ amount: 'decimal(12,2)' });
    expect(partitionCandidatesFor(c, 'order_events')).toEqual(['region']);
    expect(partitionCandidatesFor(c, 'user_events')).toEqual(['day(event_time)', 'bucket[16](customer_id)']);
  });
});

describe('parseConfig errors name the key and the value', () => {
  it.each([
    [[], "config key '': expected an object, got []"],
    [{ nameSpace: 'x' }, "config key 'nameSpace': unknown key"],
    [{ routing: { sufix: '_x' } }, "config key 'routing.sufix': unknown key"],
    [{ namespace: 'My-Lake' }, `config key 'namespace': expected [a-z0-9_]`],
    [{ namespace: 'aws_data' }, "config key 'namespace': must not start with 'aws'"],
    [{ namespace: '' }, 'config key \'namespace\': expected a non-empty string, got ""'],
    [{ formatVersion: 4 }, "config key 'formatVersion': expected 2 or 3, got 4"],
    [{ format: 'avro' }, "config key 'format': expected 'json' or 'avro-gsr', got \"avro\""],
    [{ typeConflict: 'cast' }, "config key 'typeConflict': expected 'dead-letter' or 'coerce'"],
    [{ audits: { orders: 'amount > 0' } }, "config key 'audits.orders': expected an array of strings"],
    [{ audits: { 'Bad Name': ['x > 0'] } }, "config key 'audits.Bad Name': expected a table name"],
    [{ audits: { orders: ['  '] } }, "config key 'audits.orders[0]': expected an SQL predicate"],
    [{ branches: { orders: 'a b' } }, "config key 'branches.orders': expected a branch name"],
    [{ source: { deferRouting: 'yes' } }, "config key 'source.deferRouting': expected true"],
    [{ source: { deferRouting: { aboveTables: -1 } } }, "config key 'source.deferRouting'"],
    [{ source: { deferRouting: { above: 3 } } }, "config key 'source.deferRouting'"],
    [{ branches: { orders: '/x' } }, "config key 'branches.orders': expected a branch name"],
    [{ branches: { orders: 3 } }, "config key 'branches.orders'"],
    [{ branches: { 'Bad Name': 'audit' } }, "config key 'branches.Bad Name': expected a table name"],
    [{ typeConflict: { tables: { orders: 'x' } } }, "config key 'typeConflict.tables.orders'"],
    [{ targetFileSizeBytes: -1 }, "config key 'targetFileSizeBytes': expected a positive integer, got -1"],
    [{ routing: { suffix: '_Events' } }, "config key 'routing.suffix'"],
    [{ routing: { suffix: 'events_' } }, "config key 'routing.suffix'"],
    [
      { routing: { template: 'flights' } },
      "config key 'routing.template': routing.template 'flights' has no {placeholder}",
    ],
    [{ routing: { defaultTable: 'Unknown Events' } }, "config key 'routing.defaultTable'"],
    [
      { routing: { routingField: 'a..b' } },
      "config key 'routing.routingField': expected a dotted field path",
    ],
    [{ routing: { allowList: ['ok', 'Not OK'] } }, "config key 'routing.allowList[1]'"],
    [
      { inference: { hints: { '*': { amount: 'money' } } } },
      'config key \'inference.hints.*.amount\': expected an Iceberg primitive type such as long, timestamptz or decimal(12,2), got "money"',
    ],
    [{ inference: { hints: { '*': { Amount: 'long' } } } }, "config key 'inference.hints.*.Amount'"],
    [{ inference: { hints: { 'Bad Table': {} } } }, "config key 'inference.hints.Bad Table'"],
    [
      { inference: { detectTimestamps: 'yes' } },
      'config key \'inference.detectTimestamps\': expected true or false, got "yes"',
    ],
    [
      { partitioning: { candidates: ['days(event_time)'] } },
      "config key 'partitioning.candidates[0]': partition candidate 'days(event_time)': transform must be",
    ],
    [{ partitioning: { candidates: ['bucket[0](id)'] } }, "config key 'partitioning.candidates[0]'"],
    [{ partitioning: { candidates: ['a.b'] } }, "config key 'partitioning.candidates[0]'"],
    [
      { partitioning: { tables: { order_events: 'region' } } },
      "config key 'partitioning.tables.order_events': expected an array of strings",
    ],
    [
      { tableProperties: { a: { b: 1 } } },
      "config key 'tableProperties.a': expected a string, number or boolean",
    ],
    [
      { targetFileSizeBytes: 1000, tableProperties: { 'write.target-file-size-bytes': '2000' } },
      'conflicts with targetFileSizeBytes 1000',
    ],
  ])('%j', (json, message) => {
    expect(configError(json).message).toContain(message);
  });
});

describe('parsePartitionCandidate', () => {
  it.each([
    ['event_date', { column: 'event_date' }],
    ['bucket[16](customer_id)', { transform: 'bucket[16]', column: 'customer_id' }],
    ['truncate[4](zip)', { transform: 'truncate[4]', column: 'zip' }],
    ['day(event_time)', { transform: 'day', column: 'event_time' }],
    [' DAY ( event_time ) ', { transform: 'day', column: 'event_time' }],
    ['bucket[ 8 ](id)', { transform: 'bucket[8]', column: 'id' }],
    ['identity(region)', { transform: 'identity', column: 'region' }],
  ])('%j', (s, expected) => {
    expect(parsePartitionCandidate(s)).toEqual(expected);
  });

  it.each(['', 'void(x)', 'days(x)', 'bucket(x)', 'day()', 'day(a.b)', 'Region', 'day(x', 'day(x)(y)'])(
    'rejects %j',
    (s) => {
      expect(() => parsePartitionCandidate(s)).toThrow(FloeError);
    },
  );
});

describe('partitionFieldsFor (the sample rule)', () => {
  const schema = struct([
    field(1, 'event_id', T.string),
    field(2, 'event_time', T.timestamptz),
    field(3, 'region', T.string),
    field(4, 'event_date', T.date),
    field(5, 'amount', T.double),
    field(6, 'customer_id', T.string),
    field(7, 'qty', T.long),
    field(8, 'meta', struct([field(10, 'date', T.date)])),
    field(9, 'price', decimal(9, 2)),
    field(11, 'tags', list(12, T.string)),
  ]);

  it('default candidates: date → identity, string → identity, absent/nested ignored', () => {
    expect(partitionFieldsFor(schema, ['event_date', 'region', 'date'])).toEqual([
      { sourceId: 4, transform: 'identity', name: 'event_date' },
      { sourceId: 3, transform: 'identity', name: 'region' },
    ]);
  });

  it('timestamps get day without a transform; other types are skipped', () => {
    expect(partitionFieldsFor(schema, ['event_time', 'amount', 'qty', 'price', 'meta', 'tags'])).toEqual([
      { sourceId: 2, transform: 'day', name: 'event_time_day' },
      { sourceId: 7, transform: 'identity', name: 'qty' },
    ]);
  });

  it('keeps explicit transforms that apply; skips those that do not and duplicates', () => {
    expect(
      partitionFieldsFor(schema, [
        'hour(event_time)',
        'bucket[16](customer_id)',
        'truncate[4](region)',
        'bucket[4](amount)', // doubles cannot be bucketed
        'hour(event_date)', // dates have no hour
        'month(event_date)',
        'event_time',
        'day(event_time)', // same as the line above
        'identity(event_date)',
      ]),
    ).toEqual([
      { sourceId: 2, transform: 'hour', name: 'event_time_hour' },
      { sourceId: 6, transform: 'bucket[16]', name: 'customer_id_bucket' },
      { sourceId: 3, transform: 'truncate[4]', name: 'region_trunc' },
      { sourceId: 4, transform: 'month', name: 'event_date_month' },
      { sourceId: 2, transform: 'day', name: 'event_time_day' },
      { sourceId: 4, transform: 'identity', name: 'event_date' },
    ]);
  });

  it('skips a partition name that would shadow another column', () => {
    const s = struct([field(1, 'ts', T.timestamptz), field(2, 'ts_day', T.string)]);
    expect(partitionFieldsFor(s, ['ts', 'ts_day'])).toEqual([
      { sourceId: 2, transform: 'identity', name: 'ts_day' },
    ]);
  });

  it('no candidate present → unpartitioned', () => {
    expect(partitionFieldsFor(struct([field(1, 'x', T.string)]), ['event_date', 'region'])).toEqual([]);
  });
});

describe('fields (keep / drop / only) and guards', () => {
  it('absent by default; parsed with per-table scopes; a table scope adds to the global one', () => {
    expect(parseConfig({}).fields).toBeUndefined();
    expect(parseConfig({}).guards).toBeUndefined();
    expect(hasRecordRules(parseConfig({}))).toBe(false);
    const c = parseConfig({
      fields: {
        drop: ['secret', 'metadata.source', 'secret'],
        tables: { audit_events: { only: ['id'] }, raw_events: {} },
      },
      guards: { allowTables: '[a-z]+_events', maxTables: 10, maxColumnsPerTable: 50, maxNestingDepth: 4 },
    });
    expect(c.fields).toEqual({
      drop: ['secret', 'metadata.source'],
      tables: { audit_events: { only: ['id'] }, raw_events: {} },
    });
    expect(c.guards).toEqual({
      allowTables: '[a-z]+_events',
      maxTables: 10,
      maxColumnsPerTable: 50,
      maxNestingDepth: 4,
    });
    expect(fieldRulesFor(c, 'order_events')).toEqual({ drop: ['secret', 'metadata.source'] });
    expect(fieldRulesFor(c, 'audit_events')).toEqual({ drop: ['secret', 'metadata.source'], only: ['id'] });
    // An empty scope no longer exempts a table: the global drop still applies.
    expect(fieldRulesFor(c, 'raw_events')).toEqual({ drop: ['secret', 'metadata.source'] });
    expect(hasRecordRules(c)).toBe(true);
    expect(hasRecordRules(parseConfig({ guards: {} }))).toBe(false);
    expect(hasRecordRules(parseConfig({ fields: { keep: ['id'] } }))).toBe(true);
  });

  it('at most one of keep, drop, only per scope: the error names the scope and both keys', () => {
    const g = configError({ fields: { keep: ['a'], drop: ['b'] } });
    expect(g.message).toContain("config key 'fields'");
    expect(g.message).toContain("'keep' and 'drop' are mutually exclusive");
    const t = configError({ fields: { tables: { orders: { drop: ['a'], only: ['b'] } } } });
    expect(t.message).toContain("config key 'fields.tables.orders'");
    expect(t.message).toContain("'drop' and 'only'");
    // Global and per-table scopes may differ.
    expect(() => parseConfig({ fields: { keep: ['a'], tables: { orders: { drop: ['b'] } } } })).not.toThrow();
  });

  it('a contradiction within one scope names the table, the field and both keys', () => {
    const same = configError({
      fields: { tables: { orders: { keep: ['id', 'secret'], drop: ['secret'] } } },
    });
    expect(same.message).toContain("config key 'fields.tables.orders'");
    expect(same.message).toContain("'keep' and 'drop' are mutually exclusive");
    expect(same.message).toContain("'secret' is in both");
    const nested = configError({ fields: { only: ['payload'], drop: ['payload.secret'] } });
    expect(nested.message).toContain("config key 'fields'");
    expect(nested.message).toContain("drop 'payload.secret' lies within only 'payload'");
  });

  it.each([
    [{ fields: [] }, "'fields'"],
    [{ fields: { keep: 'a' } }, "'fields.keep'"],
    [{ fields: { keep: [] } }, "'fields.keep'"],
    [{ fields: { drop: ['a..b'] } }, "'fields.drop[0]'"],
    [{ fields: { drop: ['ok', 'Upper'] } }, "'fields.drop[1]'"],
    [{ fields: { only: ['../x'] } }, "'fields.only[0]'"],
    [{ fields: { only: ["x'; DROP TABLE t; --"] } }, "'fields.only[0]'"],
    [{ fields: { only: [''] } }, "'fields.only[0]'"],
    [{ fields: { only: [7] } }, "'fields.only[0]'"],
    [{ fields: { retain: ['a'] } }, "'fields.retain'"],
    [{ fields: { tables: { '../x': { drop: ['a'] } } } }, "'fields.tables.../x'"],
    [{ fields: { tables: { Orders: { drop: ['a'] } } } }, "'fields.tables.Orders'"],
    [{ fields: { tables: { orders: { tables: {} } } } }, "'fields.tables.orders.tables'"],
    [{ fields: { tables: { orders: ['a'] } } }, "'fields.tables.orders'"],
    [{ guards: 5 }, "'guards'"],
    [{ guards: { allowList: 'x' } }, "'guards.allowList'"],
    [{ guards: { allowTables: '(' } }, "'guards.allowTables'"],
    [{ guards: { allowTables: '[z-a]' } }, "'guards.allowTables'"],
    [{ guards: { allowTables: '' } }, "'guards.allowTables'"],
    [{ guards: { allowTables: 3 } }, "'guards.allowTables'"],
    [{ guards: { maxTables: 0 } }, "'guards.maxTables'"],
    [{ guards: { maxTables: -1 } }, "'guards.maxTables'"],
    [{ guards: { maxTables: 1.5 } }, "'guards.maxTables'"],
    [{ guards: { maxTables: '10' } }, "'guards.maxTables'"],
    [{ guards: { maxColumnsPerTable: Number.POSITIVE_INFINITY } }, "'guards.maxColumnsPerTable'"],
    [{ guards: { maxColumnsPerTable: 2 ** 60 } }, "'guards.maxColumnsPerTable'"],
    [{ guards: { maxNestingDepth: null } }, "'guards.maxNestingDepth'"],
    [{ guards: { maxNestingDepth: 0 } }, "'guards.maxNestingDepth'"],
  ])('rejects %j naming %s', (json, key) => {
    expect(configError(json).message).toContain(`config key ${key}`);
  });

  it('allowTables is anchored', () => {
    const re = anchoredRegExp('order|click');
    expect(re.test('order')).toBe(true);
    expect(re.test('click')).toBe(true);
    expect(re.test('orders')).toBe(false);
    expect(re.test('xclick')).toBe(false);
  });
});

describe('fields: a table scope composes with the global one', () => {
  const rulesOf = (fields: unknown, table = 'orders') => fieldRulesFor(parseConfig({ fields }), table);

  it.each([
    [
      'keep + keep: both required',
      { keep: ['id'], tables: { orders: { keep: ['customer.id'] } } },
      { keep: ['id', 'customer.id'] },
    ],
    [
      'drop + drop: both dropped',
      { drop: ['secret'], tables: { orders: { drop: ['debug'] } } },
      { drop: ['secret', 'debug'] },
    ],
    [
      'drop + keep of another field: the global drop stays',
      { drop: ['secret'], tables: { orders: { keep: ['id'] } } },
      { keep: ['id'], drop: ['secret'] },
    ],
    [
      'drop + only of other fields: the global drop stays',
      { drop: ['secret'], tables: { orders: { only: ['id'] } } },
      { drop: ['secret'], only: ['id'] },
    ],
    [
      'drop + empty scope: the global drop stays',
      { drop: ['secret'], tables: { orders: {} } },
      { drop: ['secret'] },
    ],
    [
      'drop + keep naming it: re-admitted',
      { drop: ['secret', 'pin'], tables: { orders: { keep: ['secret'] } } },
      { keep: ['secret'], drop: ['pin'] },
    ],
    [
      'drop + only naming it: re-admitted',
      { drop: ['secret'], tables: { orders: { only: ['secret', 'who'] } } },
      { only: ['secret', 'who'] },
    ],
    [
      'drop of a child + only of its parent: not re-admitted',
      { drop: ['payload.secret'], tables: { orders: { only: ['payload'] } } },
      { drop: ['payload.secret'], only: ['payload'] },
    ],
    [
      'drop + keep of the path and a child: re-admitted whole',
      { drop: ['payload'], tables: { orders: { keep: ['payload', 'payload.id'] } } },
      { keep: ['payload', 'payload.id'] },
    ],
    [
      'only + only: narrowed to what both admit',
      { only: ['id', 'payload'], tables: { orders: { only: ['payload.a', 'id'] } } },
      { only: ['payload.a', 'id'] },
    ],
    [
      'only + a wider table only: the global bound holds',
      { only: ['id', 'payload.a'], tables: { orders: { only: ['payload'] } } },
      { only: ['payload.a'] },
    ],
    [
      'only + drop: the table removes from the allowed paths',
      { only: ['id', 'a'], tables: { orders: { drop: ['a'] } } },
      { drop: ['a'], only: ['id', 'a'] },
    ],
    [
      'only + keep inside it',
      { only: ['id', 'a'], tables: { orders: { keep: ['id'] } } },
      { keep: ['id'], only: ['id', 'a'] },
    ],
    [
      'keep + only admitting it',
      { keep: ['id'], tables: { orders: { only: ['id', 'x'] } } },
      { keep: ['id'], only: ['id', 'x'] },
    ],
    [
      'keep + drop of another field',
      { keep: ['id'], tables: { orders: { drop: ['x'] } } },
      { keep: ['id'], drop: ['x'] },
    ],
    [
      'no table scope: the global rules',
      { drop: ['secret'], tables: { other: { keep: ['secret'] } } },
      { drop: ['secret'] },
    ],
  ])('%s', (_name, fields, want) => {
    expect(rulesOf(fields)).toEqual(want);
  });

  it('a rule namespace is ignored; a table named like an Object.prototype key gets the global rules', () => {
    const fields = { drop: ['secret'], tables: { orders: { keep: ['secret'] } } };
    expect(rulesOf(fields, 'analytics.orders')).toEqual({ keep: ['secret'] });
    expect(rulesOf(fields, 'constructor')).toEqual({ drop: ['secret'] });
    expect(rulesOf(fields, 'analytics.constructor')).toEqual({ drop: ['secret'] });
  });

  it('composes any two scopes, duplicates once', () => {
    expect(
      composeFieldRules(
        { keep: ['id'], drop: ['secret', 'pin'] },
        { keep: ['id', 'secret'], drop: ['pin', 'x'] },
      ),
    ).toEqual({ keep: ['id', 'secret'], drop: ['pin', 'x'] });
    expect(composeFieldRules({}, {})).toEqual({});
  });

  it.each([
    [
      'a child of a globally dropped path (keep)',
      { drop: ['payload'], tables: { orders: { keep: ['payload.id'] } } },
      "'fields.tables.orders.keep[0]'",
      ["lies inside 'payload'", "'fields.drop'", '"payload.id"'],
    ],
    [
      'a child of a globally dropped path (only)',
      { drop: ['payload'], tables: { orders: { only: ['id', 'payload.id'] } } },
      "'fields.tables.orders.only[1]'",
      ["lies inside 'payload'", '"payload.id"'],
    ],
    [
      'a table drop of a globally kept field',
      { keep: ['id'], tables: { orders: { drop: ['id'] } } },
      "'fields.tables.orders.drop[0]'",
      ["removes 'id'", "'fields.keep'"],
    ],
    [
      'a table drop of the parent of a globally kept field',
      { keep: ['customer.id'], tables: { orders: { drop: ['customer'] } } },
      "'fields.tables.orders.drop[0]'",
      ["removes 'customer.id'", '"customer"'],
    ],
    [
      'a table only outside the global only',
      { only: ['id', 'a'], tables: { orders: { only: ['a', 'b'] } } },
      "'fields.tables.orders.only[1]'",
      ["outside the global 'fields.only' (id, a)", '"b"'],
    ],
    [
      'a table keep outside the global only',
      { only: ['id'], tables: { orders: { keep: ['x'] } } },
      "'fields.tables.orders.keep[0]'",
      ["outside the global 'fields.only'", '"x"'],
    ],
    [
      'a table only leaving out a globally kept field',
      { keep: ['id'], tables: { orders: { only: ['x'] } } },
      "'fields.tables.orders.only'",
      ["leaves out 'id'", "'fields.keep'"],
    ],
  ])('rejects %s, naming the table, the field and the keys', (_name, fields, key, parts) => {
    const e = configError({ fields });
    expect(e.message).toContain(`config key ${key}`);
    for (const p of parts) expect(e.message).toContain(p);
  });
});

describe('upsert', () => {
  it('parses key, operationField and envelope per table, found by name or namespace.name', () => {
    const c = parseConfig({
      upsert: {
        customer_events: { key: ['customer_id'], operationField: 'op' },
        'shop.orders': { key: ['tenant', 'order.id'], envelope: 'debezium' },
      },
    });
    expect(upsertFor(c, 'customer_events')).toEqual({ key: ['customer_id'], operationField: 'op' });
    expect(upsertFor(c, 'default.customer_events')).toEqual({ key: ['customer_id'], operationField: 'op' });
    expect(upsertFor(c, 'shop.orders')).toEqual({ key: ['tenant', 'order.id'], envelope: 'debezium' });
    expect(upsertFor(c, 'orders')).toBeUndefined();
    expect(upsertFor(c, 'constructor')).toBeUndefined();
    expect(upsertFor(parseConfig({}), 'customer_events')).toBeUndefined();
  });

  it.each([
    [{ t: {} }, "'upsert.t.key'", 'is required'],
    [{ t: { key: [] } }, "'upsert.t.key'", 'at least one'],
    [{ t: { key: 'id' } }, "'upsert.t.key'", 'array of strings'],
    [{ t: { key: ['a..b'] } }, "'upsert.t.key[0]'", 'dotted field path'],
    [{ t: { key: ['a', 'a'] } }, "'upsert.t.key'", 'twice'],
    [{ t: { key: ['a'], envelope: 'maxwell' } }, "'upsert.t.envelope'", "'debezium'"],
    [
      { t: { key: ['a'], envelope: 'debezium', operationField: 'op' } },
      "'upsert.t.operationField'",
      'not with',
    ],
    [{ t: { key: ['a'], primaryKey: ['a'] } }, "'upsert.t.primaryKey'", 'unknown key'],
    [{ 'Bad-Name': { key: ['a'] } }, "'upsert'", 'not a table name'],
  ])('rejects %j naming the key', (upsert, key, problem) => {
    const e = configError({ upsert });
    expect(e.message).toContain(`config key ${key}`);
    expect(e.message).toContain(problem);
  });

  it('keeps the columnar fast path, which leaves upsert tables to the generic path', () => {
    const cfg = parseConfig({
      routing: { routingField: 'type' },
      upsert: { customer_events: { key: ['id'] } },
    });
    const fast = new FastPath({
      config: cfg,
      router: compileRouter(cfg.routing),
      batchFor: () => new ColumnarTableBatch(['f']),
    });
    expect(fast.take('{"type":"ORDER","id":1}', { seq: 1, source: 0, line: 1, position: 0 })).toBe(true);
    expect(
      fast.take('{"type":"CUSTOMER","id":1}', { seq: 2, source: 0, line: 2, position: 0 }),
    ).toBeUndefined();
    expect([...fast.tables.keys()]).toEqual(['order_events']);
  });
});

describe('source.deferRouting', () => {
  it('defers batches over 32 tables unless told: every batch (true), never (false), above N', () => {
    expect(parseConfig({}).source.deferAboveTables).toBe(32);
    expect(parseConfig({ source: { deferRouting: true } }).source.deferAboveTables).toBe(0);
    expect(parseConfig({ source: { deferRouting: false } }).source.deferAboveTables).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(parseConfig({ source: { deferRouting: { aboveTables: 5 } } }).source.deferAboveTables).toBe(5);
  });
});

describe('branches', () => {
  it("a table's branch: its own, else every table's ('*'), else main", () => {
    const c = parseConfig({ branches: { '*': 'staging', orders: 'wap/orders-1' } });
    expect(branchFor(c, 'orders')).toBe('wap/orders-1');
    expect(branchFor(c, 'default.orders')).toBe('wap/orders-1');
    expect(branchFor(c, 'users')).toBe('staging');
    expect(branchFor(parseConfig({ branches: { orders: 'audit' } }), 'users')).toBe('main');
    expect(branchFor(parseConfig({}), 'orders')).toBe('main');
  });
});

describe('audits', () => {
  it("a table's audits: every table's ('*') first, then its own", () => {
    const c = parseConfig({ audits: { '*': ['id IS NOT NULL'], orders: ['amount >= 0'] } });
    expect(auditsFor(c, 'orders')).toEqual(['id IS NOT NULL', 'amount >= 0']);
    expect(auditsFor(c, 'default.orders')).toEqual(['id IS NOT NULL', 'amount >= 0']);
    expect(auditsFor(c, 'users')).toEqual(['id IS NOT NULL']);
    expect(auditsFor(parseConfig({}), 'orders')).toEqual([]);
  });
});
