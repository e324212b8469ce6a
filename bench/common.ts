/** Small helpers shared by the benchmarks. */
import { sampleEvents, toNdjsonLine } from '../lambdas/src/sample/sample-events.ts';

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** The value at quantile q of non-empty `xs` (nearest rank: p90 of 7 runs is the slowest). */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export function envInt(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${v}`);
  return n;
}

/** One line of the final results table. */
export interface SummaryRow {
  readonly measure: string;
  readonly value: string;
  readonly target: string;
  /** true: target met; false: missed; undefined: informational. */
  readonly pass?: boolean;
}

export function printSummary(rows: readonly SummaryRow[]): void {
  const w = [
    Math.max(7, ...rows.map((r) => r.measure.length)),
    Math.max(6, ...rows.map((r) => r.value.length)),
    Math.max(6, ...rows.map((r) => r.target.length)),
  ];
  const mark = (r: SummaryRow) => (r.pass === undefined ? '' : r.pass ? 'PASS' : 'MISS');
  console.log(
    `| ${'measure'.padEnd(w[0]!)} | ${'result'.padEnd(w[1]!)} | ${'target'.padEnd(w[2]!)} |      |`,
  );
  console.log(`|${'-'.repeat(w[0]! + 2)}|${'-'.repeat(w[1]! + 2)}|${'-'.repeat(w[2]! + 2)}|------|`);
  for (const r of rows) {
    console.log(
      `| ${r.measure.padEnd(w[0]!)} | ${r.value.padEnd(w[1]!)} | ${r.target.padEnd(w[2]!)} | ${mark(r).padEnd(4)} |`,
    );
  }
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * `n` sample events (ORDER 40 %, USER 30 %, CLICK 30 %) as NDJSON lines. `relabel` may replace the
 * `event_type` (the routing field), e.g. to spread events over many tables.
 */
export function sampleLines(
  n: number,
  seed: number,
  relabel?: (type: string, index: number) => string,
  version: 'v1' | 'v2' = 'v2',
): string[] {
  const it = sampleEvents({ seed, nowMs: Date.UTC(2026, 10, 29, 12), version });
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    // A copy: the generator keeps recent events to repeat them as duplicates.
    const ev = { ...(it.next().value as Record<string, unknown>) };
    if (relabel) ev.event_type = relabel(String(ev.event_type), i);
    out.push(toNdjsonLine(ev));
  }
  return out;
}

/**
 * Timed sections on the V8 profiler's clock (µs, CLOCK_MONOTONIC), by name: with
 * BENCH_PROFILE_WINDOWS=<file> they are written there at the end, so `bench/profile-summary.ts`
 * can cut one kind of section out of a `--cpu-prof` profile of the whole bench.
 */
const windows: Record<string, [number, number][]> = {};
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = nowUs();
  try {
    return await fn();
  } finally {
    const list = windows[name] ?? [];
    list.push([t0, nowUs()]);
    windows[name] = list;
  }
}

export async function writeProfileWindows(): Promise<void> {
  const file = process.env.BENCH_PROFILE_WINDOWS;
  if (!file) return;
  const { writeFile } = await import('node:fs/promises');
  await writeFile(file, JSON.stringify(windows));
  console.log(`\nprofile windows (${Object.keys(windows).join(', ')}) written to ${file}`);
}
