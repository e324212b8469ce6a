/**
 * The public sample's events (shared/reference/sample-events.md): ORDER 40 %, USER 30 %, CLICK 30 %,
 * ~10 % duplicates of an earlier event id, ~5 % late events; `v1` never sends the v2 fields, `v2`
 * always does. Pure: time and randomness come from the caller's clock value and seed.
 */
import { Prng } from './prng.ts';

export type SchemaVersion = 'v1' | 'v2';

export interface SampleOptions {
  readonly seed: number;
  /** Epoch ms the events are "sent" at (the newest event time). */
  readonly nowMs: number;
  readonly version: SchemaVersion;
  /** Share of records that repeat an earlier event id (default 0.10). */
  readonly duplicateRate?: number;
  /** Share of late records, 1–60 minutes old (default 0.05). */
  readonly lateRate?: number;
}

const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-southeast-1'] as const;
const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY'] as const;
const STATUSES = ['pending', 'confirmed', 'shipped', 'delivered', 'cancelled'] as const;
const ACTIONS = ['login', 'logout', 'signup', 'profile_update'] as const;
const DEVICES = ['mobile', 'desktop', 'tablet'] as const;
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5)',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)',
] as const;

/** An endless, reproducible stream of sample events as plain objects. */
export function* sampleEvents(opts: SampleOptions): Generator<Record<string, unknown>> {
  const rnd = new Prng(opts.seed);
  const dupRate = opts.duplicateRate ?? 0.1;
  const lateRate = opts.lateRate ?? 0.05;
  const recent: Record<string, unknown>[] = [];
  let i = 0;
  while (true) {
    i++;
    if (recent.length > 0 && rnd.next() < dupRate) {
      // A duplicate delivery from the producer: same event id and body, a distinct record.
      yield { ...rnd.pick(recent) };
      continue;
    }
    const ageMs = rnd.next() < lateRate ? rnd.int(60_000, 3_600_000) : rnd.int(0, 5_000);
    const t = new Date(opts.nowMs - ageMs - (i % 1000));
    const roll = rnd.next();
    const type = roll < 0.4 ? 'ORDER' : roll < 0.7 ? 'USER' : 'CLICK';
    const base: Record<string, unknown> = {
      event_id: `${type}-${rnd.uuid()}`,
      event_time: t.toISOString(),
      event_type: type,
      region: rnd.pick(REGIONS),
      event_date: t.toISOString().slice(0, 10),
      metadata: { source: 'data-generator', schema_version: opts.version },
    };
    let ev: Record<string, unknown>;
    if (type === 'ORDER') {
      ev = {
        ...base,
        order_id: `ORD-${rnd.chars(8)}`,
        customer_id: `CUST-${rnd.int(0, 9999)}`,
        amount: rnd.int(1000, 100_000) / 100,
        currency: rnd.pick(CURRENCIES),
        status: rnd.pick(STATUSES),
        items: [],
      };
    } else if (type === 'USER') {
      ev = {
        ...base,
        user_id: `USER-${rnd.int(0, 4999)}`,
        action: rnd.pick(ACTIONS),
        device_type: rnd.pick(DEVICES),
        ip_address: `${rnd.int(1, 223)}.${rnd.int(0, 255)}.${rnd.int(0, 255)}.${rnd.int(1, 254)}`,
      };
      if (opts.version === 'v2') ev.user_agent = rnd.pick(AGENTS);
    } else {
      ev = {
        ...base,
        session_id: `SESSION-${rnd.chars(12)}`,
        page_url: `https://example.com/page${rnd.int(1, 50)}`,
        referrer: rnd.pick(['google.com', 'example.com']),
        time_on_page_seconds: rnd.int(5, 304),
      };
      if (opts.version === 'v2') ev.scroll_depth = rnd.int(0, 99);
    }
    recent.push(ev);
    if (recent.length > 256) recent.shift();
    yield ev;
  }
}

/**
 * Serialises an event as one NDJSON line. Amounts always carry a fraction (`12.0`, never `12`)
 * so a producer's money column infers as double from the first record, as real producers write it.
 */
export function toNdjsonLine(ev: Record<string, unknown>): string {
  return JSON.stringify(ev, (k, v) =>
    k === 'amount' && typeof v === 'number' ? `\u0000${v.toFixed(2)}` : v,
  ).replace(/"\\u0000([-0-9.]+)"/g, '$1');
}

/** `n` events as NDJSON text (with a trailing newline). */
export function sampleNdjson(n: number, opts: SampleOptions): string {
  const out: string[] = [];
  const it = sampleEvents(opts);
  for (let k = 0; k < n; k++) out.push(toNdjsonLine(it.next().value as Record<string, unknown>));
  return `${out.join('\n')}\n`;
}
