/**
 * Compaction's reader: a data file's rows in the table's current schema with its deletes applied
 * (position deletes by path and position, equality deletes by value, each under the spec's
 * sequence-number rule — row-deletes.ts). Columns are found by field id; a file without ids is
 * read through the table's name mapping; an identity partition column the file does not hold
 * takes the partition value from the manifest (spec: "Column Projection"). A delete file is read
 * once however many data files it applies to.
 */
import { DataFileContent } from '../../iceberg/manifest/types.ts';
import { tableNameMapping } from '../../iceberg/name-mapping.ts';
import { identityPartitionConstants } from '../../iceberg/partition-constants.ts';
import {
  type EqualityDeleteFile,
  liveRows,
  type PositionDelete,
  type PositionDeleteFile,
} from '../../iceberg/row-deletes.ts';
import type { FileScanTask } from '../../iceberg/scan.ts';
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
    const rows = readDataFile(await store.get(path), schema, {
      ...(nameMapping ? { nameMapping } : {}),
      constants: identityPartitionConstants(schema, specById(meta, task.specId), task.file.partition),
      filePath: path,
    });
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
