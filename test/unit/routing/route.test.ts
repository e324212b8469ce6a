import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../lambdas/src/config.ts';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import {
  compileRouter,
  DEFAULT_ROUTING,
  parseTemplate,
  type RoutingConfig,
  routeRecord,
} from '../../../lambdas/src/routing/index.ts';

const rec = (text: string) => parseJsonRecord(text) as object;

describe('routeRecord defaults (the sample)', () => {
  it.each([
    ['{"event_type": "ORDER"}', 'order_events'],
    ['{"event_type": "USER"}', 'user_events'],
    ['{"event_type": "Click.Stream"}', 'click_stream_events'],
    ['{"event_type": "  spaced  "}', 'spaced_events'],
  ])('%s → %s', (json, table) => {
    expect(routeRecord(rec(json), DEFAULT_ROUTING)).toEqual({ ok: true, table, rule: 'routing-field' });
  });

  it.each([
    '{}',
    '{"event_type": null}',
    '{"event_type": 5}',
    '{"event_type": ""}',
    '{"event_type": {"x": 1}}',
    '{"event_type": ["ORDER"]}',
  ])('missing or non-text routing value %s → unknown_events', (json) => {
    expect(routeRecord(rec(json), DEFAULT_ROUTING)).toEqual({
      ok: true,
      table: 'unknown_events',
      rule: 'default',
    });
  });

  it('dead-letters a missing routing value when there is no default table', () => {
    const r = routeRecord(rec('{"kind": "x"}'), { ...DEFAULT_ROUTING, defaultTable: null });
    expect(r).toEqual({
      ok: false,
      reason: 'no-route',
      detail: 'routing field event_type is missing and there is no default table',
    });
  });

  it('dead-letters a value that cannot be a legal name instead of using the default table', () => {
    const r = routeRecord(rec('{"event_type": "😀😀"}'), DEFAULT_ROUTING);
    expect(r).toMatchObject({ ok: false, reason: 'illegal-name' });
    expect(r.ok ? '' : r.detail).toContain('"😀😀"');
    // 249 chars + "_events" = 256 > 255: rejected, not truncated into another table
    expect(routeRecord({ event_type: 'a'.repeat(249) }, DEFAULT_ROUTING)).toMatchObject({
      ok: false,
      reason: 'illegal-name',
    });
    expect(routeRecord({ event_type: 'a'.repeat(248) }, DEFAULT_ROUTING)).toMatchObject({
      ok: true,
      table: `${'a'.repeat(248)}_events`,
    });
  });

  it('never reads inherited properties as routing values', () => {
    expect(routeRecord(rec('{}'), { ...DEFAULT_ROUTING, routingField: 'constructor' })).toMatchObject({
      table: 'unknown_events',
    });
    expect(routeRecord(rec('{"a": {}}'), { ...DEFAULT_ROUTING, routingField: 'a.toString' })).toMatchObject({
      table: 'unknown_events',
    });
  });
});

