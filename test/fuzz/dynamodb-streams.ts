/**
 * DynamoDB change streams as Kinesis Data Streams for DynamoDB delivers them (issue 20), and an
 * independent model of the table they must leave, written from AWS's documentation, not from
 * lambdas/src:
 *
 * - a change record is `{eventName, tableName, dynamodb: {ApproximateCreationDateTime, Keys,
 *   NewImage?}, eventSource: "aws:dynamodb", …}` (the DynamoDB developer guide, "Using Kinesis
 *   Data Streams to capture changes to DynamoDB"); `INSERT` and `MODIFY` carry the item's whole new
 *   image, `REMOVE` its key;
 * - attribute values are DynamoDB JSON: `{"S": …}`, `{"N": "decimal text"}`, `{"BOOL": …}`,
 *   `{"NULL": true}`, `{"SS": […]}`, `{"L": […]}`, `{"M": {…}}`;
 * - the stream may deliver a change twice and out of order, so the table shows, per key, the
 *   change with the latest `ApproximateCreationDateTime` (microseconds): nothing when that one is
 *   a `REMOVE`.
 *
 * Items draw keys from a small pool (a string partition key and a numeric sort key), so keys
 * change several times, are removed and come back; attributes come and go between versions, and
 * integers reach 19 digits (never exact through a double).
 */
import fc from 'fast-check';

/** A source table's item after a change, in the model's plain terms. */
export interface ModelItem {
  readonly artist: string;
  readonly song: bigint;
  readonly plays?: bigint;
  readonly price?: string;
  readonly title?: string;
  readonly live?: boolean;
  readonly tags?: readonly string[];
  readonly label?: { readonly name: string; readonly year: bigint };
}

export interface ModelChange {
  readonly op: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly item: ModelItem;
  /** Microseconds since the epoch. */
  readonly time: bigint;
}

export interface DynamoDbStream {
  /** The DynamoDB table's name as the stream writes it (mixed case). */
  readonly source: string;
  /** Every change, in the order the source table made them (times strictly increase per key). */
  readonly changes: readonly ModelChange[];
  /** The records as delivered: shuffled, some twice. */
  readonly lines: readonly string[];
}

export const SOURCE_TABLE = 'Music_Catalog';
const T0 = 1_733_000_000_000_000n; // 2024-11-30, in microseconds

const itemArb = (artist: string, song: bigint): fc.Arbitrary<ModelItem> =>
  fc.record(
    {
      artist: fc.constant(artist),
      song: fc.constant(song),
      plays: fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }),
      price: fc
        .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 99 }))
        .map(([a, b]) => `${a}.${String(b).padStart(2, '0')}`),
      title: fc.string({ maxLength: 12 }),
      live: fc.boolean(),
      tags: fc.uniqueArray(fc.constantFrom('rock', 'jazz', 'pop', 'folk'), { minLength: 1, maxLength: 3 }),
      label: fc.record({
        name: fc.constantFrom('EMI', 'Sub Pop'),
        year: fc.bigInt({ min: 1950n, max: 2030n }),
      }),
    },
    { requiredKeys: ['artist', 'song'] },
  );

/**
 * A stream over at most `4 × maxKeys` item keys: histories of a key's changes (times increasing
 * per key; a key may have several histories, continued one after another), delivered shuffled,
 * some twice.
 */
