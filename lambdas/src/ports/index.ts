export type { Catalog, LoadedTable, TableIdentifier } from './catalog.ts';
export { tableIdToString } from './catalog.ts';
export type { Clock, Ids } from './clock.ts';
export type {
  DeadLetterEntry,
  DeadLetterListOptions,
  DeadLetterRecord,
  DeadLetterStore,
} from './dead-letters.ts';
export { deadLetterKey, deadLetterRecord, deadLetterSourcePrefix } from './dead-letters.ts';
export type { AppendOutcome, Ledger, LedgerEntry, LedgerFile, StagedRange } from './ledger.ts';
export { compareSequence, padSequence, unbrokenRun } from './ledger.ts';
export type { Lease, Lock } from './lock.ts';
export { leaseRemainingMs, leaseValid } from './lock.ts';
export type { ObjectEntry, ObjectStore } from './object-store.ts';
export { listEntries } from './object-store.ts';
export type { SchemaRegistry, SchemaVersion } from './schema-registry.ts';
