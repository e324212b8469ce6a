/**
 * Small Iceberg tables built by hand in memory, for tests of the independent reader
 * (iceberg-rows.ts): Parquet written by hyparquet-writer (flat columns, field ids set), manifests
 * and manifest lists written by avsc with the spec's field ids (format/spec.md §Manifests,
 * §Manifest Lists), Puffin files from puffin-dv.ts. Nothing here comes from lambdas/src.
 *
 * Every commit rewrites one manifest per (content, spec): files added by it are ADDED with null
 * sequence numbers (inherited, §Sequence Number Inheritance) unless given explicitly, older live
 * files are EXISTING with their numbers written out, removed files are DELETED.
 */
import avsc from 'avsc';
import { parquetWriteBuffer } from 'hyparquet-writer';

// ---------------------------------------------------------------------------------------------
// Parquet

export type ColType = 'int' | 'long' | 'string' | 'double' | 'boolean';

export interface Column {
  /** Iceberg field id written as the Parquet field_id; omitted: no field id. */
  readonly id?: number;
  readonly name: string;
  readonly type: ColType;
  readonly values: readonly unknown[];
  readonly required?: boolean;
}

const PARQUET_TYPES = {
  int: { type: 'INT32' },
  long: { type: 'INT64' },
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  double: { type: 'DOUBLE' },
  boolean: { type: 'BOOLEAN' },
} as const;

/** A flat Parquet file of `columns` (longs as bigint or number). */
export function parquetOf(columns: readonly Column[]): Uint8Array {
  const buf = parquetWriteBuffer({
    columnData: columns.map((c) => ({
      name: c.name,
      data:
        c.type === 'long' ? c.values.map((v) => (v === null ? null : BigInt(v as number))) : [...c.values],
    })),
    schema: [
      { name: 'root', num_children: columns.length },
      ...columns.map((c) => ({
        name: c.name,
        ...PARQUET_TYPES[c.type],
        repetition_type: c.required ? ('REQUIRED' as const) : ('OPTIONAL' as const),
        ...(c.id === undefined ? {} : { field_id: c.id }),
      })),
    ],
  });
  return new Uint8Array(buf);
}