export function dynamoDbStreamArb(opts: {
  maxKeys: number;
  minHistories: number;
  maxHistories: number;
}): fc.Arbitrary<DynamoDbStream> {
  const keyArb = fc.tuple(
    fc.constantFrom('Ana', 'Bo', 'Cy', 'Dee'),
    fc.bigInt({ min: 1n, max: BigInt(opts.maxKeys) }),
  );
  const historyArb = keyArb.chain(([artist, song]) =>
    fc.array(
      fc.record({
        op: fc.constantFrom<'INSERT' | 'MODIFY' | 'REMOVE'>('INSERT', 'MODIFY', 'MODIFY', 'REMOVE'),
        item: itemArb(artist, song),
        gap: fc.bigInt({ min: 1n, max: 5_000_000n }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
  );
  return fc
    .record({
      histories: fc.array(historyArb, { minLength: opts.minHistories, maxLength: opts.maxHistories }),
      order: fc.array(fc.nat(), { minLength: 1, maxLength: 64 }),
      dups: fc.array(fc.nat(), { minLength: opts.minHistories, maxLength: 2 * opts.maxHistories }),
      precision: fc.constantFrom('MICROSECOND', 'MILLISECOND', 'none'),
    })
    .map(({ histories, order, dups, precision }) => {
      const changes: ModelChange[] = [];
      const seen = new Map<string, bigint>();
      for (const h of histories) {
        for (const c of h) {
          const k = `${c.item.artist}/${c.item.song}`;
          // One clock per key: its changes strictly later than its last (in whole ms, so every precision keeps the order).
          const t = (seen.get(k) ?? T0) + (c.gap / 1000n + 1n) * 1000n;
          seen.set(k, t);
          changes.push({ op: c.op, item: c.item, time: t });
        }
      }
      const lines = changes.map((c, i) => changeRecord(c, i, precision));
      for (const d of dups) if (lines.length > 0) lines.push(lines[d % changes.length]!);
      // A deterministic shuffle drawn from `order` (Fisher–Yates).
      for (let i = lines.length - 1; i > 0; i--) {
        const j = (order[i % order.length]! + i * 7919) % (i + 1);
        [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      }
      return { source: SOURCE_TABLE, changes, lines };
    });
}

/** The record Kinesis Data Streams for DynamoDB writes for a change. */
export function changeRecord(c: ModelChange, i: number, precision: string): string {
  const keys = { Artist: { S: c.item.artist }, SongId: { N: c.item.song.toString() } };
  const time =
    precision === 'MILLISECOND' || precision === 'none' ? (c.time / 1000n).toString() : c.time.toString();
  const dynamodb: Record<string, unknown> = {
    ApproximateCreationDateTime: '@TIME@',
    ...(precision === 'none' ? {} : { ApproximateCreationDateTimePrecision: precision }),
    Keys: keys,
    ...(c.op === 'REMOVE' ? { OldImage: image(c.item) } : { NewImage: image(c.item) }),
    SizeBytes: 100 + i,
  };
  const record = {
    awsRegion: 'eu-west-1',
    eventID: `e-${i}`,
    eventName: c.op,
    userIdentity: null,
    recordFormat: 'application/json',
    tableName: SOURCE_TABLE,
    dynamodb,
    eventSource: 'aws:dynamodb',
  };
  // The time is a JSON number, as the stream writes it.
  return JSON.stringify(record).replace('"@TIME@"', time);
}

function image(item: ModelItem): Record<string, unknown> {
  const out: Record<string, unknown> = { Artist: { S: item.artist }, SongId: { N: item.song.toString() } };
  if (item.plays !== undefined) out.Plays = { N: item.plays.toString() };
  if (item.price !== undefined) out.Price = { N: item.price };
  if (item.title !== undefined) out.Title = item.title === '' ? { NULL: true } : { S: item.title };
  if (item.live !== undefined) out.Live = { BOOL: item.live };
  if (item.tags !== undefined) out.Tags = { SS: [...item.tags] };
  if (item.label !== undefined)
    out.Label = { M: { Name: { S: item.label.name }, Year: { N: item.label.year.toString() } } };
  return out;
}

/** The source table's final state: key → the item of its latest change, unless that was a REMOVE. */
export function finalState(changes: readonly ModelChange[]): Map<string, ModelItem> {
  const latest = new Map<string, ModelChange>();
  for (const c of changes) {
    const k = itemKey(c.item.artist, c.item.song);
    const had = latest.get(k);
    if (had === undefined || c.time > had.time) latest.set(k, c);
  }
  const out = new Map<string, ModelItem>();
  for (const [k, c] of latest) if (c.op !== 'REMOVE') out.set(k, c.item);
  return out;
}

export function itemKey(artist: string, song: bigint): string {
  return `${artist}/${song}`;
}

/** An item's state as text, to compare with a row read back (columns: the lower-cased attribute names). */
export function itemState(item: ModelItem): string {
  return JSON.stringify([
    item.plays?.toString() ?? null,
    item.price === undefined ? null : Number(item.price),
    item.title === undefined || item.title === '' ? null : item.title,
    item.live ?? null,
    item.tags ? [...item.tags].sort().join(',') : null,
    item.label ? `${item.label.name}:${item.label.year}` : null,
  ]);
}

/** A row read back from the table, as {@link itemState} spells an item. */
export function rowState(row: Record<string, unknown>): string {
  const big = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const label = row.label as { name?: unknown; year?: unknown } | null | undefined;
  return JSON.stringify([
    big(row.plays),
    row.price === null || row.price === undefined ? null : Number(row.price),
    row.title ?? null,
    row.live ?? null,
    Array.isArray(row.tags) ? [...(row.tags as string[])].sort().join(',') : null,
    label ? `${String(label.name)}:${String(label.year)}` : null,
  ]);
}
