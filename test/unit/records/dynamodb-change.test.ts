/**
 * DynamoDB change records (records/dynamodb-change.ts): attribute values unmarshalled exactly, the
 * change read as an upsert or a delete of the item's key, its time as a version in microseconds.
 * Shapes from the DynamoDB developer guide ("Using Kinesis Data Streams to capture changes to
 * DynamoDB", "Data type descriptors").
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig, upsertFor } from '../../../lambdas/src/config.ts';
import { readChange } from '../../../lambdas/src/records/change-event.ts';
import {
  dynamoDbKeyNames,
  dynamoDbTableOf,
  readDynamoDbChange,
  unmarshal,
  unmarshalItem,
} from '../../../lambdas/src/records/dynamodb-change.ts';
import { JsonNumberText, type JsonObject, parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';

const parse = (s: string) => parseJsonRecord(s) as JsonObject;

/** The developer guide's example, as the stream writes it. */
const MODIFY = `{"awsRegion":"us-west-2","eventID":"9fe8b0a0-5b6e-4b8e-a1b4-1e8e3e6a2f10","eventName":"MODIFY",
 "userIdentity":null,"recordFormat":"application/json","tableName":"Music",
 "dynamodb":{"ApproximateCreationDateTime":1697558547918123,"ApproximateCreationDateTimePrecision":"MICROSECOND",
   "Keys":{"Artist":{"S":"No One You Know"},"SongTitle":{"S":"Call Me Today"}},
   "NewImage":{"Artist":{"S":"No One You Know"},"SongTitle":{"S":"Call Me Today"},"AlbumTitle":{"S":"Somewhat Famous"},
     "Awards":{"N":"10"},"Plays":{"N":"12345678901234567890"},"Rating":{"N":"4.50"},"Explicit":{"BOOL":false},
     "Notes":{"NULL":true},"Genres":{"SS":["Rock","Pop"]},"Chart":{"NS":["3","7.5"]},"Cover":{"B":"AAEC"},
     "Credits":{"L":[{"S":"a"},{"N":"2"}]},"Label":{"M":{"Name":{"S":"EMI"},"Year":{"N":"1998"}}}},
   "OldImage":{"Artist":{"S":"No One You Know"},"SongTitle":{"S":"Call Me Today"}},"SizeBytes":300},
 "eventSource":"aws:dynamodb"}`;

describe('unmarshal', () => {
  it('reads every type descriptor exactly', () => {
    const c = readDynamoDbChange(parse(MODIFY), 'music');
    expect(c).toEqual({
      ok: true,
      op: 'upsert',
      key: ['artist', 'songtitle'],
      version: 1697558547918123n,
      row: {
        artist: 'No One You Know',
        songtitle: 'Call Me Today',
        albumtitle: 'Somewhat Famous',
        awards: 10n,
        plays: 12345678901234567890n,
        rating: new JsonNumberText('4.50', 4.5),
        explicit: false,
        notes: null,
        genres: ['Rock', 'Pop'],
        chart: [3n, new JsonNumberText('7.5', 7.5)],
        cover: 'AAEC',
        credits: ['a', 2n],
        // Nested names stay as they are: the conversion names their columns, as for any JSON.
        label: { Name: 'EMI', Year: 1998n },
      },
    });
  });

  it('keeps any integer exact, however many digits (never through a double)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }), (n) => {
        expect(unmarshal({ N: n.toString() }, 'x')).toBe(n);
        expect(unmarshal({ NS: [n.toString()] }, 'x')).toEqual([n]);
      }),
    );
  });

  it('keeps a fraction as its text', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat({ max: 10 ** 9 }), (a, b) => {
        const text = `${a}.${String(b).padStart(9, '0')}`;
        const v = unmarshal({ N: text }, 'x');
        expect(v).toBeInstanceOf(JsonNumberText);
        expect((v as JsonNumberText).text).toBe(text);
      }),
    );
  });

  it.each([
    [{ N: 'ten' }, "attribute a: N holds 'ten', not a number"],
    [{ N: 10 }, 'attribute a: N holds 10, not text'],
    [{ S: 'x', N: '1' }, 'attribute a: an attribute value has exactly one type tag'],
    [{ Q: 'x' }, "attribute a: unknown type tag 'Q'"],
    [{ BOOL: 'yes' }, 'attribute a: BOOL holds "yes"'],
    [{ M: [] }, 'attribute a: M holds []'],
  ])('refuses %j, naming the attribute', (av, message) => {
    const c = readDynamoDbChange(
      parse(
        JSON.stringify({
          eventName: 'INSERT',
          tableName: 'T',
          eventSource: 'aws:dynamodb',
          dynamodb: {
            ApproximateCreationDateTime: 1,
            Keys: { k: { S: '1' } },
            NewImage: { k: { S: '1' }, a: av },
          },
        }),
      ),
      't',
    );
    expect(c.ok).toBe(false);
    if (c.ok) return;
    expect(c.reason).toBe('invalid-value');
    expect(`${c.detail}`).toContain("table 't'");
    expect(c.detail.replace(/^table 't': DynamoDB change /, '')).toContain(message.split(':')[0]!);
    expect(c.detail).toContain(message.slice(message.indexOf(':') + 2));
  });

  it('unmarshals nested maps and lists with their paths in errors', () => {
    expect(unmarshalItem(parse('{"m":{"M":{"l":{"L":[{"M":{"x":{"BOOL":true}}}]}}}}'))).toEqual({
      m: { l: [{ x: true }] },
    });
    expect(() => unmarshalItem(parse('{"m":{"M":{"l":{"L":[{"Z":1}]}}}}'))).toThrow(/unknown type tag 'Z'/);
  });
});