/** A position delete file (§Position Delete Files): `file_path` and `pos`, sorted as required. */
export function positionDeletesOf(deletes: readonly (readonly [string, number])[]): Uint8Array {
  const sorted = [...deletes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  return parquetOf([
    { id: 2147483546, name: 'file_path', type: 'string', values: sorted.map((d) => d[0]), required: true },
    { id: 2147483545, name: 'pos', type: 'long', values: sorted.map((d) => d[1]), required: true },
  ]);
}

// ---------------------------------------------------------------------------------------------
// Table

export interface SchemaField {
  readonly id: number;
  readonly name: string;
  readonly type: unknown;
  readonly required?: boolean;
}

export interface PartitionField {
  readonly 'field-id': number;
  readonly 'source-id': number;
  readonly transform: string;
  readonly name: string;
}

export interface NewFile {
  /** File name under `<location>/data/`. */
  readonly name: string;
  readonly bytes: Uint8Array;
  /** 0 data (default), 1 position deletes / deletion vector, 2 equality deletes. */
  readonly content?: 0 | 1 | 2;
  readonly recordCount: number;
  readonly format?: 'parquet' | 'puffin';
  readonly specId?: number;
  /** Partition values by partition field name. */
  readonly partition?: Readonly<Record<string, unknown>>;
  readonly equalityIds?: readonly number[];
  readonly referencedDataFile?: string;
  /** Deletion vectors: the blob's place in the Puffin file. */
  readonly blob?: { readonly offset: number; readonly length: number };
  /** An explicit data sequence number (else inherited from the commit). */
  readonly dataSeq?: bigint;
}

interface Tracked {
  readonly file: NewFile;
  readonly uri: string;
  readonly snapshotId: bigint;
  /** Explicit data sequence number, or undefined until its commit assigns one. */
  dataSeq: bigint | undefined;
  fileSeq: bigint | undefined;
}

export interface BuiltTable {
  readonly metadataJson: string;
  readonly read: (uri: string) => Promise<Uint8Array>;
  readonly exists: (uri: string) => Promise<boolean>;
}

export class TableBuilder {
  readonly location = 'mem://warehouse/db/t';
  private readonly files = new Map<string, Uint8Array>();
  private readonly schemas: { 'schema-id': number; type: 'struct'; fields: SchemaField[] }[] = [];
  private readonly specs: { 'spec-id': number; fields: PartitionField[] }[];
  private live: Tracked[] = [];
  private readonly snapshots: Record<string, unknown>[] = [];
  private seq = 0n;
  private readonly properties: Record<string, string>;
  private readonly formatVersion: 2 | 3;

  constructor(opts: {
    fields: SchemaField[];
    specs?: PartitionField[][];
    formatVersion?: 2 | 3;
    properties?: Record<string, string>;
  }) {
    this.schemas.push({ 'schema-id': 0, type: 'struct', fields: opts.fields });
    this.specs = (opts.specs ?? [[]]).map((fields, i) => ({ 'spec-id': i, fields }));
    this.formatVersion = opts.formatVersion ?? 2;
    this.properties = opts.properties ?? {};
  }

  /** The URI a data-folder file name gets. */
  uri(name: string): string {
    return `${this.location}/data/${name}`;
  }

  /** Schema evolution: a new current schema. */
  evolve(fields: SchemaField[]): void {
    this.schemas.push({ 'schema-id': this.schemas.length, type: 'struct', fields });
  }

  /** One snapshot adding `add` and removing the live files named in `remove` (URIs); returns its id. */
  commit(add: readonly NewFile[], remove: readonly string[] = []): bigint {
    this.seq++;
    const seq = this.seq;
    const snapshotId = 1000n + seq;
    const removed = this.live.filter((t) => remove.includes(t.uri));
    if (removed.length !== remove.length) throw new Error('removing a file that is not live');
    const added = add.map((f): Tracked => {
      const uri = this.uri(f.name);
      this.files.set(uri, f.bytes);
      return { file: f, uri, snapshotId, dataSeq: f.dataSeq, fileSeq: undefined };
    });
    const kept = this.live.filter((t) => !removed.includes(t));
    const entries = [
      ...kept.map((t) => ({ t, status: 0 })),
      ...removed.map((t) => ({ t, status: 2 })),
      ...added.map((t) => ({ t, status: 1 })),
    ];
    const groups = new Map<string, typeof entries>();
    for (const e of entries) {
      const k = `${(e.t.file.content ?? 0) === 0 ? 0 : 1}|${e.t.file.specId ?? 0}`;
      groups.set(k, [...(groups.get(k) ?? []), e]);
    }
    const listRecords: Record<string, unknown>[] = [];
    let n = 0;
    for (const [k, group] of groups) {
      const [content, specId] = k.split('|').map(Number) as [number, number];
      const path = `${this.location}/metadata/m-${seq}-${n++}.avro`;
      const bytes = this.writeManifest(group, content, specId, snapshotId);
      this.files.set(path, bytes);
      const dataSeqOf = (t: Tracked) => t.dataSeq ?? seq;
      const liveSeqs = group.filter((e) => e.status !== 2).map((e) => dataSeqOf(e.t));
      const count = (s: number) => group.filter((e) => e.status === s).length;
      const rows = (s: number) =>
        BigInt(group.filter((e) => e.status === s).reduce((a, e) => a + e.t.file.recordCount, 0));
      listRecords.push({
        manifest_path: path,
        manifest_length: BigInt(bytes.length),
        partition_spec_id: specId,
        content,
        sequence_number: seq,
        min_sequence_number: [...liveSeqs].sort((a, b) => (a < b ? -1 : 1))[0] ?? seq,
        added_snapshot_id: snapshotId,
        added_files_count: count(1),
        existing_files_count: count(0),
        deleted_files_count: count(2),
        added_rows_count: rows(1),
        existing_rows_count: rows(0),
        deleted_rows_count: rows(2),
      });
    }
    // Assigned at commit: what later manifests write out explicitly.
    for (const t of added) {
      t.dataSeq ??= seq;
      t.fileSeq = seq;
    }
    this.live = [...kept, ...added];
    const listPath = `${this.location}/metadata/snap-${snapshotId}.avro`;
    this.files.set(
      listPath,
      avroFile(MANIFEST_FILE_SCHEMA, listRecords, {
        'format-version': String(this.formatVersion),
        'snapshot-id': String(snapshotId),
        'sequence-number': String(seq),
      }),
    );
    const parent = this.snapshots.at(-1)?.['snapshot-id'];
    this.snapshots.push({
      'snapshot-id': Number(snapshotId),
      ...(parent === undefined ? {} : { 'parent-snapshot-id': parent }),
      'sequence-number': Number(seq),
      'timestamp-ms': 1_700_000_000_000 + Number(seq) * 1000,
      'manifest-list': listPath,
      summary: { operation: removed.length > 0 || add.some((f) => f.content) ? 'overwrite' : 'append' },
      'schema-id': this.schemas.length - 1,
    });
    return snapshotId;
  }

  private writeManifest(
    group: { t: Tracked; status: number }[],
    content: number,
    specId: number,
    snapshotId: bigint,
  ): Uint8Array {
    const spec = this.specs[specId];
    if (!spec) throw new Error(`no spec ${specId}`);
    const records = group.map(({ t, status }) => {
      const f = t.file;
      const partition: Record<string, unknown> = {};
      for (const p of spec.fields) {
        const v = f.partition?.[p.name] ?? null;
        partition[p.name] = typeof v === 'number' && this.avroType(p) === 'long' ? BigInt(v) : v;
      }
      return {
        status,
        // ADDED: null ids and sequence numbers, inherited from the manifest list (§Manifest Entry Fields).
        snapshot_id: status === 1 ? null : status === 2 ? snapshotId : t.snapshotId,
        sequence_number: status === 1 ? (f.dataSeq ?? null) : t.dataSeq,
        file_sequence_number: status === 1 ? null : t.fileSeq,
        data_file: {
          content: f.content ?? 0,
          file_path: t.uri,
          file_format: (f.format ?? 'parquet').toUpperCase(),
          partition,
          record_count: BigInt(f.recordCount),
          file_size_in_bytes: BigInt(f.bytes.length),
          equality_ids: f.equalityIds ? [...f.equalityIds] : null,
          referenced_data_file: f.referencedDataFile ?? null,
          content_offset: f.blob ? BigInt(f.blob.offset) : null,
          content_size_in_bytes: f.blob ? BigInt(f.blob.length) : null,
        },
      };
    });
    const partitionType = {
      type: 'record',
      name: 'r102',
      fields: spec.fields.map((p) => ({
        name: p.name,
        type: ['null', this.avroType(p)],
        default: null,
        'field-id': p['field-id'],
      })),
    };
    return avroFile(manifestEntrySchema(partitionType), records, {
      schema: JSON.stringify(this.schemas.at(-1)),
      'schema-id': String(this.schemas.length - 1),
      'partition-spec': JSON.stringify(spec.fields),
      'partition-spec-id': String(specId),
      'format-version': String(this.formatVersion),
      content: content === 0 ? 'data' : 'deletes',
    });
  }

  /** The Avro type of a partition field (identity or void on int / long / string sources). */
  private avroType(p: PartitionField): string {
    const field = this.schemas.flatMap((s) => s.fields).find((f) => f.id === p['source-id']);
    const t = field?.type;
    if (t === 'int' || t === 'date') return 'int';
    if (t === 'long') return 'long';
    if (t === 'string') return 'string';
    throw new Error(`partition source type ${String(t)} is not supported here`);
  }

  /** The table as of the last commit (or `snapshotId`'s as current). */
  table(): BuiltTable {
    const maxId = (fields: readonly SchemaField[]): number =>
      Math.max(0, ...fields.map((f) => f.id), ...fields.map((f) => nestedMax(f.type)));
    const current = this.snapshots.at(-1);
    const metadata = {
      'format-version': this.formatVersion,
      'table-uuid': '00000000-0000-4000-8000-000000000001',
      location: this.location,
      'last-sequence-number': Number(this.seq),
      'last-updated-ms': 1_700_000_000_000 + Number(this.seq) * 1000,
      'last-column-id': Math.max(...this.schemas.map((s) => maxId(s.fields))),
      schemas: this.schemas,
      'current-schema-id': this.schemas.length - 1,
      'partition-specs': this.specs,
      'default-spec-id': this.specs.length - 1,
      'last-partition-id': Math.max(999, ...this.specs.flatMap((s) => s.fields.map((f) => f['field-id']))),
      properties: this.properties,
      'sort-orders': [{ 'order-id': 0, fields: [] }],
      'default-sort-order-id': 0,
      ...(this.formatVersion >= 3 ? { 'next-row-id': 0 } : {}),
      ...(current
        ? {
            'current-snapshot-id': current['snapshot-id'],
            refs: { main: { 'snapshot-id': current['snapshot-id'], type: 'branch' } },
          }
        : { 'current-snapshot-id': -1 }),
      snapshots: this.snapshots,
    };
    const files = new Map(this.files);
    return {
      metadataJson: JSON.stringify(metadata),
      read: async (uri) => {
        const b = files.get(uri);
        if (!b) throw new Error(`no such file ${uri}`);
        return b;
      },
      exists: async (uri) => files.has(uri),
    };
  }
}

function nestedMax(t: unknown): number {
  if (typeof t !== 'object' || t === null) return 0;
  const o = t as Record<string, unknown>;
  const ids = [o['element-id'], o['key-id'], o['value-id']].filter((x): x is number => typeof x === 'number');
  const kids = Array.isArray(o.fields)
    ? (o.fields as SchemaField[]).flatMap((f) => [f.id, nestedMax(f.type)])
    : [nestedMax(o.element), nestedMax(o.key), nestedMax(o.value)];
  return Math.max(0, ...ids, ...kids);
}

// ---------------------------------------------------------------------------------------------
// Avro (Object Container Files, uncompressed)

const opt = (type: unknown, id: number, name: string) => ({
  name,
  type: ['null', type],
  default: null,
  'field-id': id,
});

function manifestEntrySchema(partitionType: unknown): unknown {
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      { name: 'status', type: 'int', 'field-id': 0 },
      opt('long', 1, 'snapshot_id'),
      opt('long', 3, 'sequence_number'),
      opt('long', 4, 'file_sequence_number'),
      {
        name: 'data_file',
        'field-id': 2,
        type: {
          type: 'record',
          name: 'r2',
          fields: [
            { name: 'content', type: 'int', 'field-id': 134 },
            { name: 'file_path', type: 'string', 'field-id': 100 },
            { name: 'file_format', type: 'string', 'field-id': 101 },
            { name: 'partition', type: partitionType, 'field-id': 102 },
            { name: 'record_count', type: 'long', 'field-id': 103 },
            { name: 'file_size_in_bytes', type: 'long', 'field-id': 104 },
            opt({ type: 'array', items: 'int', 'element-id': 136 }, 135, 'equality_ids'),
            opt('string', 143, 'referenced_data_file'),
            opt('long', 144, 'content_offset'),
            opt('long', 145, 'content_size_in_bytes'),
          ],
        },
      },
    ],
  };
}

