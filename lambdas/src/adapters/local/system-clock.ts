/** Real time and randomness, for the CLI and handlers (the core never reads them directly). */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock, Ids } from '../../ports/clock.ts';

export const systemClock: Clock = { nowMs: () => Date.now() };

export const randomIds: Ids = {
  uuid: () => randomUUID(),
  snapshotId: () => {
    // Java: UUID halves XOR-ed, masked to Long.MAX_VALUE; zero is not a valid id.
    const b = randomBytes(16);
    const id = (b.readBigUInt64BE(0) ^ b.readBigUInt64BE(8)) & 0x7fffffffffffffffn;
    return id === 0n ? 1n : id;
  },
  bytes16: () => new Uint8Array(randomBytes(16)),
};

/** Deterministic ids and clock for tests and golden files. */
export function seededIds(seed = 1): Ids {
  let n = seed;
  const next = () => {
    // xorshift32: deterministic, no global state
    n ^= n << 13;
    n >>>= 0;
    n ^= n >>> 17;
    n ^= n << 5;
    n >>>= 0;
    return n;
  };
  const hex = (k: number) => next().toString(16).padStart(8, '0').slice(0, k);
  return {
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(8)}${hex(4)}`,
    snapshotId: () => ((BigInt(next()) << 31n) ^ BigInt(next())) & 0x7fffffffffffffffn || 1n,
    bytes16: () => {
      const out = new Uint8Array(16);
      for (let i = 0; i < 16; i += 4) new DataView(out.buffer).setUint32(i, next());
      return out;
    },
  };
}

export function fixedClock(startMs: number, stepMs = 1000): Clock {
  let t = startMs - stepMs;
  return {
    nowMs: () => {
      t += stepMs;
      return t;
    },
  };
}
