/**
 * A flights-like NDJSON stream (issue 18, "width"): one record per departure, five fields —
 *
 *   {"ts":"2025-01-01T00:00:10Z","origin":"ATL","dest":"LAX","dep_delay":3,"distance":1947}
 *
 * `ts` an ISO-8601 instant with `Z`, increasing (never decreasing) through one year; `origin` and
 * `dest` 3-letter airport codes out of {@link FLIGHT_AIRPORTS} (230), drawn Zipf-like as real
 * traffic is (rank k with weight k^−s, s = 0.96: the busiest origin ATL ~15 % of the records, the
 * smallest ~0.08 %); `dest` from the same distribution, never equal to `origin`; `dep_delay` an
 * integer −20…120 (mostly small); `distance` an integer 100…2600, fixed per (origin, dest) route.
 * Pure and deterministic: the same (records, seed, options) give the same bytes. ~88 bytes a line.
 *
 * Used by bench/width.ts (`floe load` with one table per origin vs DuckDB `PARTITION_BY origin`)
 * and reusable by tests: {@link flightLines} yields lines, {@link writeFlightsFile} streams a file.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/** Real, busy airports first (rank 1 is the busiest); padded with unused codes to 230. */
const REAL_AIRPORTS = `ATL DFW DEN ORD LAX CLT MCO LAS PHX MIA SEA IAH JFK EWR FLL MSP SFO DTW BOS SLC PHL BWI
TPA SAN MDW BNA IAD DAL DCA AUS HOU LGA PDX STL RDU HNL SMF SJC MSY MCI OAK SAT CLE RSW IND PIT SNA CMH
CVG BDL JAX OGG ABQ BUR ONT MKE OMA RNO BOI ANC PBI CHS SDF RIC ELP TUS OKC BUF BHM GRR ALB MEM ORF SAV
LIT PVD KOA LIH ISP SYR DSM TUL GEG ROC MYR PSP PNS ICT SRQ LGB CAK HPN XNA TYS PWM GSP SJU GSO FAT DAY
COS MHT BZN ECP MSN CID SBA LEX HSV AVL CRP LBB AMA MAF MOB JAN GPT SHV BTR LFT BIL FAR FSD RAP SGF MLI
PIA BMI CMI SPI EVV FWA SBN LAN AZO FNT MBS TVC GRB ATW CWA DLH RST MSO GTF HLN FCA IDA PIH TWF SUN JAC
COD CPR CYS GJT DRO ASE EGE HDN MTJ GUC FLG PRC YUM SBP MRY SCK STS RDD ACV MFR EUG RDM PSC YKM ALW LWS
BLI FAI JNU KTN SIT BET OME OTZ BRW ADQ ITO EYW VPS TLH GNV DAB MLB PGD PIE SFB CHA TRI ROA CHO LYH PHF
ILM OAJ EWN CAE FLO AGS CSG ABY VLD BQK MCN BIS GFK MOT ABR PIR HYS GCK SLN MHK JLN TXK ELM ITH BGM IAG`;

/** How many airports the stream draws from. */
export const FLIGHT_AIRPORT_COUNT = 230;

/** The 230 airport codes, busiest first (distinct upper-case 3-letter codes). */
export const FLIGHT_AIRPORTS: readonly string[] = Object.freeze(airportCodes(FLIGHT_AIRPORT_COUNT));

function airportCodes(n: number): string[] {
  const codes = [...new Set(REAL_AIRPORTS.split(/\s+/).filter((c) => c !== ''))].slice(0, n);
  // Pad (deterministically) with codes that are not in the list, should the list be short.
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (let i = 0; codes.length < n; i++) {
    const c = `Q${A[Math.floor(i / 26) % 26]}${A[i % 26]}`;
    if (!codes.includes(c)) codes.push(c);
  }
  return codes;
}

export interface FlightsOptions {
  /** Records (lines) to generate. */
  readonly records: number;
  /** PRNG seed (default 7). */
  readonly seed?: number;
  /** Zipf exponent of the airport ranks (default 0.96: the busiest ~15 %). */
  readonly zipfS?: number;
  /** Airports drawn from, the first of {@link FLIGHT_AIRPORTS} (default all 230). */
  readonly airports?: number;
  /** First timestamp, epoch ms (default 2025-01-01T00:00:00Z); the stream spans one year from it. */
  readonly startMs?: number;
}