const MANIFEST_FILE_SCHEMA = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'manifest_path', type: 'string', 'field-id': 500 },
    { name: 'manifest_length', type: 'long', 'field-id': 501 },
    { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
    { name: 'content', type: 'int', 'field-id': 517 },
    { name: 'sequence_number', type: 'long', 'field-id': 515 },
    { name: 'min_sequence_number', type: 'long', 'field-id': 516 },
    { name: 'added_snapshot_id', type: 'long', 'field-id': 503 },
    { name: 'added_files_count', type: 'int', 'field-id': 504 },
    { name: 'existing_files_count', type: 'int', 'field-id': 505 },
    { name: 'deleted_files_count', type: 'int', 'field-id': 506 },
    { name: 'added_rows_count', type: 'long', 'field-id': 512 },
    { name: 'existing_rows_count', type: 'long', 'field-id': 513 },
    { name: 'deleted_rows_count', type: 'long', 'field-id': 514 },
  ],
};

const BigLong = avsc.types.LongType.__with({
  fromBuffer: (b: Buffer) => b.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(n);
    return b;
  },
  fromJSON: (x: unknown) => BigInt(x as string),
  toJSON: (n: bigint) => n.toString(),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});
const isLong = (s: unknown) =>
  s === 'long' || (typeof s === 'object' && s !== null && (s as { type?: unknown }).type === 'long');
const META_TYPE = avsc.Type.forSchema({ type: 'map', values: 'bytes' });
const LONG_TYPE = avsc.Type.forSchema('long');

function avroFile(schema: unknown, records: readonly unknown[], kv: Record<string, string>): Uint8Array {
  const type = avsc.Type.forSchema(
    schema as avsc.Schema,
    {
      typeHook: (s: unknown) => (isLong(s) ? BigLong : undefined),
    } as never,
  );
  const meta: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(kv)) meta[k] = Buffer.from(v, 'utf8');
  meta['avro.schema'] = Buffer.from(JSON.stringify(schema), 'utf8');
  meta['avro.codec'] = Buffer.from('null', 'utf8');
  const sync = Buffer.alloc(16, 0x37);
  const body = Buffer.concat(records.map((r) => type.toBuffer(r)));
  const parts = [Buffer.from([0x4f, 0x62, 0x6a, 0x01]), META_TYPE.toBuffer(meta), sync];
  if (records.length > 0)
    parts.push(LONG_TYPE.toBuffer(records.length), LONG_TYPE.toBuffer(body.length), body, sync);
  return new Uint8Array(Buffer.concat(parts));
}
