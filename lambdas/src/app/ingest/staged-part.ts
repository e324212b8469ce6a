/** What staging one kind of a table's records (its JSON, its Avro) takes and gives back. */

import type { LoadDeps } from '../../engine/load-types.ts';
import type { DataFile } from '../../iceberg/manifest/types.ts';
import type { LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import type { DeadLetterRecord } from '../../ports/dead-letters.ts';
import type { KinesisBatch } from '../../records/kinesis-event.ts';
import type { IngestDeps } from './deps.ts';
import type { TableIngest } from './result.ts';
import type { TableWork } from './routed.ts';

/** One table of the batch, ready to stage. */
export interface StageInput {
  readonly deps: IngestDeps;
  /** `loadDeps(deps)`, for the staging helpers both apps share. */
  readonly load: LoadDeps;
  readonly batch: KinesisBatch;
  readonly work: TableWork;
  readonly id: TableIdentifier;
  /** The table as cached; undefined when it does not exist yet. */
  readonly base: LoadedTable | undefined;
  readonly candidates: readonly string[];
  /** URIs of the files stored so far (deleted if the table fails before its entry is sent). */
  readonly staged: string[];
}

/** A data file written for the table as it is, with the schema and spec it was written with. */
export interface WrittenFile {
  readonly file: DataFile;
  readonly schemaId: number;
  readonly specId: number;
}

export interface StagedPart {
  readonly files: readonly WrittenFile[];
  readonly rejected: readonly DeadLetterRecord[];
  /** Records (batch indexes) kept for a pending fragment: the table must change for them. */
  readonly pending: readonly number[];
  readonly path: TableIngest['path'];
  readonly coerced?: string;
}

/** No records of the kind. */
export const NOTHING_STAGED: StagedPart = { files: [], rejected: [], pending: [], path: 'none' };
