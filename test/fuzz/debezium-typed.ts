/**
 * Debezium change events with schemas (Kafka Connect's JSON converter, `schemas.enable=true`, as
 * Debezium Server's Kinesis sink writes them), in the shapes Debezium's documentation shows for
 * its PostgreSQL and MySQL connectors, and an independent model of the rows they leave:
 *
 * - PostgreSQL `customers`: `id` int32 key, `name` string, `balance` NUMERIC(10,2) as
 *   `org.apache.kafka.connect.data.Decimal` (base64 two's complement), `birthday` DATE as
 *   `io.debezium.time.Date`, `created_at` TIMESTAMP as `io.debezium.time.MicroTimestamp`,
 *   `updated_at` TIMESTAMPTZ as `io.debezium.time.ZonedTimestamp`, `opens` TIME as
 *   `io.debezium.time.MicroTime`, and from the middle of the stream on a new column `tier`
 *   (int16);
 * - MySQL `orders`: `order_id` int64 key, `amount` DECIMAL(12,3), `placed` DATETIME as
 *   `io.debezium.time.Timestamp` (ms), `ship_by` DATE as `io.debezium.time.Date`;
 * - operations: snapshot reads (`r`) first, then creates, updates and deletes (each delete
 *   followed by its tombstone, `{"schema":null,"payload":null}`), and one truncate. Keys are the
 *   producers' partition keys, so a key's changes keep their order.
 *
 * The model keeps, per key, the last change in stream order; a delete removes the key.
 */
import fc from 'fast-check';

export interface CustomerState {
  readonly id: number;
  readonly name: string;
  /** Unscaled, scale 2. */
  readonly balance: bigint;
  /** Days since the epoch. */
  readonly birthday: number;
  /** Epoch µs. */
  readonly createdAt: bigint;
  readonly updatedAt: string;
  /** µs since midnight. */
  readonly opens: bigint;
  readonly tier?: number;
}

export interface OrderState {
  readonly orderId: bigint;
  /** Unscaled, scale 3. */
  readonly amount: bigint;
  /** Epoch ms. */
  readonly placed: number;
  readonly shipBy: number;
}

export interface TypedDebeziumStream {
  readonly lines: readonly string[];
  readonly customers: ReadonlyMap<number, CustomerState>;
  readonly orders: ReadonlyMap<bigint, OrderState>;
  /** Tombstones and truncates in `lines`: they change no rows. */
  readonly noRow: number;
}

export const DEBEZIUM_CONFIG = {
  routing: { tableField: 'source.table' },
  upsert: {
    customers: { key: ['id'], envelope: 'debezium' },
    orders: { key: ['order_id'], envelope: 'debezium' },
  },
} as const;

/** Big-endian two's complement of `n`, minimal length, in base64 (Connect's Decimal). */
export function decimalBase64(n: bigint): string {
  let len = 1;
  while (n < -(1n << BigInt(8 * len - 1)) || n >= 1n << BigInt(8 * len - 1)) len++;
  const u = n < 0n ? (1n << BigInt(8 * len)) + n : n;
  return Buffer.from(u.toString(16).padStart(2 * len, '0'), 'hex').toString('base64');
}

const customerFields = (withTier: boolean) => [
  { type: 'int32', optional: false, field: 'id' },
  { type: 'string', optional: false, field: 'name' },
  {
    type: 'bytes',
    optional: true,
    name: 'org.apache.kafka.connect.data.Decimal',
    version: 1,
    parameters: { scale: '2', 'connect.decimal.precision': '10' },
    field: 'balance',
  },
  { type: 'int32', optional: true, name: 'io.debezium.time.Date', version: 1, field: 'birthday' },
  { type: 'int64', optional: true, name: 'io.debezium.time.MicroTimestamp', version: 1, field: 'created_at' },
  {
    type: 'string',
    optional: true,
    name: 'io.debezium.time.ZonedTimestamp',
    version: 1,
    field: 'updated_at',
  },
  { type: 'int64', optional: true, name: 'io.debezium.time.MicroTime', version: 1, field: 'opens' },
  ...(withTier ? [{ type: 'int16', optional: true, field: 'tier' }] : []),
];

const orderFields = [
  { type: 'int64', optional: false, field: 'order_id' },
  {
    type: 'bytes',
    optional: false,
    name: 'org.apache.kafka.connect.data.Decimal',
    version: 1,
    parameters: { scale: '3', 'connect.decimal.precision': '12' },
    field: 'amount',
  },
  { type: 'int64', optional: false, name: 'io.debezium.time.Timestamp', version: 1, field: 'placed' },
  { type: 'int32', optional: true, name: 'io.debezium.time.Date', version: 1, field: 'ship_by' },
];

/** The columns each table's schema declares `optional: false`: the tables hold them as required. */
export const DECLARED_REQUIRED: Readonly<Record<'customers' | 'orders', readonly string[]>> = {
  customers: customerFields(true)
    .filter((f) => !f.optional)
    .map((f) => f.field)
    .sort(),
  orders: orderFields
    .filter((f) => !f.optional)
    .map((f) => f.field)
    .sort(),
};

