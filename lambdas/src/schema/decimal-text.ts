/**
 * Exact decimal conversion for `decimal(P,S)` columns: text → unscaled `bigint`. Money must not
 * pass through binary floating point, so the source is always decimal text: a JSON string
 * (`"1234.50"`), the parser's kept literal (`JsonNumberText`), or `String(n)` of a double, which
 * is the shortest text that reads back as `n` and therefore equals the written literal whenever
 * that literal had at most 15 significant digits.
 */

const DECIMAL_RE = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const POW10: bigint[] = [];
for (let i = 0, p = 1n; i <= 80; i++, p *= 10n) POW10.push(p);

/** The unscaled value, or a reason the text does not fit `decimal(precision, scale)`. */
export function decimalFromText(
  text: string,
  precision: number,
  scale: number,
): { ok: true; unscaled: bigint } | { ok: false; reason: string } {
  const m = DECIMAL_RE.exec(text);
  if (!m) return { ok: false, reason: 'not a decimal number' };
  const intPart = m[2]!;
  const frac = m[3] ?? '';
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  let digits = (intPart + frac).replace(/^0+(?=\d)/, '');
  // value = digits × 10^(exp − frac.length); we want value × 10^scale
  let shift = exp - frac.length + scale;
  if (shift < 0) {
    // Digits below the column's scale must be zeros; rounding would change the value silently.
    const cut = Math.min(-shift, digits.length);
    if (!/^0*$/.test(digits.slice(digits.length - cut))) {
      return { ok: false, reason: `has more than ${scale} fractional digits` };
    }
    digits = digits.slice(0, digits.length - cut) || '0';
    shift = 0;
  }
  const significant = digits.replace(/^0+/, '').length;
  if (significant + shift > precision) {
    return { ok: false, reason: `needs more than ${precision} digits (decimal(${precision},${scale}))` };
  }
  let unscaled = BigInt(digits) * POW10[shift]!;
  if (m[1] === '-') unscaled = -unscaled;
  return { ok: true, unscaled };
}

/** Unscaled value of an integer in `decimal(precision, scale)`, or `undefined` if too wide. */
export function decimalFromBigint(v: bigint, precision: number, scale: number): bigint | undefined {
  const unscaled = v * POW10[scale]!;
  const abs = unscaled < 0n ? -unscaled : unscaled;
  return abs < POW10[precision]! ? unscaled : undefined;
}
