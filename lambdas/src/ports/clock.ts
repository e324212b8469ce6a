/** Time and identity sources, injected so the core stays deterministic under test. */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

export interface Ids {
  /** A random (v4) UUID string. */
  uuid(): string;
  /** A positive 63-bit snapshot id (Java: UUID halves XOR-ed, masked to Long.MAX_VALUE). */
  snapshotId(): bigint;
  /** 16 random bytes (Avro sync markers). */
  bytes16(): Uint8Array;
}
