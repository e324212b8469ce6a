import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import { type Shape, ShapeScanner, SlotKind } from '../../../lambdas/src/records/shape-scanner.ts';

/** Rebuilds the object a scan describes, in the generic parser's representation. */
function rebuild(shape: Shape, scanner: ShapeScanner): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // As the generic parser stores keys: own data properties (`__proto__` too).
  const set = (o: Record<string, unknown>, k: string, v: unknown) =>
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  const child = (o: Record<string, unknown>, seg: string) => {
    if (!Object.hasOwn(o, seg)) set(o, seg, {});
    return o[seg] as Record<string, unknown>;
  };
  for (const s of shape.structNodes) {
    let o = out;
    for (const seg of s.keys) o = child(o, seg);
  }
  shape.slots.forEach((slot, i) => {
    let o = out;
    for (const seg of slot.keys.slice(0, -1)) o = child(o, seg);
    const kind = scanner.kinds[i];
    const v = scanner.valueAt(i);
    set(
      o,
      slot.keys.at(-1)!,
      kind === SlotKind.Int
        ? BigInt(v as number)
        : kind === SlotKind.EmptyList
          ? []
          : kind === SlotKind.String
            ? scanner.stringAt(i)
            : v,
    );
    if (kind === SlotKind.String) {
      // The copied bytes are the string's UTF-8.
      const bytes = scanner.bytesOf(i).subarray(scanner.byteStart[i], scanner.byteEnd[i]);
      expect(Buffer.from(bytes).equals(Buffer.from(scanner.stringAt(i), 'utf8'))).toBe(true);
    }
  });
  return out;
}

function normalize(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)));
}

