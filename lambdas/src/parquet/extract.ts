/**
 * Column extraction: for fields `names`, `outs[j][i] = src[i][names[j]]` in one pass over the
 * parent objects, with a function generated per list of names. A generic `o[key]` with a variable
 * key is a megamorphic keyed load in V8, and one pass per field touches every row object once per
 * column; the generated loop does monomorphic named loads and visits each object once
 * (measured ~3× faster on 200k rows × 12 fields).
 */

/** Marks a value whose parent struct is null (as opposed to a null value in a present parent). */
export const PARENT_NULL: unique symbol = Symbol('floe.parquet.parentNull');

export type Extractor = (src: ArrayLike<unknown>, n: number, outs: unknown[][]) => void;

const cache = new Map<string, Extractor>();

/**
 * The extractor for fields `names`. A null/undefined/`PARENT_NULL` parent yields `PARENT_NULL` in
 * every output; a missing key yields `undefined`. Names inherited from `Object.prototype`
 * (`constructor`, `__proto__` …) are read as own properties only.
 */
export function extractor(names: readonly string[]): Extractor {
  const cacheKey = JSON.stringify(names);
  let fn = cache.get(cacheKey);
  if (fn) return fn;
  const decl: string[] = [];
  const onNull: string[] = [];
  const onValue: string[] = [];
  names.forEach((name, j) => {
    const key = JSON.stringify(name); // a string literal: the name cannot inject code
    const read =
      name in Object.prototype ? `(Object.hasOwn(o, ${key}) ? o[${key}] : undefined)` : `o[${key}]`;
    decl.push(`const o${j} = outs[${j}];`);
    onNull.push(`o${j}[i] = PN;`);
    onValue.push(`o${j}[i] = ${read};`);
  });
  const body = `"use strict";
return function extract(src, n, outs) {
  ${decl.join('\n  ')}
  for (let i = 0; i < n; i++) {
    const o = src[i];
    if (o === null || o === undefined || o === PN) {
      ${onNull.join('\n      ')}
    } else {
      ${onValue.join('\n      ')}
    }
  }
};`;
  fn = new Function('PN', body)(PARENT_NULL) as Extractor;
  cache.set(cacheKey, fn);
  return fn;
}