function envelopeSchema(
  server: string,
  table: string,
  fields: readonly object[],
  source: readonly object[],
): object {
  const value = { type: 'struct', optional: true, name: `${server}.${table}.Value`, fields };
  return {
    type: 'struct',
    optional: false,
    name: `${server}.${table}.Envelope`,
    version: 1,
    fields: [
      { ...value, field: 'before' },
      { ...value, field: 'after' },
      {
        type: 'struct',
        optional: false,
        name: 'io.debezium.connector.source.Source',
        fields: source,
        field: 'source',
      },
      { type: 'string', optional: false, field: 'op' },
      { type: 'int64', optional: true, field: 'ts_ms' },
    ],
  };
}

const PG_SOURCE = [
  { type: 'string', optional: false, field: 'connector' },
  { type: 'string', optional: false, field: 'db' },
  { type: 'string', optional: false, field: 'schema' },
  { type: 'string', optional: false, field: 'table' },
  { type: 'int64', optional: true, field: 'lsn' },
];
const MYSQL_SOURCE = [
  { type: 'string', optional: false, field: 'connector' },
  { type: 'string', optional: false, field: 'db' },
  { type: 'string', optional: true, field: 'table' },
  { type: 'string', optional: false, field: 'file' },
  { type: 'int64', optional: false, field: 'pos' },
];

function customerRow(c: CustomerState): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    balance: decimalBase64(c.balance),
    birthday: c.birthday,
    created_at: '@US@',
    updated_at: c.updatedAt,
    opens: Number(c.opens),
    ...(c.tier === undefined ? {} : { tier: c.tier }),
  };
}

const customerArb = (id: number, withTier: boolean) =>
  fc.record({
    id: fc.constant(id),
    name: fc.string({ minLength: 1, maxLength: 10 }),
    balance: fc.bigInt({ min: -(10n ** 10n) + 1n, max: 10n ** 10n - 1n }),
    birthday: fc.integer({ min: -20_000, max: 30_000 }),
    createdAt: fc.bigInt({ min: 0n, max: 4_000_000_000_000_000n }),
    updatedAt: fc.constantFrom(
      '2024-03-01T10:00:00Z',
      '2023-12-31T23:59:59.999999Z',
      '2024-06-01T00:00:00.5Z',
    ),
    opens: fc.bigInt({ min: 0n, max: 86_399_999_999n }),
    ...(withTier ? { tier: fc.integer({ min: -32768, max: 32767 }) } : {}),
  }) as fc.Arbitrary<CustomerState>;

const orderArb = (orderId: bigint) =>
  fc.record({
    orderId: fc.constant(orderId),
    amount: fc.bigInt({ min: 0n, max: 10n ** 12n - 1n }),
    placed: fc.integer({ min: 0, max: 2_000_000_000_000 }),
    shipBy: fc.integer({ min: 0, max: 30_000 }),
  });

type Step =
  | {
      readonly t: 'customer';
      readonly op: 'c' | 'u' | 'd';
      readonly id: number;
      readonly state: CustomerState;
    }
  | { readonly t: 'order'; readonly op: 'c' | 'u' | 'd'; readonly id: bigint; readonly state: OrderState };

export function typedDebeziumArb(opts: {
  snapshot: number;
  changes: number;
}): fc.Arbitrary<TypedDebeziumStream> {
  const custIds = fc.integer({ min: 1, max: 12 });
  const orderIds = fc.bigInt({ min: 2n ** 53n, max: 2n ** 53n + 10n }); // beyond a double's integers
  const step = (withTier: boolean): fc.Arbitrary<Step> =>
    fc.oneof(
      fc
        .tuple(custIds, fc.constantFrom<'c' | 'u' | 'd'>('c', 'u', 'u', 'd'))
        .chain(([id, op]) =>
          customerArb(id, withTier).map((state): Step => ({ t: 'customer', op, id, state })),
        ),
      fc
        .tuple(orderIds, fc.constantFrom<'c' | 'u' | 'd'>('c', 'u', 'd'))
        .chain(([id, op]) => orderArb(id).map((state): Step => ({ t: 'order', op, id, state }))),
    );
  return fc
    .record({
      snapshot: fc.array(
        custIds.chain((id) => customerArb(id, false)),
        { minLength: opts.snapshot, maxLength: opts.snapshot },
      ),
      early: fc.array(step(false), { minLength: opts.changes, maxLength: opts.changes }),
      late: fc.array(step(true), { minLength: opts.changes, maxLength: opts.changes }),
    })
    .map(({ snapshot, early, late }) => build(snapshot, [...early, ...late]));
}

