import { describe, expect, it } from 'vitest';
import {
  compileSchemaNameRouter,
  DEFAULT_ROUTING,
  type RoutingConfig,
} from '../../../lambdas/src/routing/route.ts';

describe('compileSchemaNameRouter', () => {
  const route = compileSchemaNameRouter(DEFAULT_ROUTING);

  it('routes by the short schema name, lower-cased, without the namespace or a suffix', () => {
    expect(route('com.example.OrderEvent')).toEqual({ ok: true, table: 'orderevent', rule: 'schema-name' });
    // DEFAULT_ROUTING has suffix `_events`: schema-name routing does not append it.
    expect(route('OrderEvent')).toEqual({ ok: true, table: 'orderevent', rule: 'schema-name' });
  });

  it('sends the same short name in different namespaces to the same table', () => {
    const a = route('com.example.billing.PaymentEvent');
    const b = route('org.other.PaymentEvent');
    expect(a).toMatchObject({ ok: true, table: 'paymentevent' });
    expect(b).toEqual(a);
  });

  it('turns "-" into "_" and sanitises the rest', () => {
    expect(route('order-created')).toMatchObject({ ok: true, table: 'order_created' });
    expect(route('com.example.Order-Created-V2')).toMatchObject({ ok: true, table: 'order_created_v2' });
    expect(route('--Shipment--')).toMatchObject({ ok: true, table: 'shipment' });
    expect(route('Événement_Créé')).toMatchObject({ ok: true, table: 'evenement_cree' });
  });

  it.each([
    ['an empty name', ''],
    ['a namespace ending in a dot', 'com.example.'],
    ['only separators', '-_-'],
    ['only characters without a legal form', '日本語'],
    ['a name too long for a table', `com.example.${'A'.repeat(300)}`],
  ])('rejects %s as illegal-name, quoting the schema name', (_what, name) => {
    const r = route(name);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe('illegal-name');
    expect(r.detail).toContain(JSON.stringify(name).slice(0, 20));
  });

  it('accepts a short name of exactly the longest legal length', () => {
    const long = 'a'.repeat(255);
    expect(route(`ns.${long}`)).toMatchObject({ ok: true, table: long });
    expect(route(`ns.${long}b`)).toMatchObject({ ok: false, reason: 'illegal-name' });
  });

  it('enforces the allow-list: tables outside it are not-allowed', () => {
    const cfg: RoutingConfig = { ...DEFAULT_ROUTING, allowList: ['orderevent'] };
    const allowed = compileSchemaNameRouter(cfg);
    expect(allowed('com.example.OrderEvent')).toEqual({ ok: true, table: 'orderevent', rule: 'schema-name' });
    const r = allowed('com.example.PaymentEvent');
    expect(r).toMatchObject({ ok: false, reason: 'not-allowed' });
    if (!r.ok) expect(r.detail).toContain('paymentevent');
  });

  it('reports an illegal name as illegal-name even with an allow-list', () => {
    const allowed = compileSchemaNameRouter({ ...DEFAULT_ROUTING, allowList: ['orderevent'] });
    expect(allowed('com.example.---')).toMatchObject({ ok: false, reason: 'illegal-name' });
  });

  it('gives the same answer on repeated calls', () => {
    const r = compileSchemaNameRouter({ ...DEFAULT_ROUTING, allowList: ['a_b'] });
    for (let i = 0; i < 3; i++) {
      expect(r('x.A-B')).toEqual({ ok: true, table: 'a_b', rule: 'schema-name' });
      expect(r('x.C')).toMatchObject({ ok: false, reason: 'not-allowed' });
    }
  });
});