describe('readDynamoDbChange', () => {
  const change = (over: Record<string, unknown>, d: Record<string, unknown> = {}) =>
    parse(
      JSON.stringify({
        eventName: 'INSERT',
        tableName: 'Orders',
        eventSource: 'aws:dynamodb',
        ...over,
        dynamodb: {
          ApproximateCreationDateTime: 1_700_000_000_000_000,
          Keys: { PK: { S: 'a' }, SK: { N: '1' } },
          NewImage: { PK: { S: 'a' }, SK: { N: '1' }, Qty: { N: '3' } },
          ...d,
        },
      }),
    );

  it('INSERT and MODIFY upsert the new image; REMOVE deletes the key', () => {
    for (const name of ['INSERT', 'MODIFY']) {
      const c = readDynamoDbChange(change({ eventName: name }), 'orders');
      expect(c).toMatchObject({
        ok: true,
        op: 'upsert',
        row: { pk: 'a', sk: 1n, qty: 3n },
        key: ['pk', 'sk'],
      });
    }
    const removed = readDynamoDbChange(change({ eventName: 'REMOVE' }, { NewImage: undefined }), 'orders');
    expect(removed).toEqual({
      ok: true,
      op: 'delete',
      row: { pk: 'a', sk: 1n },
      key: ['pk', 'sk'],
      version: 1_700_000_000_000_000n,
    });
  });

  it('reads the time in microseconds whatever precision the stream writes', () => {
    const at = (t: number, precision?: string) => {
      const c = readDynamoDbChange(
        change(
          {},
          {
            ApproximateCreationDateTime: t,
            ...(precision ? { ApproximateCreationDateTimePrecision: precision } : {}),
          },
        ),
        'orders',
      );
      return c.ok ? c.version : c.detail;
    };
    expect(at(1_700_000_000_123_456, 'MICROSECOND')).toBe(1_700_000_000_123_456n);
    expect(at(1_700_000_000_123, 'MILLISECOND')).toBe(1_700_000_000_123_000n);
    expect(at(1_700_000_000_123)).toBe(1_700_000_000_123_000n); // milliseconds by size
    expect(at(1_700_000_000)).toBe(1_700_000_000_000_000n); // DynamoDB Streams: seconds
    expect(at(-1)).toMatch(/ApproximateCreationDateTime is -1/);
  });

  it('refuses what is not a change, naming the table and the field', () => {
    const bad = (over: Record<string, unknown>, d: Record<string, unknown> = {}) => {
      const c = readDynamoDbChange(change(over, d), 'orders');
      if (c.ok) throw new Error('expected a refusal');
      return [c.reason, c.detail];
    };
    expect(bad({ eventName: 'TTL' })).toEqual([
      'bad-operation',
      'table \'orders\': DynamoDB change eventName is "TTL"; expected INSERT, MODIFY or REMOVE',
    ]);
    expect(bad({}, { Keys: {} })[0]).toBe('missing-key');
    const [reason, detail] = bad({ eventName: 'MODIFY' }, { NewImage: undefined });
    expect(reason).toBe('missing-key');
    expect(detail).toContain('StreamViewType NEW_IMAGE');
  });

  it('the key values come from Keys, and attribute names become column names', () => {
    const c = readDynamoDbChange(
      change({}, { NewImage: { PK: { S: 'stale' }, 'Unit Price': { N: '2' } } }),
      'orders',
    );
    expect(c).toMatchObject({ ok: true, row: { pk: 'a', sk: 1n, unit_price: 2n } });
  });

  it('names its source table: tableName, else the stream ARN', () => {
    expect(dynamoDbTableOf(change({}))).toBe('Orders');
    expect(
      dynamoDbTableOf(
        change({
          tableName: undefined,
          eventSourceARN: 'arn:aws:dynamodb:us-east-1:1:table/Legacy/stream/2024',
        }),
      ),
    ).toBe('Legacy');
    expect(dynamoDbTableOf(parse('{"eventSource":"aws:dynamodb","tableName":"X"}'))).toBeUndefined();
    expect(dynamoDbTableOf(parse('{"eventSource":"aws:s3","dynamodb":{},"tableName":"X"}'))).toBeUndefined();
    expect(dynamoDbKeyNames(change({}))).toEqual(['pk', 'sk']);
  });
});

describe('readChange with the dynamodb envelope', () => {
  it('a table configured with another key refuses the change; with no config the data declares it', () => {
    const record = parse(MODIFY);
    const cfg = parseConfig({ upsert: { music: { key: ['artist'] } } });
    const refused = readChange({ key: ['artist'], envelope: 'dynamodb' }, record, 'music');
    expect(refused).toMatchObject({ ok: false, reason: 'missing-key' });
    expect(upsertFor(cfg, 'music')).toEqual({ key: ['artist'] });
    const ok = readChange({ key: ['artist', 'songtitle'], envelope: 'dynamodb' }, record, 'music');
    expect(ok).toMatchObject({ ok: true, op: 'upsert', version: 1697558547918123n });
  });
});
