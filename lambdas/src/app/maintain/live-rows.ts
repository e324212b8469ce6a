/**
 * Compaction's reader: a data file's rows in the table's current schema with its deletes applied
 * (position deletes by path and position, equality deletes by value, each under the spec's
 * sequence-number rule — row-deletes.ts). Columns are found by field id; a file without ids is
 * read through the table's name mapping; an identity partition column the file does not hold
 * takes the partition value from the manifest (spec: "Column Projection"). A delete file is read
 * once however many data files it applies to.
 *
 * Format v3 tables: each row also carries its row lineage, `_row_id` and
 * `_last_updated_sequence_number` (row-lineage.ts) — the file's values when it holds them, else
 * the inherited ones, from the row's position in the file before any delete is applied — so a
 * rewrite can copy them into the new files. Deletion vectors (Puffin) are not read: a task with
 * one is refused (compaction leaves such files out).
 */
import { ErrorKind, FloeError } from '../../errors.ts';
import { DataFileContent } from '../../iceberg/manifest/types.ts';
import { tableNameMapping } from '../../iceberg/name-mapping.ts';
import { identityPartitionConstants } from '../../iceberg/partition-constants.ts';
import {
  type EqualityDeleteFile,
  liveRows,
  type PositionDelete,
  type PositionDeleteFile,
} from '../../iceberg/row-deletes.ts';
import { inheritRowLineage, tracksRowLineage, withRowLineage } from '../../iceberg/row-lineage.ts';
import { type FileScanTask, isDeletionVectorFile } from '../../iceberg/scan.ts';
import { currentSchema, specById, type TableMetadata } from '../../iceberg/table-metadata.ts';
import type { Row } from '../../iceberg/values.ts';
import { readDataFile, readEqualityDeletes, readPositionDeletes } from '../../parquet/reader.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import type { LiveRows } from './compact.ts';

export function liveRowsReader(store: ObjectStore): LiveRows {
  const positions = new Map<string, Promise<PositionDelete[]>>();
  const equalities = new Map<string, Promise<Row[]>>();
  return async (meta: TableMetadata, task: FileScanTask): Promise<Row[]> => {
    const schema = currentSchema(meta);
    const nameMapping = tableNameMapping(meta.properties);
    const path = task.file.file_path;
    const dv = task.deletes.find((d) => isDeletionVectorFile(d.file));
    if (dv) {
      throw new FloeError(
        ErrorKind.FeatureUnsupported,
        `deletion vector ${dv.file.file_path} cannot be read yet (it applies to ${path})`,
      );
    }
    const lineage = tracksRowLineage(meta);
    const rows = readDataFile(await store.get(path), lineage ? withRowLineage(schema) : schema, {
      ...(nameMapping ? { nameMapping } : {}),
      constants: identityPartitionConstants(schema, specById(meta, task.specId), task.file.partition),
      filePath: path,
    });
    // Positions count every row of the file, before the deletes below remove any.
    if (lineage) {
      inheritRowLineage(rows, {
        firstRowId: task.file.first_row_id,
        dataSequenceNumber: task.dataSequenceNumber,
      });
    }
    const position: PositionDeleteFile[] = [];
    const equality: EqualityDeleteFile[] = [];
    for (const d of task.deletes) {
      const f = d.file;
      if (f.content === DataFileContent.POSITION_DELETES) {
        const all = await cached(positions, f.file_path, async () =>
          readPositionDeletes(await store.get(f.file_path), { filePath: f.file_path }),
        );
        position.push({
          dataSequenceNumber: d.dataSequenceNumber,
          deletes: all.filter((p) => p.filePath === path),
        });
      } else if (f.content === DataFileContent.EQUALITY_DELETES) {
        const ids = f.equality_ids ?? [];
        const rowsOf = await cached(equalities, f.file_path, async () =>
          readEqualityDeletes(await store.get(f.file_path), schema, ids, { filePath: f.file_path }),
        );
        equality.push({ dataSequenceNumber: d.dataSequenceNumber, equalityIds: ids, rows: rowsOf });
      }
    }
    return liveRows(
      schema,
      { filePath: path, dataSequenceNumber: task.dataSequenceNumber, rows },
      { position, equality },
    );
  };
}

function cached<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (!p) {
    p = load();
    cache.set(key, p);
  }
  return p;
}