describe('routeRecord precedence', () => {
  const cfg: RoutingConfig = {
    tableField: 'meta.table',
    routingField: 'event_type',
    suffix: '_events',
    template: '{source}_{payload.kind}_events',
    defaultTable: 'unknown_events',
  };

  it('table field first, as given (sanitised, no suffix)', () => {
    expect(
      routeRecord(
        rec('{"meta": {"table": "Flights"}, "source": "s", "payload": {"kind": "k"}, "event_type": "E"}'),
        cfg,
      ),
    ).toEqual({
      ok: true,
      table: 'flights',
      rule: 'table-field',
    });
  });

  it('then the template when all placeholders have values', () => {
    expect(
      routeRecord(rec('{"source": "Web", "payload": {"kind": "Login"}, "event_type": "E"}'), cfg),
    ).toEqual({
      ok: true,
      table: 'web_login_events',
      rule: 'template',
    });
    expect(routeRecord(rec('{"source": "web", "payload": {"kind": 7}}'), cfg)).toMatchObject({
      table: 'web_7_events',
    });
  });

  it('then the routing field when a placeholder is missing', () => {
    expect(routeRecord(rec('{"source": "web", "payload": {}, "event_type": "ORDER"}'), cfg)).toEqual({
      ok: true,
      table: 'order_events',
      rule: 'routing-field',
    });
    expect(routeRecord(rec('{"meta": {"table": ""}, "source": "web"}'), cfg)).toMatchObject({
      table: 'unknown_events',
      rule: 'default',
    });
  });

  it('a template with literal prefix (flights_{airport})', () => {
    const t: RoutingConfig = { ...DEFAULT_ROUTING, template: 'flights_{airport}' };
    expect(routeRecord(rec('{"airport": "SEA"}'), t)).toMatchObject({ ok: true, table: 'flights_sea' });
    expect(routeRecord(rec('{"airport": "../../etc"}'), t)).toMatchObject({ ok: true, table: 'flights_etc' });
  });

  it('illegal names from the table field and template are dead-lettered', () => {
    expect(routeRecord(rec('{"meta": {"table": "!!!"}}'), cfg)).toMatchObject({
      ok: false,
      reason: 'illegal-name',
    });
    expect(routeRecord(rec('{"x": "!!!"}'), { ...DEFAULT_ROUTING, template: '{x}' })).toMatchObject({
      ok: false,
      reason: 'illegal-name',
    });
  });

  it('a dead letter from a template route names the template and its missing field, not just the routing field', () => {
    const strict: RoutingConfig = { ...cfg, tableField: undefined, defaultTable: null };
    expect(routeRecord(rec('{"source": "web", "payload": {}}'), strict)).toEqual({
      ok: false,
      reason: 'no-route',
      detail:
        "template '{source}_{payload.kind}_events': field {payload.kind} is missing (routing field event_type, the fallback, is missing) and there is no default table",
    });
    const noSource = routeRecord(rec('{"payload": {"kind": true}}'), strict);
    expect(noSource.ok ? '' : noSource.detail).toMatch(
      /^template '\{source\}_\{payload\.kind\}_events': field \{source\} is missing/,
    );
    const notText = routeRecord(rec('{"source": "web", "payload": {"kind": {"a": 1}}}'), strict);
    expect(notText.ok ? '' : notText.detail).toContain(
      'field {payload.kind} is not text or a whole number (object)',
    );
    // Without a template the detail is unchanged.
    expect(routeRecord(rec('{}'), { ...DEFAULT_ROUTING, defaultTable: null })).toMatchObject({
      detail: 'routing field event_type is missing and there is no default table',
    });
  });

  it('the allow-list keeps records out of unexpected tables', () => {
    const a: RoutingConfig = { ...DEFAULT_ROUTING, allowList: ['order_events'] };
    expect(routeRecord(rec('{"event_type": "ORDER"}'), a)).toMatchObject({ ok: true, table: 'order_events' });
    expect(routeRecord(rec('{"event_type": "HACK"}'), a)).toEqual({
      ok: false,
      reason: 'not-allowed',
      detail: "table 'hack_events' is not in routing.allowList",
    });
    expect(routeRecord(rec('{}'), a)).toMatchObject({ ok: true, table: 'unknown_events' });
  });

  it('property: every routed table name is legal', () => {
    const t: RoutingConfig = { ...cfg, tableField: 'tbl' };
    fc.assert(
      fc.property(
        fc.record(
          {
            tbl: fc.option(fc.string({ unit: 'binary' })),
            source: fc.string(),
            payload: fc.record({ kind: fc.string() }),
            event_type: fc.string({ unit: 'binary', maxLength: 300 }),
          },
          { requiredKeys: [] },
        ),
        (r) => {
          for (const c of [t, cfg, DEFAULT_ROUTING]) {
            const res = routeRecord(r, c);
            if (res.ok) expect(res.table).toMatch(/^[a-z0-9](?:[a-z0-9_]{0,253}[a-z0-9])?$/);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('parseTemplate', () => {
  it('splits literals and dotted placeholders', () => {
    expect(parseTemplate('{source}_{payload.kind}_events')).toEqual([
      { path: ['source'] },
      '_',
      { path: ['payload', 'kind'] },
      '_events',
    ]);
  });

  it.each(['flights', '{a', 'a}', '{}', '{a..b}', '{{a}}'])('rejects %j', (t) => {
    try {
      parseTemplate(t);
      expect.unreachable();
    } catch (e) {
      expect(isFloeError(e, ErrorKind.ConfigInvalid)).toBe(true);
    }
  });
});

describe('templates that name a namespace', () => {
  const route = (template: string, record: object) => compileRouter({ ...DEFAULT_ROUTING, template })(record);

  it('a literal dot splits namespace and table: the routing key is namespace.table', () => {
    expect(route('analytics.{source}_events', { source: 'Web' })).toMatchObject({
      ok: true,
      table: 'analytics.web_events',
    });
    expect(route('{tenant}.orders', { tenant: 'ACME' })).toMatchObject({ ok: true, table: 'acme.orders' });
    expect(route('{tenant}.{kind}', { tenant: 't1', kind: 'Click' })).toMatchObject({
      ok: true,
      table: 't1.click',
    });
  });

  it('hostile namespace values give a legal namespace or a dead letter, never a path', () => {
    for (const tenant of ['../x', '..', 'a/b', 'ÉLITE', "x'; DROP", 'z'.repeat(400)]) {
      const r = route('{tenant}.orders', { tenant });
      if (r.ok) expect(r.table).toMatch(/^[a-z0-9][a-z0-9_]*\.orders$/);
      else expect(r.reason).toBe('illegal-name');
    }
    expect(route('{tenant}.orders', { tenant: 'aws_x' })).toMatchObject({
      ok: false,
      reason: 'illegal-name',
    });
  });

  it('the configuration rejects an empty namespace or table part', () => {
    expect(() => parseConfig({ routing: { template: '.{x}' } })).toThrow("config key 'routing.template'");
    expect(() => parseConfig({ routing: { template: '{x}.' } })).toThrow("config key 'routing.template'");
  });
});

describe("Kafka Connect's {schema, payload} envelope (Debezium Server's default)", () => {
  const wrapped = (event: object) => ({ schema: { type: 'struct', fields: [] }, payload: event });
  const change = { op: 'c', source: { table: 'Customers', db: 'shop' }, after: { id: 1 } };

  it('routing paths resolve inside payload: tableField, template and routing field', () => {
    const byTable = { ...DEFAULT_ROUTING, tableField: 'source.table' };
    expect(routeRecord(wrapped(change), byTable)).toEqual({
      ok: true,
      table: 'customers',
      rule: 'table-field',
    });
    expect(routeRecord(change, byTable)).toEqual({ ok: true, table: 'customers', rule: 'table-field' });
    const prefixed = { ...DEFAULT_ROUTING, tableField: 'payload.source.table' };
    expect(routeRecord(wrapped(change), prefixed)).toEqual({
      ok: true,
      table: 'customers',
      rule: 'table-field',
    });
    const template = { ...DEFAULT_ROUTING, template: '{source.db}_{source.table}' };
    expect(routeRecord(wrapped(change), template)).toEqual({
      ok: true,
      table: 'shop_customers',
      rule: 'template',
    });
    expect(routeRecord(wrapped({ event_type: 'ORDER' }), DEFAULT_ROUTING)).toEqual({
      ok: true,
      table: 'order_events',
      rule: 'routing-field',
    });
  });

  it('a path at the top wins; a payload that is not an object is not looked into', () => {
    const byTable = { ...DEFAULT_ROUTING, tableField: 'source.table' };
    expect(routeRecord({ ...wrapped(change), source: { table: 'top' } }, byTable)).toMatchObject({
      table: 'top',
    });
    expect(routeRecord({ schema: null, payload: null }, byTable)).toMatchObject({ table: 'unknown_events' });
    expect(routeRecord({ payload: ['x'] }, byTable)).toMatchObject({ table: 'unknown_events' });
    expect(routeRecord({ payload: 'ORDER' }, DEFAULT_ROUTING)).toMatchObject({ table: 'unknown_events' });
  });
});

describe('DynamoDB change records (Kinesis Data Streams for DynamoDB)', () => {
  const change = (tableName: string, extra = '') =>
    rec(
      `{"eventName":"INSERT","tableName":${JSON.stringify(tableName)},"eventSource":"aws:dynamodb","event_type":"order"${extra},"dynamodb":{"Keys":{"k":{"S":"1"}}}}`,
    );

  it('go to their source table, lower-cased and sanitised, before any configured rule', () => {
    const router = compileRouter(
      parseConfig({ routing: { tableField: 'table', template: '{event_type}_x' } }).routing,
    );
    expect(router(change('Music'))).toEqual({ ok: true, table: 'music', rule: 'dynamodb' });
    expect(router(change('Order-History.v2', ',"table":"other"'))).toEqual({
      ok: true,
      table: 'order_history_v2',
      rule: 'dynamodb',
    });
  });

  it('follow the allow-list, and route as any record when the framing is off', () => {
    const cfg = parseConfig({ routing: { allowList: ['orders'] } }).routing;
    expect(compileRouter(cfg)(change('Music'))).toMatchObject({ ok: false, reason: 'not-allowed' });
    expect(compileRouter(DEFAULT_ROUTING, { dynamodb: false })(change('Music'))).toEqual({
      ok: true,
      table: 'order_events',
      rule: 'routing-field',
    });
  });

  it('one that names no table is refused, not routed as plain JSON', () => {
    const router = compileRouter(DEFAULT_ROUTING);
    expect(router(rec('{"eventSource":"aws:dynamodb","event_type":"a","dynamodb":{"Keys":{}}}'))).toEqual({
      ok: false,
      reason: 'illegal-name',
      detail: 'a DynamoDB change record without a tableName (or a table in its eventSourceARN)',
    });
  });

  it('a record that only looks like one routes as usual', () => {
    const router = compileRouter(DEFAULT_ROUTING);
    expect(router(rec('{"eventSource":"aws:dynamodb","tableName":"Music","event_type":"a"}'))).toMatchObject({
      table: 'a_events',
    });
  });
});