function build(snapshot: readonly CustomerState[], steps: readonly Step[]): TypedDebeziumStream {
  const lines: string[] = [];
  const customers = new Map<number, CustomerState>();
  const orders = new Map<bigint, OrderState>();
  let noRow = 0;
  let lsn = 1000;
  const pg = (op: string, before: CustomerState | null, after: CustomerState | null, withTier: boolean) => {
    const payload = {
      before: before ? customerRow(before) : null,
      after: after ? customerRow(after) : null,
      source: { connector: 'postgresql', db: 'shop', schema: 'public', table: 'customers', lsn: lsn++ },
      op,
      ts_ms: 1_733_000_000_000 + lsn,
    };
    // `before` and `after` may carry different µs values: write each by its own placeholder.
    let text = JSON.stringify({
      schema: envelopeSchema('pg', 'public.customers', customerFields(withTier), PG_SOURCE),
      payload,
    });
    if (before) text = text.replace('"@US@"', before.createdAt.toString());
    if (after) text = text.replace('"@US@"', after.createdAt.toString());
    lines.push(text);
  };
  const mysql = (op: string, before: OrderState | null, after: OrderState | null) => {
    lines.push(orderLine(op, before, after, lsn++));
  };
  const tombstone = () => {
    lines.push('{"schema":null,"payload":null}');
    noRow++;
  };
  for (const c of snapshot) {
    pg('r', null, c, false);
    customers.set(c.id, c);
  }
  steps.forEach((s, i) => {
    const withTier = i >= steps.length / 2;
    if (s.t === 'customer') {
      const had = customers.get(s.id) ?? null;
      if (s.op === 'd') {
        if (!had) return;
        pg('d', had, null, withTier);
        tombstone();
        customers.delete(s.id);
      } else {
        pg(had ? 'u' : 'c', had, s.state, withTier);
        customers.set(s.id, s.state);
      }
    } else {
      const had = orders.get(s.id) ?? null;
      if (s.op === 'd') {
        if (!had) return;
        mysql('d', had, null);
        tombstone();
        orders.delete(s.id);
      } else {
        mysql(had ? 'u' : 'c', had, s.state);
        orders.set(s.id, s.state);
      }
    }
    if (i === Math.floor(steps.length / 3)) {
      // A truncate event (PostgreSQL, `include.truncate`... on): it changes no rows here.
      lines.push(
        JSON.stringify({
          schema: envelopeSchema('pg', 'public.customers', customerFields(false), PG_SOURCE),
          payload: {
            before: null,
            after: null,
            source: { connector: 'postgresql', db: 'shop', schema: 'public', table: 'customers', lsn: lsn++ },
            op: 't',
            ts_ms: 1_733_000_000_000 + lsn,
          },
        }),
      );
      noRow++;
    }
  });
  return { lines, customers, orders, noRow };
}

/** An order whose `amount` may be null (its column made nullable upstream, or a producer breaking its schema). */
export interface LooseOrder extends Omit<OrderState, 'amount'> {
  readonly amount: bigint | null;
}

/**
 * One MySQL `orders` change event at binlog position `pos`. `amountOptional`: the schema declares
 * `amount` `optional: true` (as after `ALTER TABLE orders MODIFY amount DECIMAL(12,3) NULL`).
 */
export function orderLine(
  op: string,
  before: LooseOrder | null,
  after: LooseOrder | null,
  pos: number,
  opts: { readonly amountOptional?: boolean } = {},
): string {
  const row = (o: LooseOrder) => ({
    order_id: '@ID@',
    amount: o.amount === null ? null : decimalBase64(o.amount),
    placed: o.placed,
    ship_by: o.shipBy,
  });
  const payload = {
    before: before ? row(before) : null,
    after: after ? row(after) : null,
    source: { connector: 'mysql', db: 'shop', table: 'orders', file: 'mysql-bin.000003', pos },
    op,
    ts_ms: 1_733_000_000_000 + pos,
  };
  const fields = opts.amountOptional
    ? orderFields.map((f) => (f.field === 'amount' ? { ...f, optional: true } : f))
    : orderFields;
  const id = (after ?? before)!.orderId.toString();
  return JSON.stringify({
    schema: envelopeSchema('mysql', 'shop.orders', fields, MYSQL_SOURCE),
    payload,
  }).replaceAll('"@ID@"', id);
}

/** Orders with distinct ids beyond a double's integers (the key must stay exact). */
export function ordersArb(opts: { minLength: number; maxLength: number }): fc.Arbitrary<OrderState[]> {
  return fc
    .uniqueArray(fc.bigInt({ min: 2n ** 53n, max: 2n ** 53n + 1000n }), opts)
    .chain((ids) => fc.tuple(...ids.map((id) => orderArb(id))));
}

// ---- the expected rows, as text, independently of lambdas/src ----

export function decimalText(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text =
    scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return neg ? `-${text}` : text;
}

export function dateText(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

export function microsText(us: bigint): string {
  const ms = us / 1000n;
  return `${new Date(Number(ms)).toISOString().slice(0, 23)}${String(us % 1000n).padStart(3, '0')}`;
}

export function timeText(us: bigint): string {
  return `${new Date(Number(us / 1000n)).toISOString().slice(11, 23)}${String(us % 1000n).padStart(3, '0')}`;
}

export function instantMs(iso: string): number {
  return Date.parse(iso);
}