const YEAR_S = 365 * 86_400;
const DAY_S = 86_400;

/** mulberry32, inline so the stream's bytes never depend on another module. */
function prng(seed: number): () => number {
  let state = seed >>> 0 || 0x9e3779b9;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The share of records each airport gets as origin (Zipf weights, normalised), busiest first. */
export function airportShares(opts: Pick<FlightsOptions, 'zipfS' | 'airports'> = {}): number[] {
  const n = opts.airports ?? FLIGHT_AIRPORT_COUNT;
  const s = opts.zipfS ?? 0.96;
  const w = Array.from({ length: n }, (_, k) => (k + 1) ** -s);
  const total = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / total);
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** The NDJSON lines (no newline), in order. */
export function* flightLines(opts: FlightsOptions): Generator<string> {
  const n = opts.airports ?? FLIGHT_AIRPORT_COUNT;
  if (n < 2 || n > FLIGHT_AIRPORT_COUNT) throw new Error(`airports must be 2…${FLIGHT_AIRPORT_COUNT}`);
  const codes = FLIGHT_AIRPORTS.slice(0, n);
  const shares = airportShares(opts);
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let k = 0; k < n; k++) {
    acc += shares[k]!;
    cdf[k] = acc;
  }
  cdf[n - 1] = 1;
  const rnd = prng(opts.seed ?? 7);
  const draw = (): number => {
    const u = rnd();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  // One distance per route, from a fixed hash of the two ranks (not the seed: routes are geography).
  const distance = (o: number, d: number): number => {
    const a = Math.min(o, d);
    const b = Math.max(o, d);
    let h = Math.imul(a + 1, 0x9e3779b1) ^ Math.imul(b + 1, 0x85ebca77);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
    return 100 + ((h >>> 0) % 2501);
  };
  const startS = Math.floor((opts.startMs ?? Date.UTC(2025, 0, 1)) / 1000);
  const records = opts.records;
  let day = -1;
  let datePrefix = '';
  for (let i = 0; i < records; i++) {
    // Increasing through one year: record i at start + i × year / records (whole seconds).
    const t = startS + Math.floor((i * YEAR_S) / records);
    const d = Math.floor(t / DAY_S);
    if (d !== day) {
      day = d;
      datePrefix = new Date(d * DAY_S * 1000).toISOString().slice(0, 11);
    }
    const sod = t - d * DAY_S;
    const ts = `${datePrefix}${pad2(Math.floor(sod / 3600))}:${pad2(Math.floor(sod / 60) % 60)}:${pad2(sod % 60)}Z`;
    const o = draw();
    let dst = draw();
    while (dst === o) dst = draw();
    const u = rnd();
    const delay = -20 + Math.floor(141 * u * u * u);
    yield `{"ts":"${ts}","origin":"${codes[o]}","dest":"${codes[dst]}","dep_delay":${delay},"distance":${distance(o, dst)}}`;
  }
}

export interface FlightsFile {
  readonly path: string;
  readonly lines: number;
  readonly bytes: number;
  /** Records per origin code (only codes that occur). */
  readonly origins: ReadonlyMap<string, number>;
}

/** Streams {@link flightLines} to `path` (newline after every line); returns counts. */
export async function writeFlightsFile(path: string, opts: FlightsOptions): Promise<FlightsFile> {
  const out = createWriteStream(path);
  const origins = new Map<string, number>();
  let bytes = 0;
  let lines = 0;
  let chunk: string[] = [];
  let chunkChars = 0;
  const flush = async () => {
    const text = `${chunk.join('\n')}\n`;
    chunk = [];
    chunkChars = 0;
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  try {
    for (const line of flightLines(opts)) {
      // `"origin":"XXX"` sits at a fixed offset: `{"ts":"` + 20 + `","origin":"`.
      const origin = line.slice(39, 42);
      origins.set(origin, (origins.get(origin) ?? 0) + 1);
      chunk.push(line);
      chunkChars += line.length + 1;
      lines++;
      if (chunkChars >= 1 << 20) await flush();
    }
    if (chunk.length > 0) await flush();
  } finally {
    out.end();
    await once(out, 'close');
  }
  return { path, lines, bytes, origins };
}
