/**
 * A sample change stream: Debezium envelopes (`{before, after, op, ts_ms, source}`) of a Postgres
 * `customers` table, as Debezium Server would put them on Kinesis (partition key = the row key).
 * Customers are created, updated (some several times in a row, as a busy row is), deleted, and
 * some deleted keys are created again. Pure: time and randomness come from the caller's clock
 * value and seed. An upsert table (config `upsert.customers = {key: ['id'], envelope: 'debezium'}`,
 * routed by `routing.tableField: 'source.table'`) must end up holding {@link finalState}.
 */
import { Prng } from './prng.ts';

export interface ChangeOptions {
  readonly seed: number;
  /** Epoch ms of the first change; each later one is a millisecond later. */
  readonly nowMs: number;
}

/** One customer row (the table's columns): `id` is the key. */
export interface CustomerRow {
  readonly id: number;
  readonly name: string;
  readonly email: string;
  readonly tier: string;
  readonly region: string;
  /** Changes the row has had since it was (last) created: an old image is never mistaken for a new one. */
  readonly revision: number;
  readonly updated_at: string;
}

export type ChangeEvent = Record<string, unknown> & {
  readonly op: 'c' | 'u' | 'd';
  readonly before: CustomerRow | null;
  readonly after: CustomerRow | null;
};

/** The table name the envelopes carry in `source.table`. */
export const CHANGE_TABLE = 'customers';

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Radia', 'Tim'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Perlman'];
const TIERS = ['free', 'pro', 'team', 'enterprise'] as const;
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-southeast-1'] as const;

/**
 * An endless, reproducible stream of customer changes. Roughly: 40 % creates, 35 % updates (a
 * third of them followed at once by one or two more of the same key), 15 % deletes, 10 %
 * re-creations of a deleted key.
 */
export function* customerChanges(opts: ChangeOptions): Generator<ChangeEvent> {
  const rnd = new Prng(opts.seed);
  const alive = new Map<number, CustomerRow>();
  const deleted: number[] = [];
  let nextId = 1001;
  let lsn = 24_000_000;
  let tx = 700;
  let i = 0;
  const envelope = (op: ChangeEvent['op'], before: CustomerRow | null, after: CustomerRow | null) => {
    const ts = opts.nowMs + i++;
    lsn += rnd.int(40, 400);
    return {
      before,
      after,
      op,
      ts_ms: ts,
      source: {
        version: '2.7.3.Final',
        connector: 'postgresql',
        name: 'shop',
        ts_ms: ts - rnd.int(1, 20),
        snapshot: 'false',
        db: 'shop',
        schema: 'public',
        table: CHANGE_TABLE,
        txId: tx++,
        lsn,
      },
      transaction: null,
    } as ChangeEvent;
  };
  const fresh = (id: number): CustomerRow => {
    const first = rnd.pick(FIRST);
    const last = rnd.pick(LAST);
    return {
      id,
      name: `${first} ${last}`,
      email: `${first}.${last}.${id}@example.com`.toLowerCase(),
      tier: rnd.pick(TIERS),
      region: rnd.pick(REGIONS),
      revision: 0,
      updated_at: new Date(opts.nowMs + i).toISOString(),
    };
  };
  const changed = (row: CustomerRow): CustomerRow => {
    const what = rnd.next();
    return {
      ...row,
      ...(what < 0.4
        ? { tier: rnd.pick(TIERS) }
        : what < 0.7
          ? {
              email:
                `${row.name.split(' ')[0]!}.${rnd.chars(4).toLowerCase()}.${row.id}@example.com`.toLowerCase(),
            }
          : { region: rnd.pick(REGIONS) }),
      revision: row.revision + 1,
      updated_at: new Date(opts.nowMs + i).toISOString(),
    };
  };
  const anyAlive = () => [...alive.keys()][rnd.int(0, alive.size - 1)]!;
  while (true) {
    const roll = rnd.next();
    if (alive.size < 8 || roll < 0.4 || (roll >= 0.9 && deleted.length === 0)) {
      const row = fresh(nextId++);
      alive.set(row.id, row);
      yield envelope('c', null, row);
    } else if (roll < 0.75) {
      const id = anyAlive();
      const burst = rnd.next() < 1 / 3 ? rnd.int(2, 3) : 1;
      for (let k = 0; k < burst; k++) {
        const before = alive.get(id)!;
        const after = changed(before);
        alive.set(id, after);
        yield envelope('u', before, after);
      }
    } else if (roll < 0.9) {
      const id = anyAlive();
      const before = alive.get(id)!;
      alive.delete(id);
      deleted.push(id);
      yield envelope('d', before, null);
    } else {
      const id = deleted.splice(rnd.int(0, deleted.length - 1), 1)[0]!;
      const row = fresh(id);
      alive.set(id, row);
      yield envelope('c', null, row);
    }
  }
}

/** The row key of a change: `after.id`, or `before.id` for a delete (its Kinesis partition key). */
export function changeKey(ev: ChangeEvent): string {
  return String((ev.after ?? ev.before)!.id);
}

/** Counts of a change stream, and what a table must hold after it: the last state of each key. */
export interface ChangeSummary {
  readonly changes: number;
  readonly keys: number;
  readonly creates: number;
  /** Creates of a key deleted before. */
  readonly recreates: number;
  readonly updates: number;
  readonly deletes: number;
  /** Key → row, for the keys whose last change is not a delete. */
  readonly rows: ReadonlyMap<number, CustomerRow>;
}

/** Folds changes, in stream order, into the rows they leave. */
export function finalState(changes: Iterable<ChangeEvent>): ChangeSummary {
  const rows = new Map<number, CustomerRow>();
  const seen = new Set<number>();
  let n = 0;
  let creates = 0;
  let recreates = 0;
  let updates = 0;
  let deletes = 0;
  for (const ev of changes) {
    n++;
    const id = Number(changeKey(ev));
    if (ev.op === 'd') {
      deletes++;
      rows.delete(id);
    } else {
      if (ev.op === 'u') updates++;
      else if (seen.has(id)) recreates++;
      else creates++;
      rows.set(id, ev.after!);
    }
    seen.add(id);
  }
  return { changes: n, keys: seen.size, creates, recreates, updates, deletes, rows };
}
