/**
 * Durations as the CLI takes them (`--older-than 5d`; `floe maintain` will use the same syntax):
 * a whole number and one unit, `s`, `m`, `h`, `d` or `w` (`0s`, `30m`, `12h`, `5d`, `2w`). Parsed
 * strictly: no fractions, signs, spaces, missing or compound units, so a typo cannot silently mean
 * something else (`5` could be seconds or days, `1.5d` could round either way).
 */
import { ErrorKind, FloeError } from '../errors.ts';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^(\d+)([smhdw])$/;

/** Milliseconds of `text`; `what` names the option in the error (e.g. `--older-than`). */
export function parseDuration(text: string, what = 'duration'): number {
  const m = DURATION.exec(text);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : Number.NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `${what} must be a whole number and a unit s, m, h, d or w (e.g. 0s, 30m, 12h, 5d), got '${text}'`,
      { context: { [what]: text } },
    );
  }
  return ms;
}

/** A short, rounded-down age for people: `45s`, `12m`, `5h 3m`, `3d 4h`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60];
  if (d > 0) return h > 0 ? `${d}d ${h}h` : `${d}d`;
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`;
  return m > 0 ? `${m}m` : `${s}s`;
}
