/**
 * Test fixtures: the Avro writer schemas of the public sample's events (shared/reference/
 * sample-events.md, "Avro variant"), and avsc types that encode them independently of Floe's codec
 * (plain avsc, longs as JS numbers: every value used here is below 2^53).
 */
import avsc from 'avsc';

const NS = 'com.aws.samples.iceberg.events';
const base = [
  { name: 'event_id', type: 'string' },
  { name: 'event_time', type: { type: 'long', logicalType: 'timestamp-micros' } },
  { name: 'event_type', type: 'string' },
  { name: 'region', type: 'string' },
  { name: 'event_date', type: { type: 'int', logicalType: 'date' } },
];

export const orderV1 = {
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

export const orderV2 = {
  ...orderV1,
  fields: [
    ...orderV1.fields,
    { name: 'payment_method', type: ['null', 'string'], default: null },
    { name: 'promo_code', type: ['null', 'string'], default: null },
  ],
};

export const userEvent = {
  type: 'record',
  name: 'UserEvent',
  namespace: NS,
  fields: [
    ...base,
    { name: 'user_id', type: 'string' },
    { name: 'action', type: 'string' },
    { name: 'device_type', type: 'string' },
    { name: 'ip_address', type: 'string' },
    { name: 'user_agent', type: ['null', 'string'], default: null },
  ],
};

export const clickEvent = {
  type: 'record',
  name: 'ClickEvent',
  namespace: NS,
  fields: [
    ...base,
    { name: 'session_id', type: 'string' },
    { name: 'page_url', type: 'string' },
    { name: 'referrer', type: ['null', 'string'], default: null },
    { name: 'scroll_depth', type: ['null', 'int'], default: null },
    { name: 'time_on_page_seconds', type: ['null', 'long'], default: null },
  ],
};

/** 2024-05-01T12:34:56.789123Z in µs, and its date in days. */
export const EVENT_TIME_MICROS = 1_714_566_896_789_123;
export const EVENT_DATE_DAYS = 19_844;

const common = {
  event_time: EVENT_TIME_MICROS,
  region: 'eu-west-1',
  event_date: EVENT_DATE_DAYS,
};

export const orderDatumV1 = {
  event_id: 'ORDER-1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  event_type: 'ORDER',
  ...common,
  order_id: 'ORD-ab12cd34',
  customer_id: 'CUST-42',
  amount: 123.45,
  currency: 'EUR',
  status: 'shipped',
};
export const orderDatumV2 = { ...orderDatumV1, payment_method: 'card', promo_code: null };
export const userDatum = {
  event_id: 'USER-6fa459ea-ee8a-3ca4-894e-db77e160355e',
  event_type: 'USER',
  ...common,
  user_id: 'USER-7',
  action: 'login',
  device_type: 'mobile',
  ip_address: '10.1.2.3',
  user_agent: 'Mozilla/5.0',
};
export const clickDatum = {
  event_id: 'CLICK-886313e1-3b8a-5372-9b90-0c9aee199e5d',
  event_type: 'CLICK',
  ...common,
  session_id: 'SESSION-abcdefabcdef',
  page_url: 'https://example.com/page3',
  referrer: null,
  scroll_depth: 42,
  time_on_page_seconds: 17,
};

/** Avro binary of one datum, encoded by avsc (independent of Floe's codec). */
export function avscEncode(schema: object, datum: object): Uint8Array {
  const buf = avsc.Type.forSchema(schema as avsc.Schema).toBuffer(datum);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}
