/**
 * Metadata for a table that does not exist yet (Java `TableMetadata.newTableMetadata`; spec
 * "Table Metadata", facts doc §1.1–1.2): fresh column ids from 1, partition field ids from 1000,
 * schema/spec id 0, the unsorted order 0 or the given order as id 1, no snapshots.
 */
import { ErrorKind, FloeError } from '../../errors.ts';
import {
  PARTITION_DATA_ID_START,
  type PartitionField,
  type PartitionSpec,
  UNPARTITIONED_LAST_ASSIGNED_ID,
} from '../partition-spec.ts';
import { indexById, type Schema, schemaStruct } from '../schema.ts';
import { assignFreshIds, findV3OnlyType } from '../schema-evolution.ts';
import { INITIAL_SORT_ORDER_ID, type SortOrder, UNSORTED_ORDER } from '../sort-order.ts';
import { type TableMetadata, validateTableMetadata } from '../table-metadata.ts';
import { isPrimitive } from '../types.ts';
import { RESERVED_PROPERTIES, stripTrailingSlash } from './apply.ts';

/** Properties every new Floe table starts with (user properties override them). */
export const DEFAULT_TABLE_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  // Java ≥ 1.4 also sets zstd on new tables.
  'write.parquet.compression-codec': 'zstd',
  // 128 MiB: Lambda memory bounds the file a writer can buffer, unlike Java's 512 MiB default.
  'write.target-file-size-bytes': '134217728',
  // A streaming table commits often; old metadata files would otherwise pile up.
  'write.metadata.delete-after-commit.enabled': 'true',
  'write.metadata.previous-versions-max': '100',
});

export interface NewTableOptions {
  readonly location: string;
  /** Field ids are reassigned; only names and structure matter. */
  readonly schema: Schema;
  /** Source ids refer to `schema`'s ids; field ids are reassigned from 1000. */
  readonly spec?: PartitionSpec;
  /** Source ids refer to `schema`'s ids. */
  readonly sortOrder?: SortOrder;
  readonly properties?: Readonly<Record<string, string>>;
  readonly formatVersion: 2 | 3;
  readonly tableUuid: string;
  readonly nowMs: number;
}

/** Builds the first metadata of a table. Throws FloeError DataInvalid for inconsistent inputs. */
export function newTableMetadata(o: NewTableOptions): TableMetadata {
  const location = stripTrailingSlash(o.location);
  const where = `table ${location}`;
  if (o.formatVersion < 3) {
    const v3 = findV3OnlyType(schemaStruct(o.schema));
    if (v3 !== undefined) throw invalid(`${where}: column ${v3} requires format version 3`);
  }
  let lastColumnId = 0;
  const fresh = assignFreshIds(schemaStruct(o.schema), () => ++lastColumnId);
  const idMap = freshIdMap(o.schema, fresh.fields);
  const remap = (id: number, what: string) => {
    const n = idMap.get(id);
    if (n === undefined) throw invalid(`${where}: ${what} references unknown source column id ${id}`);
    return n;
  };
  const schema: Schema = {
    schemaId: 0,
    ...(o.schema.identifierFieldIds?.length
      ? { identifierFieldIds: o.schema.identifierFieldIds.map((id) => remap(id, 'identifier-field-ids')) }
      : {}),
    fields: fresh.fields,
  };
  const spec = freshSpec(o.spec, schema, remap, where);
  const order: SortOrder =
    o.sortOrder === undefined || o.sortOrder.fields.length === 0
      ? UNSORTED_ORDER
      : {
          'order-id': INITIAL_SORT_ORDER_ID,
          fields: o.sortOrder.fields.map((f) => ({ ...f, 'source-id': remap(f['source-id'], 'sort field') })),
        };
  const properties: Record<string, string> = { ...DEFAULT_TABLE_PROPERTIES };
  for (const [k, v] of Object.entries(o.properties ?? {})) {
    if (!RESERVED_PROPERTIES.has(k)) properties[k] = v;
  }
  const m: TableMetadata = {
    'format-version': o.formatVersion,
    'table-uuid': o.tableUuid,
    location,
    'last-sequence-number': 0n,
    'last-updated-ms': BigInt(o.nowMs),
    'last-column-id': lastColumnId,
    schemas: [schema],
    'current-schema-id': 0,
    'partition-specs': [spec],
    'default-spec-id': 0,
    'last-partition-id':
      spec.fields.length === 0
        ? UNPARTITIONED_LAST_ASSIGNED_ID
        : PARTITION_DATA_ID_START + spec.fields.length - 1,
    properties,
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    'sort-orders': [order],
    'default-sort-order-id': order['order-id'],
    refs: {},
    statistics: [],
    'partition-statistics': [],
    ...(o.formatVersion >= 3 ? { 'next-row-id': 0n } : {}),
  };
  validateTableMetadata(m, where);
  return m;
}

/** Old id → fresh id, matched by field path (both trees have the same shape). */
function freshIdMap(old: Schema, freshFields: Schema['fields']): Map<number, number> {
  const byPath = new Map<string, number>();
  for (const [id, f] of indexById({ kind: 'struct', fields: freshFields }))
    byPath.set(f.path.join('\u0000'), id);
  const out = new Map<number, number>();
  for (const [id, f] of indexById(old)) out.set(id, byPath.get(f.path.join('\u0000'))!);
  return out;
}

function freshSpec(
  spec: PartitionSpec | undefined,
  schema: Schema,
  remap: (id: number, what: string) => number,
  where: string,
): PartitionSpec {
  const columns = indexById(schema);
  const names = new Set<string>();
  const fields = (spec?.fields ?? []).map((f, i): PartitionField => {
    const sourceId = remap(f['source-id'], `partition field '${f.name}'`);
    const source = columns.get(sourceId)!;
    // Spec "Partitioning": a source is a primitive, possibly nested in structs, never in a list or map.
    if (!isPrimitive(source.field.type) || source.inCollection) {
      throw invalid(
        `${where}: partition field '${f.name}' source ${source.path.join('.')} must be a primitive outside lists and maps`,
      );
    }
    if (names.has(f.name)) throw invalid(`${where}: duplicate partition field name '${f.name}'`);
    names.add(f.name);
    return {
      name: f.name,
      transform: f.transform,
      'source-id': sourceId,
      'field-id': PARTITION_DATA_ID_START + i,
    };
  });
  return { 'spec-id': 0, fields };
}

function invalid(msg: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, msg);
}
