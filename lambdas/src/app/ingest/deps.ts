/** What the ingest app runs on, and the views of it that the helpers both apps share take. */
import type { FloeConfig } from '../../config.ts';
import type { LoadDeps } from '../../engine/load-types.ts';
import type { ParquetEncoder } from '../../engine/row-files.ts';
import type { TableCache } from '../../engine/table-cache.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { Clock, Ids } from '../../ports/clock.ts';
import type { DeadLetterStore } from '../../ports/dead-letters.ts';
import type { Ledger } from '../../ports/ledger.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import type { SchemaRegistry } from '../../ports/schema-registry.ts';

export interface IngestDeps {
  readonly config: FloeConfig;
  readonly catalog: Catalog;
  readonly store: ObjectStore;
  readonly ledger: Ledger;
  readonly deadLetters: DeadLetterStore;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly tables: TableCache;
  /** Required for `format: avro-gsr` (pass a `CachedSchemaRegistry`). */
  readonly registry?: SchemaRegistry;
  /** Where pending fragments go, e.g. `s3://staging-bucket/floe` (a lifecycle rule may expire them after days). */
  readonly stagingUri: string;
  readonly maxRowsPerFile?: number;
  /** Scan clean JSON records straight into columns (default true). */
  readonly fastPath?: boolean;
  /**
   * Tables staged at once (default `INGEST_CONCURRENCY`, 16): each table's staging is a few round
   * trips (a put, two ledger requests), so a batch spread over many tables waits on them in turn.
   */
  readonly concurrency?: number;
  /** The Parquet encoders (tests decorate them to inject failures; default the real ones). */
  readonly encoder?: ParquetEncoder;
}

/** The load path's deps for the staging helpers both apps share (dead letters are handled by the caller). */
export function loadDeps(
  deps: Pick<IngestDeps, 'config' | 'catalog' | 'store' | 'clock' | 'ids' | 'maxRowsPerFile' | 'encoder'> &
    Pick<LoadDeps, 'changeVersions'>,
): LoadDeps {
  return {
    config: deps.config,
    catalog: deps.catalog,
    store: deps.store,
    clock: deps.clock,
    ids: deps.ids,
    onDeadLetter: () => undefined,
    ...(deps.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: deps.maxRowsPerFile }),
    ...(deps.encoder === undefined ? {} : { encoder: deps.encoder }),
    ...(deps.changeVersions === undefined ? {} : { changeVersions: deps.changeVersions }),
  };
}

export function registryOf(deps: { readonly registry?: SchemaRegistry }): SchemaRegistry {
  if (!deps.registry) throw new Error("stream format 'avro-gsr' needs a schema registry");
  return deps.registry;
}

/**
 * Default of `IngestDeps.concurrency`. Measured (bench/ingest-width.ts with 5 ms per DynamoDB
 * request and 20 ms per S3 put simulated): a 5,000-record batch over 200 tables took 1,915 ms at
 * 4, 687 ms at 16, 541 ms at 32 (then CPU-bound); 3 tables 54 ms at every setting.
 */
export const INGEST_CONCURRENCY = 16;