const key = fc.oneof(
  fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_ .-]{0,8}$/),
  fc.constantFrom('café', 'Ünïcode', 'ид', '日本', '__proto__', 'constructor'),
);
const prim = fc.oneof(
  fc.string({ maxLength: 12, unit: 'binary' }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
);
// Objects nest up to three levels, so layouts that differ only in where an object opens occur.
const inner = fc.dictionary(key, prim, { minKeys: 1, maxKeys: 3 });
const middle = fc.dictionary(key, fc.oneof(prim, inner), { minKeys: 1, maxKeys: 3 });
const record = fc.dictionary(key, fc.oneof(prim, inner, middle), { maxKeys: 8 });

describe('ShapeScanner', () => {
  it('scans the sample layout and reuses the shape for the next record of the same layout', () => {
    const s = new ShapeScanner();
    const a = s.scan('{"event_id":"A-1","n":12,"x":1.5,"ok":true,"m":{"src":"gen","v":"v1"},"items":[]}');
    expect(a?.slots.map((x) => x.path)).toEqual(['event_id', 'n', 'x', 'ok', 'm.src', 'm.v', 'items']);
    expect(a?.structs).toEqual(['m']);
    expect([1, 2, 3].map((i) => s.valueAt(i))).toEqual([12, 1.5, true]);
    expect([0, 4, 5].map((i) => s.stringAt(i))).toEqual(['A-1', 'gen', 'v1']);
    expect([...s.kinds.slice(0, 7)]).toEqual([1, 2, 3, 4, 1, 1, 5]);
    const b = s.scan('{"event_id":"A-2","n":-3,"x":2e3,"ok":false,"m":{"src":"g","v":"v2"},"items":[ ]}');
    expect(b).toBe(a);
    expect(s.kinds[2]).toBe(SlotKind.Double); // 2e3 is a double by its text
    expect([s.stringAt(0), s.valueAt(1)]).toEqual(['A-2', -3]);
  });

  it('keeps 1.0 a double and hands long integers, escapes and arrays to the generic parser', () => {
    const s = new ShapeScanner();
    s.scan('{"a":1.0}');
    expect(s.kinds[0]).toBe(SlotKind.Double);
    expect(s.scan('{"a":9007199254740993}')).toBeUndefined();
    expect(s.scan('{"a":[1]}')).toBeUndefined();
    expect(s.scan('{"a":1,"a":2}')).toBeUndefined();
    expect(s.scan('{"a":{}}')).toBeUndefined();
    expect(s.scan('{"a":"tab\there"}')).toBeUndefined();
    // Escapes in keys, lone surrogates and two keys of one column are the generic parser's.
    expect(s.scan('{"a\\"b":1}')).toBeUndefined();
    expect(s.scan('{"a":"\\ud800"}')).toBeUndefined();
    expect(s.scan('{"a":"\\udc00x"}')).toBeUndefined();
    expect(s.scan('{"userId":1,"userid":2}')).toBeUndefined();
  });

  it('takes escaped strings (decoded to UTF-8) and keys as written, mapped to their column names', () => {
    const s = new ShapeScanner();
    const shape = s.scan(
      '{"FL_DATE":"a\\"b\\\\c\\/d\\n\\u00e9\\ud83d\\ude00","userId":7,"Café":{"Zip Code":"x"}}',
    );
    expect(shape?.slots.map((x) => x.path)).toEqual(['fl_date', 'userid', 'cafe.zip_code']);
    expect(shape?.slots.map((x) => x.keys)).toEqual([['FL_DATE'], ['userId'], ['Café', 'Zip Code']]);
    expect(shape?.structs).toEqual(['cafe']);
    expect(s.stringAt(0)).toBe('a"b\\c/d\né😀');
    expect(s.stringAt(2)).toBe('x');
    expect(s.bytesOf(0)).toBe(s.unescaped);
    expect(s.bytesOf(2)).toBe(s.bytes);
    // The next record of the layout without escapes reads from the input again.
    s.scan('{"FL_DATE":"plain","userId":8,"Café":{"Zip Code":"y"}}');
    expect(s.hasEscapes).toBe(false);
    expect(s.stringAt(0)).toBe('plain');
    // The same key in nested and enclosing objects is no collision.
    expect(
      s.scan('{"id":1,"actor":{"id":2},"repo":{"id":3,"actor":{"id":4}}}')?.slots.map((x) => x.path),
    ).toEqual(['id', 'actor.id', 'repo.id', 'repo.actor.id']);
  });

  it('tells layouts apart that differ only in where an object opens', () => {
    const s = new ShapeScanner();
    const a = s.scan('{"a":1,"b":{"c":2}}');
    const b = s.scan('{"a":{"b":1,"c":2}}');
    expect(a?.slots.map((x) => x.path)).toEqual(['a', 'b.c']);
    expect(b?.slots.map((x) => x.path)).toEqual(['a.b', 'a.c']);
    expect(b).not.toBe(a);
  });

  it('agrees with the generic parser on every record it accepts', () => {
    const s = new ShapeScanner();
    fc.assert(
      fc.property(record, fc.boolean(), (r, spaced) => {
        const line = spaced ? JSON.stringify(r, null, 1).replace(/\n/g, ' ') : JSON.stringify(r);
        const shape = s.scan(line);
        if (shape === undefined) return;
        expect(normalize(rebuild(shape, s))).toEqual(normalize(parseJsonRecord(line)));
      }),
      { numRuns: 2000 },
    );
  });

  it('never accepts a line the generic parser rejects', () => {
    const s = new ShapeScanner();
    fc.assert(
      fc.property(
        record,
        fc.nat(),
        fc.constantFrom('', ',', '}', '{', '"', ':', '1', 'x', ' ', '-', '.', 'e'),
        (r, at, junk) => {
          const line = JSON.stringify(r);
          const pos = at % (line.length + 1);
          for (const bad of [
            line.slice(0, pos) + junk + line.slice(pos),
            line.slice(0, pos) + line.slice(pos + 1),
          ]) {
            let genericOk = true;
            try {
              parseJsonRecord(bad);
            } catch {
              genericOk = false;
            }
            if (!genericOk) expect(s.scan(bad)).toBeUndefined();
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
