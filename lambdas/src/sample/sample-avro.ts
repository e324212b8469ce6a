/**
 * The public sample's Avro variant (shared/reference/sample-events.md): one writer schema per event
 * type, `event_time` as `timestamp-micros`, `event_date` as `date`, `amount` as `double`; a second
 * Order version adds optional `payment_method` and `promo_code`; Click's `referrer`, `scroll_depth`
 * and `time_on_page_seconds` are optional. Pure: sample events (JSON form) → Avro datums.
 */
const NS = 'com.aws.samples.iceberg.events';
const base = [
  { name: 'event_id', type: 'string' },
  { name: 'event_time', type: { type: 'long', logicalType: 'timestamp-micros' } },
  { name: 'event_type', type: 'string' },
  { name: 'region', type: 'string' },
  { name: 'event_date', type: { type: 'int', logicalType: 'date' } },
];
const optional = (name: string, type: string) => ({ name, type: ['null', type], default: null });

const orderV1 = {
  type: 'record',
  name: 'OrderEvent',
  namespace: NS,
  fields: [
    ...base,
    { name: 'order_id', type: 'string' },
    { name: 'customer_id', type: 'string' },
    { name: 'amount', type: 'double' },
    { name: 'currency', type: 'string' },
    { name: 'status', type: 'string' },
  ],
};
const orderV2 = {
  ...orderV1,
  fields: [...orderV1.fields, optional('payment_method', 'string'), optional('promo_code', 'string')],
};
const userEvent = {
  type: 'record',
  name: 'UserEvent',
  namespace: NS,
  fields: [
    ...base,
    { name: 'user_id', type: 'string' },
    { name: 'action', type: 'string' },
    { name: 'device_type', type: 'string' },
    { name: 'ip_address', type: 'string' },
    optional('user_agent', 'string'),
  ],
};
const clickEvent = {
  type: 'record',
  name: 'ClickEvent',
  namespace: NS,
  fields: [
    ...base,
    { name: 'session_id', type: 'string' },
    { name: 'page_url', type: 'string' },
    optional('referrer', 'string'),
    optional('scroll_depth', 'int'),
    optional('time_on_page_seconds', 'long'),
  ],
};

/** Writer schemas by schema name and sample version (USER and CLICK have one version). */
export const SAMPLE_AVRO_SCHEMAS = {
  OrderEvent: { v1: orderV1, v2: orderV2 },
  UserEvent: { v1: userEvent, v2: userEvent },
  ClickEvent: { v1: clickEvent, v2: clickEvent },
} as const;

export type SampleSchemaName = keyof typeof SAMPLE_AVRO_SCHEMAS;

const PAYMENT = ['card', 'paypal', 'bank_transfer'] as const;

/** The schema name and Avro datum for one sample event (JSON form) of `version`. */
export function sampleAvroDatum(
  ev: Record<string, unknown>,
  version: 'v1' | 'v2',
): { schemaName: SampleSchemaName; schema: object; datum: Record<string, unknown> } {
  const micros = BigInt(Date.parse(String(ev.event_time))) * 1000n;
  const days = Math.round(Date.parse(`${String(ev.event_date)}T00:00:00Z`) / 86_400_000);
  const common = {
    event_id: ev.event_id,
    event_time: micros,
    event_type: ev.event_type,
    region: ev.region,
    event_date: days,
  };
  if (ev.event_type === 'ORDER') {
    const id = String(ev.event_id);
    return {
      schemaName: 'OrderEvent',
      schema: SAMPLE_AVRO_SCHEMAS.OrderEvent[version],
      datum: {
        ...common,
        order_id: ev.order_id,
        customer_id: ev.customer_id,
        amount: ev.amount,
        currency: ev.currency,
        status: ev.status,
        ...(version === 'v2'
          ? { payment_method: PAYMENT[id.charCodeAt(id.length - 1) % PAYMENT.length], promo_code: null }
          : {}),
      },
    };
  }
  if (ev.event_type === 'USER') {
    return {
      schemaName: 'UserEvent',
      schema: userEvent,
      datum: {
        ...common,
        user_id: ev.user_id,
        action: ev.action,
        device_type: ev.device_type,
        ip_address: ev.ip_address,
        user_agent: ev.user_agent ?? null,
      },
    };
  }
  return {
    schemaName: 'ClickEvent',
    schema: clickEvent,
    datum: {
      ...common,
      session_id: ev.session_id,
      page_url: ev.page_url,
      referrer: ev.referrer ?? null,
      scroll_depth: ev.scroll_depth ?? null,
      time_on_page_seconds:
        ev.time_on_page_seconds === undefined ? null : BigInt(ev.time_on_page_seconds as number),
    },
  };
}
