/**
 * Tests of the independent Iceberg table validator (iceberg-validator.ts): the checked-in fixture
 * tables validate (apart from the known defects their READMEs list, which it must still find), tables
 * Floe writes validate with every snapshot walked, and corrupt copies of a Floe table each produce
 * the problem code of the rule they break.
 */
import { promises as fs, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync } from 'node:zlib';
import avsc from 'avsc';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintainTable } from '../../lambdas/src/app/maintain/index.ts';
import { ALL_STEPS } from '../../lambdas/src/app/maintain/options.ts';
import { planScan } from '../../lambdas/src/iceberg/scan.ts';
import { commitDeletes } from '../unit/app/maintain/deletes.ts';
import { CLICKS, type SmallLoads, smallLoads } from '../unit/app/maintain/small-loads.ts';
import { readWithAvsc } from '../unit/avro/avsc-reader.ts';
import { fileWarehouse, generate, groupByTable, load, type TestWarehouse, tempDir } from './e2e.ts';
import {
  FIXTURES_ROOT,
  findMetadataFile,
  fixtureResolver,
  fixtureTableNames,
  metadataFiles,
} from './fixtures.ts';
import {
  expectValidTable,
  localTableIo,
  type ValidateOptions,
  type ValidationReport,
  validateTable,
} from './iceberg-validator.ts';

const codes = (r: ValidationReport): string[] => [...new Set(r.problems.map((p) => p.code))].sort();
const ignoredCodes = (r: ValidationReport): string[] => [...new Set(r.ignored.map((p) => p.code))].sort();

// ---------------------------------------------------------------------------------------------
// Fixture tables (test/fixtures/iceberg/*, read only)

function fixtureOptions(name: string, file?: string): ValidateOptions {
  const path = findMetadataFile(name, file);
  const text = readFileSync(path, 'utf8');
  const location = String((JSON.parse(text) as { location?: unknown }).location);
  return {
    metadataJson: text,
    metadataLocation: relative(FIXTURES_ROOT, path),
    ...localTableIo(fixtureResolver(join(FIXTURES_ROOT, name), location)),
  };
}

/**
 * The defects each fixture's README lists, by metadata file (prefix), as the validator reports them
 * with every snapshot walked. duckdb-equality-deletes v3 is the version where the snapshot whose
 * manifest list is missing is itself current.
 */
const KNOWN_DEFECTS: Record<string, Record<string, string[]>> = {
  'duckdb-equality-deletes': Object.fromEntries(
    ['v3.', 'v4.', 'v5.', 'v6.', 'v7.'].map((v) => [v, ['manifest_list.missing']]),
  ),
  'duckdb-partition-evolution': Object.fromEntries(
    ['v2.', 'v3.', 'v4.'].map((v) => [v, ['file.size_mismatch']]),
  ),
  'duckdb-v1-pyiceberg-merch': {
    // The overwrite lists its new files as EXISTING and its DELETED entries keep the adding snapshot.
    '00003-': ['entry.deleted_snapshot_id', 'manifest.count_mismatch'],
    // The hand-made v3 upgrade reuses 00003's manifests; its list has null counts, so only this shows.
    '00004-': ['entry.deleted_snapshot_id'],
  },
};

function knownDefects(name: string, file: string): string[] {
  const byFile = KNOWN_DEFECTS[name] ?? {};
  return Object.entries(byFile).find(([prefix]) => file.startsWith(prefix))?.[1] ?? [];
}

/**
 * The README defects that show at a fixture's latest metadata version for its current snapshot
 * (duckdb-equality-deletes' missing manifest list belongs to a non-current snapshot).
 */
const LATEST_CURRENT_DEFECTS: Record<string, string[]> = {
  'duckdb-partition-evolution': ['file.size_mismatch'],
  'duckdb-v1-pyiceberg-merch': ['entry.deleted_snapshot_id'],
};

describe('fixture tables', () => {
  it('finds the fixture tables', () => {
    expect(fixtureTableNames()).toContain('icebird-java-bunnies');
    expect(fixtureTableNames()).not.toContain('metadata-json-examples');
  });

  it.each(fixtureTableNames())(
    '%s validates for its current snapshot at its latest metadata version',
    async (name) => {
      const known = LATEST_CURRENT_DEFECTS[name] ?? [];
      const report = await validateTable({ ...fixtureOptions(name), knownDefects: known });
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      // The README's known defects are still found, only ignored.
      expect(ignoredCodes(report)).toEqual([...known].sort());
    },
  );

  it.each(fixtureTableNames())(
    '%s: every metadata version, every snapshot: exactly the defects its README lists',
    async (name) => {
      for (const file of metadataFiles(name)) {
        const report = await validateTable({ ...fixtureOptions(name, file), snapshots: 'all' });
        expect(codes(report), `${name}/${file}`).toEqual([...knownDefects(name, file)].sort());
      }
    },
  );

  it('duckdb-equality-deletes: the missing manifest list is that of non-current snapshot 7342794868382145167', async () => {
    const all = await validateTable({ ...fixtureOptions('duckdb-equality-deletes'), snapshots: 'all' });
    expect(all.problems.map((p) => [p.code, p.snapshotId])).toEqual([
      ['manifest_list.missing', '7342794868382145167'],
    ]);
    expect(all.problems[0]?.path).toMatch(/snap-7342794868382145167-1-34f7dec7-.*\.avro$/);
    const current = await validateTable(fixtureOptions('duckdb-equality-deletes'));
    expect(current.problems).toEqual([]);
    expect(current.stats).toEqual({
      snapshots: 1,
      manifests: 6,
      dataFiles: 2,
      deleteFiles: 4,
      liveRecords: 6n,
    });
  });

  it('counts live files and records before deletes (stats of the current snapshot)', async () => {
    const lineitem = await validateTable(fixtureOptions('duckdb-lineitem-iceberg'));
    expect(lineitem.stats).toMatchObject({ dataFiles: 1, deleteFiles: 0, liveRecords: 51793n });
    // 21 initial rows + 1 updated row; the position and equality deletes are not applied.
    const bunnies = await validateTable(fixtureOptions('icebird-java-bunnies'));
    expect(bunnies.stats).toMatchObject({ dataFiles: 2, deleteFiles: 2, liveRecords: 22n });
  });

  it('duckdb-v1-legacy-manifests-field: the v1 `manifests` list is walked, with a warning', async () => {
    const report = await validateTable(fixtureOptions('duckdb-v1-legacy-manifests-field'));
    expect(report.problems).toEqual([]);
    expect(report.warnings.map((w) => w.code)).toEqual(['snapshot.v1_manifests_field']);
    expect(report.stats).toMatchObject({ manifests: 1, dataFiles: 2, liveRecords: 3n });
  });

  it('Java-written manifests lack the spec-required `schema-id` key: a warning, not a problem', async () => {
    const report = await validateTable(fixtureOptions('icebird-java-bunnies'));
    expect(report.ok).toBe(true);
    expect(new Set(report.warnings.map((w) => w.code))).toEqual(new Set(['manifest.header_schema_id']));
  });

  it('metadata-json-examples (metadata checks only) agree with the Java / Rust behaviour in their README', async () => {
    const expected: Record<string, string[]> = {
      'apache-iceberg-core/TableMetadataV1Valid.json': [],
      'apache-iceberg-core/TableMetadataV2Valid.json': [],
      'apache-iceberg-core/TableMetadataV2ValidMinimal.json': [],
      'apache-iceberg-core/TableMetadataV3ValidMinimal.json': [],
      'apache-iceberg-core/TableMetadataStatisticsFiles.json': [],
      'apache-iceberg-core/TableMetadataPartitionStatisticsFiles.json': [],
      'apache-iceberg-core/TableMetadataUnsupportedVersion.json': ['metadata.format-version'],
      'apache-iceberg-core/TableMetadataV1MissingSchemaType.json': ['schema.invalid', 'spec.source_id'],
      'apache-iceberg-core/TableMetadataV2CurrentSchemaNotFound.json': [
        'metadata.current-schema-id',
        'metadata.required_field',
      ],
      'apache-iceberg-core/TableMetadataV2MissingLastPartitionId.json': ['metadata.required_field'],
      'apache-iceberg-core/TableMetadataV2MissingPartitionSpecs.json': ['metadata.required_field'],
      'apache-iceberg-core/TableMetadataV2MissingSchemas.json': ['metadata.required_field'],
      'apache-iceberg-core/TableMetadataV2MissingSortOrder.json': ['metadata.required_field'],
      'iceberg-rust/TableMetadataV1SchemasWithoutCurrentId.json': [],
      'iceberg-rust/TableMetadataV3ValidEncryption.json': [],
      'iceberg-rust/example_table_metadata_v2_deep_history.json': [],
      // The spec requires `schema` and `partition-spec` in v1 metadata (lenient readers accept it).
      'iceberg-rust/TableMetadataV1Compat.json': ['metadata.required_field'],
      'iceberg-rust/TableMetadataV1NoValidSchema.json': ['metadata.required_field'],
      'iceberg-rust/TableMetadataV1PartitionSpecsWithoutDefaultId.json': ['metadata.required_field'],
      'iceberg-rust/example_empty_table_metadata_v2.json': ['metadata.last-column-id'],
      'iceberg-rust/example_table_metadata_v2_partition_evolution.json': ['metadata.last-column-id'],
    };
    const noFiles = async (): Promise<Uint8Array> => {
      throw new Error('metadata-only check read a file');
    };
    for (const [file, want] of Object.entries(expected)) {
      const json = readFileSync(join(FIXTURES_ROOT, 'metadata-json-examples', file));
      const report = await validateTable({ metadataJson: json, read: noFiles, snapshots: 'none' });
      expect(codes(report), file).toEqual(want);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Tables Floe writes

const NS = 'default';

async function floeTableOptions(wh: TestWarehouse, name: string): Promise<ValidateOptions> {
  const t = await wh.catalog.loadTable({ namespace: NS, name });
  return {
    metadataJson: await fs.readFile(fileURLToPath(t.metadataLocation)),
    metadataLocation: t.metadataLocation,
    ...localTableIo(),
  };
}

describe('tables Floe writes', () => {
  let tmp: { dir: string; cleanup: () => void };
  beforeAll(() => {
    tmp = tempDir('floe-validator-');
  });
  afterAll(() => tmp?.cleanup());

  it('appends, schema evolution and many files per partition: valid with every snapshot walked', async () => {
    const wh = fileWarehouse(join(tmp.dir, 'appends'));
    const batches = [generate(150, 'v1', 11), generate(150, 'v2', 12), generate(120, 'v2', 13)];
    for (const [i, g] of batches.entries()) {
      const run = await load(
        wh,
        [{ name: `in-${i}.ndjson`, lines: g.lines }],
        i === 2 ? { maxRowsPerFile: 10 } : {},
      );
      expect(run.dead).toEqual([]);
    }
    const rowsPerTable = groupByTable(batches.flatMap((g) => g.events));
    const tables = await wh.catalog.listTables(NS);
    expect(tables.sort()).toEqual([...rowsPerTable.keys()].sort());
    for (const name of tables) {
      const report = await expectValidTable({ ...(await floeTableOptions(wh, name)), snapshots: 'all' });
      expect(report.warnings).toEqual([]);
      expect(report.stats.snapshots).toBe(3);
      expect(report.stats.liveRecords).toBe(BigInt(rowsPerTable.get(name)?.length ?? -1));
    }
  });

  it('row-level deletes, compaction, manifest rewrite and snapshot expiry: valid at every step', async () => {
    const t = await smallLoads(6, 5);
    try {
      const check = async () =>
        expectValidTable({ ...(await floeTableOptions(t.wh, CLICKS.name)), snapshots: 'all' });
      await check();
      const base = await t.wh.catalog.loadTable(CLICKS);
      const first = (await planScan(base.metadata, (u) => t.wh.store.get(u))).tasks[0]!;
      await commitDeletes(t.deps(), CLICKS, {
        kind: 'position',
        filePath: first.file.file_path,
        positions: [0n],
      });
      await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [4n, 7n, 22n] });
      expect((await check()).stats).toMatchObject({ dataFiles: 12, deleteFiles: 3, liveRecords: 30n });
      const steps = { ...ALL_STEPS, expire: false, orphans: false };
      const opts = { retainLast: 1, expireOlderThanMs: 0, orphansOlderThanMs: 0 };
      expect((await maintainTable(t.deps(), CLICKS, { steps, ...opts })).failed).toEqual([]);
      expect((await check()).stats).toMatchObject({ dataFiles: 2, deleteFiles: 0, liveRecords: 26n });
      expect((await maintainTable(t.deps(), CLICKS, { steps: ALL_STEPS, ...opts })).failed).toEqual([]);
      expect((await check()).stats).toMatchObject({ snapshots: 1, liveRecords: 26n });
    } finally {
      t.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Corrupt copies: each broken rule is reported with its code

/** avsc `long` as bigint (the reader helper's long type is module-private). */
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

type AvroRecord = Record<string, unknown>;

/**
 * Re-encodes an Avro object container file with avsc after `edit` changed its records: the header
 * key-value metadata (and so the embedded schema with its field ids) is kept byte for byte unless
 * `schema` rewrites it; `codec` may change the block codec.
 */
async function rewriteAvro(
  path: string,
  edit: (records: AvroRecord[]) => AvroRecord[] | undefined,
  opts: {
    codec?: 'null' | 'deflate';
    schema?: (raw: string) => string;
    meta?: (meta: Record<string, string>) => void;
  } = {},
): Promise<number> {
  const read = await readWithAvsc(await fs.readFile(path));
  const records = edit(read.records) ?? read.records;
  const type = avsc.Type.forSchema(
    JSON.parse(read.rawSchema) as avsc.Schema,
    {
      typeHook: (s: unknown) => (isLong(s) ? BigLong : undefined),
    } as never,
  );
  const codec = opts.codec ?? (read.codec as 'null' | 'deflate');
  const kv = { ...read.meta };
  opts.meta?.(kv);
  const meta: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(kv)) meta[k] = Buffer.from(v, 'utf8');
  meta['avro.schema'] = Buffer.from(opts.schema ? opts.schema(read.rawSchema) : read.rawSchema, 'utf8');
  meta['avro.codec'] = Buffer.from(codec, 'utf8');
  const sync = Buffer.alloc(16, 0x5a);
  const body = Buffer.concat(records.map((r) => type.toBuffer(r)));
  const block = codec === 'deflate' ? deflateRawSync(body) : body;
  const parts = [Buffer.from([0x4f, 0x62, 0x6a, 0x01]), META_TYPE.toBuffer(meta), sync];
  if (records.length > 0)
    parts.push(LONG_TYPE.toBuffer(records.length), LONG_TYPE.toBuffer(block.length), block, sync);
  const file = Buffer.concat(parts);
  await fs.writeFile(path, file);
  return file.length;
}

type Json = Record<string, unknown>;
const parseJson = (text: string): Json =>
  parseLossless(text, null, (s: string) => (/^-?\d+$/.test(s) ? BigInt(s) : Number(s))) as Json;

/** A writable copy of a Floe table folder; the metadata keeps naming the original locations. */
class TableCopy {
  private constructor(
    private readonly origDir: string,
    readonly dir: string,
    private readonly metadataFile: string,
  ) {}

  static async of(wh: TestWarehouse, name: string, into: string): Promise<TableCopy> {
    const t = await wh.catalog.loadTable({ namespace: NS, name });
    const origDir = join(wh.dir, NS, name);
    await fs.cp(origDir, into, { recursive: true });
    return new TableCopy(origDir, into, relative(origDir, fileURLToPath(t.metadataLocation)));
  }

  /** Local path of a table URI (file:// under the original table folder) in the copy. */
  path(uri: string): string {
    const p = fileURLToPath(uri);
    const rel = relative(this.origDir, p);
    if (rel.startsWith('..')) throw new Error(`${uri} is outside the table`);
    return join(this.dir, rel);
  }

  async metadata(): Promise<Json> {
    return parseJson(await fs.readFile(join(this.dir, this.metadataFile), 'utf8'));
  }

  async editMetadata(edit: (m: Json) => void): Promise<void> {
    const m = await this.metadata();
    edit(m);
    await fs.writeFile(join(this.dir, this.metadataFile), stringifyLossless(m) ?? '');
  }

  async currentSnapshot(): Promise<Json> {
    const m = await this.metadata();
    return (m.snapshots as Json[]).find((s) => s['snapshot-id'] === m['current-snapshot-id'])!;
  }

  async manifestListUri(): Promise<string> {
    return String((await this.currentSnapshot())['manifest-list']);
  }

  /** The current snapshot's manifest list records. */
  async manifestFiles(): Promise<AvroRecord[]> {
    return (await readWithAvsc(await fs.readFile(this.path(await this.manifestListUri())))).records;
  }

  async entries(manifestUri: string): Promise<AvroRecord[]> {
    return (await readWithAvsc(await fs.readFile(this.path(manifestUri)))).records;
  }

  /** Rewrites a manifest and updates `manifest_length` in every manifest list that names it. */
  async rewriteManifest(
    uri: string,
    edit: (entries: AvroRecord[]) => void,
    opts: Parameters<typeof rewriteAvro>[2] = {},
  ): Promise<void> {
    const size = await rewriteAvro(
      this.path(uri),
      (rs) => {
        edit(rs);
        return rs;
      },
      opts,
    );
    for (const f of await fs.readdir(join(this.dir, 'metadata'))) {
      if (!f.startsWith('snap-')) continue;
      const listPath = join(this.dir, 'metadata', f);
      const { records } = await readWithAvsc(await fs.readFile(listPath));
      if (!records.some((r) => r.manifest_path === uri)) continue;
      await rewriteAvro(listPath, (rs) => {
        for (const r of rs) if (r.manifest_path === uri) r.manifest_length = BigInt(size);
        return rs;
      });
    }
  }

  async validate(opts: Partial<ValidateOptions> = {}): Promise<ValidationReport> {
    return validateTable({
      metadataJson: await fs.readFile(join(this.dir, this.metadataFile)),
      ...localTableIo((uri) => this.path(uri)),
      ...opts,
    });
  }
}

describe('corrupt copies of a Floe table', () => {
  let tmp: { dir: string; cleanup: () => void };
  let wh: TestWarehouse;
  let n = 0;
  const TABLE = 'click_events';
  const copy = () => TableCopy.of(wh, TABLE, join(tmp.dir, `copy-${n++}`));
  /** The first manifest of the current snapshot and its first entry's data file. */
  const firstManifest = async (c: TableCopy) => {
    const uri = String((await c.manifestFiles())[0]?.manifest_path);
    const entry = (await c.entries(uri))[0]!;
    return { uri, entry, file: entry.data_file as AvroRecord };
  };

  beforeAll(async () => {
    tmp = tempDir('floe-validator-mut-');
    wh = fileWarehouse(join(tmp.dir, 'wh'));
    await load(wh, [{ name: 'a.ndjson', lines: generate(120, 'v1', 21).lines }]);
    await load(wh, [{ name: 'b.ndjson', lines: generate(120, 'v2', 22).lines }], { maxRowsPerFile: 5 });
    await expectValidTable({ ...(await floeTableOptions(wh, TABLE)), snapshots: 'all' });
  });
  afterAll(() => tmp?.cleanup());

  it('an unchanged copy validates', async () => {
    const c = await copy();
    expect((await c.validate({ snapshots: 'all' })).problems).toEqual([]);
  });

  it('a record_count changed in a manifest re-encoded with avsc', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await c.rewriteManifest(uri, (es) => {
      const df = es[0]!.data_file as AvroRecord;
      df.record_count = (df.record_count as bigint) + 1n;
    });
    expect(codes(await c.validate())).toEqual([
      'manifest.count_mismatch',
      'parquet.row_count',
      'summary.total-records',
    ]);
  });

  it('a deleted data file', async () => {
    const c = await copy();
    const { file } = await firstManifest(c);
    await fs.rm(c.path(String(file.file_path)));
    const report = await c.validate();
    expect(codes(report)).toEqual(['file.missing']);
    expect(report.problems[0]?.path).toBe(file.file_path);
  });

  it('a manifest whose length no longer matches the manifest list (re-encoded, then truncated)', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    // Same entries, another block codec: only the length is wrong.
    await rewriteAvro(c.path(uri), () => undefined, { codec: 'deflate' });
    expect(codes(await c.validate())).toEqual(['manifest.length']);
    // Cut short: the length is wrong and the file no longer decodes.
    const bytes = await fs.readFile(c.path(uri));
    await fs.writeFile(c.path(uri), bytes.subarray(0, bytes.length - 40));
    const report = await c.validate();
    expect(codes(report)).toEqual(expect.arrayContaining(['manifest.decode', 'manifest.length']));
    expect(report.problems.find((p) => p.code === 'manifest.decode')?.message).toContain('truncated');
  });

  it('a missing manifest list and a missing manifest', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await fs.rm(c.path(uri));
    expect(codes(await c.validate())).toContain('manifest.missing');
    await fs.rm(c.path(await c.manifestListUri()));
    expect(codes(await c.validate())).toEqual(['manifest_list.missing']);
  });

  it('last-sequence-number below a snapshot sequence number', async () => {
    const c = await copy();
    await c.editMetadata((m) => {
      m['last-sequence-number'] = (m['last-sequence-number'] as bigint) - 1n;
    });
    expect(codes(await c.validate())).toEqual(['metadata.last-sequence-number']);
  });

  it('a summary total off by one', async () => {
    const c = await copy();
    await c.editMetadata((m) => {
      const s = (m.snapshots as Json[]).find((x) => x['snapshot-id'] === m['current-snapshot-id'])!;
      const summary = s.summary as Record<string, string>;
      summary['total-records'] = String(BigInt(summary['total-records'] ?? '0') + 1n);
    });
    expect(codes(await c.validate())).toEqual(['summary.total-records']);
  });

  /** Replaces a live data file with `bytes`, keeping the manifest's size and the summary total right. */
  const replaceDataFile = async (c: TableCopy, bytes: ArrayBuffer) => {
    const { uri, file } = await firstManifest(c);
    const delta = BigInt(bytes.byteLength) - (file.file_size_in_bytes as bigint);
    await fs.writeFile(c.path(String(file.file_path)), new Uint8Array(bytes));
    await c.rewriteManifest(uri, (es) => {
      (es[0]!.data_file as AvroRecord).file_size_in_bytes = BigInt(bytes.byteLength);
    });
    await c.editMetadata((m) => {
      const s = (m.snapshots as Json[]).find((x) => x['snapshot-id'] === m['current-snapshot-id'])!;
      const summary = s.summary as Record<string, string>;
      summary['total-files-size'] = String(BigInt(summary['total-files-size'] ?? '0') + delta);
    });
    return Number(file.record_count);
  };

  it('a Parquet data file whose column has no field id (written by hyparquet-writer)', async () => {
    const c = await copy();
    const rows = Number((await firstManifest(c)).file.record_count);
    const data = Array.from({ length: rows }, (_, i) => i);
    await replaceDataFile(c, parquetWriteBuffer({ columnData: [{ name: 'event_id', data, type: 'INT32' }] }));
    const report = await c.validate();
    expect(codes(report)).toEqual(['parquet.missing_field_id']);
    expect(report.problems[0]?.message).toContain('event_id');
  });

  it('a Parquet data file with a field id that no table schema has', async () => {
    const c = await copy();
    const rows = Number((await firstManifest(c)).file.record_count);
    const bytes = parquetWriteBuffer({
      columnData: [{ name: 'x', data: Array.from({ length: rows }, (_, i) => i) }],
      schema: [
        { name: 'root', num_children: 1 },
        { name: 'x', type: 'INT32', repetition_type: 'REQUIRED', field_id: 9999 },
      ],
    });
    await replaceDataFile(c, bytes);
    expect(codes(await c.validate())).toEqual(['parquet.unknown_field_id']);
  });

  it('refs.main not at current-snapshot-id, and a tag at a missing snapshot', async () => {
    const c = await copy();
    await c.editMetadata((m) => {
      const current = (m.snapshots as Json[]).find((x) => x['snapshot-id'] === m['current-snapshot-id'])!;
      (m.refs as Record<string, Json>).main = {
        'snapshot-id': current['parent-snapshot-id'],
        type: 'branch',
      };
    });
    expect(codes(await c.validate())).toEqual(['metadata.current-snapshot-id']);
    const d = await copy();
    await d.editMetadata((m) => {
      (m.refs as Record<string, Json>).gone = { 'snapshot-id': 12345n, type: 'tag' };
    });
    expect(codes(await d.validate())).toEqual(['ref.unknown_snapshot']);
  });

  it('snapshot-log and metadata-log entries out of time order', async () => {
    const c = await copy();
    await c.editMetadata((m) => {
      const e = (m['snapshot-log'] as Json[])[0]!;
      e['timestamp-ms'] = (e['timestamp-ms'] as bigint) + 3_600_000n;
    });
    expect(codes(await c.validate({ snapshots: 'none' }))).toEqual(['snapshot_log.order']);
    const d = await copy();
    await d.editMetadata((m) => {
      // An entry before the first one but later in time (the log may hold a single entry: a
      // table created with its first snapshot has one metadata file before its second commit).
      const log = m['metadata-log'] as Json[];
      log.unshift({ ...log[0]!, 'timestamp-ms': (log[0]!['timestamp-ms'] as bigint) + 3_600_000n });
    });
    expect(codes(await d.validate({ snapshots: 'none' }))).toEqual(['metadata_log.order']);
    const e = await copy();
    await e.editMetadata((m) => {
      (m['snapshot-log'] as Json[]).unshift({ 'timestamp-ms': 1n, 'snapshot-id': 42n });
    });
    expect(codes(await e.validate({ snapshots: 'none' }))).toEqual(['snapshot_log.unknown_snapshot']);
  });

  it('last-column-id below a field id; snapshot sequence numbers not increasing', async () => {
    const c = await copy();
    await c.editMetadata((m) => {
      m['last-column-id'] = 3n;
    });
    expect(codes(await c.validate({ snapshots: 'none' }))).toEqual(['metadata.last-column-id']);
    const d = await copy();
    await d.editMetadata((m) => {
      const current = (m.snapshots as Json[]).find((x) => x['snapshot-id'] === m['current-snapshot-id'])!;
      current['sequence-number'] = 1n;
    });
    expect(codes(await d.validate({ snapshots: 'none' }))).toEqual([
      'snapshot.duplicate_sequence_number',
      'snapshot.sequence_number_order',
    ]);
  });

  it('a manifest list entry with a sequence number above the snapshot’s', async () => {
    const c = await copy();
    await rewriteAvro(c.path(await c.manifestListUri()), (rs) => {
      rs[0]!.sequence_number = (rs[0]!.sequence_number as bigint) + 5n;
      return rs;
    });
    expect(codes(await c.validate())).toEqual(['manifest_list.sequence_number']);
  });

  it('an ADDED entry whose snapshot id is not the manifest’s added_snapshot_id', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await c.rewriteManifest(uri, (es) => {
      es[0]!.snapshot_id = 777n;
    });
    expect(codes(await c.validate())).toEqual(['entry.added_snapshot_id']);
  });

  it('a data manifest listed as a delete manifest', async () => {
    const c = await copy();
    await rewriteAvro(c.path(await c.manifestListUri()), (rs) => {
      rs[0]!.content = 1;
      return rs;
    });
    expect(codes(await c.validate())).toEqual(['manifest.content_mismatch']);
  });

  it('a partition field summary whose lower bound is above the manifest’s values', async () => {
    const c = await copy();
    await rewriteAvro(c.path(await c.manifestListUri()), (rs) => {
      // Field 2 is identity(region), a string: "zzz" sorts after every region name.
      const parts = rs[0]!.partitions as AvroRecord[];
      parts[1]!.lower_bound = Buffer.from('zzz');
      parts[1]!.upper_bound = Buffer.from('zzzz');
      return rs;
    });
    expect(codes(await c.validate())).toEqual(['manifest_list.partition_summary']);
  });

  it('the same manifest listed twice: its files are live twice', async () => {
    const c = await copy();
    await rewriteAvro(c.path(await c.manifestListUri()), (rs) => [rs[0]!, ...rs]);
    expect(codes(await c.validate())).toEqual(
      expect.arrayContaining(['file.duplicate_live', 'summary.total-records']),
    );
  });

  it('manifest header metadata: a missing required key, a partition spec that is not the table’s', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await c.rewriteManifest(uri, () => undefined, {
      meta: (m) => {
        delete m['partition-spec-id'];
      },
    });
    expect(codes(await c.validate())).toEqual(['manifest.header']);
    const d = await copy();
    const first = await firstManifest(d);
    await d.rewriteManifest(first.uri, () => undefined, {
      meta: (m) => {
        m['partition-spec'] = m['partition-spec']!.replace('"source-id":4', '"source-id":3');
      },
    });
    expect(codes(await d.validate())).toEqual(['manifest.partition_spec']);
  });

  it('entry sequence numbers: above the manifest’s, below its min_sequence_number, or missing', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await c.rewriteManifest(uri, (es) => {
      es[0]!.sequence_number = 99n;
    });
    expect(codes(await c.validate())).toEqual(['entry.sequence_number']);
    const d = await copy();
    await d.rewriteManifest(uri, (es) => {
      es[0]!.sequence_number = 0n;
      es[0]!.file_sequence_number = 0n;
    });
    expect(codes(await d.validate())).toEqual(['manifest_list.min_sequence_number']);
    const e = await copy();
    await e.rewriteManifest(uri, (es) => {
      es[0]!.status = 0; // EXISTING, still without explicit sequence numbers
    });
    expect(codes(await e.validate())).toEqual(['entry.sequence_number_missing', 'manifest.count_mismatch']);
  });

  it('a manifest whose Avro schema gives a metrics map key a wrong field id', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await c.rewriteManifest(uri, () => undefined, {
      schema: (raw) => raw.replace(/("name":"key","type":"int"[^}]*"field-id":)117/, '$1217'),
    });
    const report = await c.validate();
    expect(codes(report)).toEqual(['manifest.field_id']);
    expect(report.problems[0]?.message).toBe(
      'manifest_entry.data_file.column_sizes.key has field-id 217, expected 117',
    );
  });

  it('a manifest whose Avro schema gives record_count a wrong field id', async () => {
    const c = await copy();
    const { uri } = await firstManifest(c);
    await c.rewriteManifest(uri, () => undefined, {
      schema: (raw) => raw.replace(/("name":"record_count",[^}]*"field-id":)103/, '$11103'),
    });
    const report = await c.validate();
    expect(codes(report)).toContain('manifest.field_id');
    expect(report.problems.find((p) => p.code === 'manifest.field_id')?.message).toContain('record_count');
  });
});

describe('corrupt copies of a Floe table with deletes and compaction', () => {
  let tmp: { dir: string; cleanup: () => void };
  let t: SmallLoads;
  let n = 0;
  const copy = () => TableCopy.of(t.wh, CLICKS.name, join(tmp.dir, `copy-${n++}`));
  /** Manifests of the current snapshot holding an entry with `status`. */
  const manifestsWith = async (c: TableCopy, status: number) => {
    const out: string[] = [];
    for (const mf of await c.manifestFiles()) {
      const uri = String(mf.manifest_path);
      if ((await c.entries(uri)).some((e) => e.status === status)) out.push(uri);
    }
    return out;
  };

  beforeAll(async () => {
    tmp = tempDir('floe-validator-del-');
    t = await smallLoads(4, 5);
    await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [2n, 3n] });
  });
  afterAll(() => {
    t?.cleanup();
    tmp?.cleanup();
  });

  it('an equality delete whose equality_ids name a column the delete file lacks', async () => {
    const c = await copy();
    const m = await c.metadata();
    const schema = (m.schemas as Json[]).find((s) => s['schema-id'] === m['current-schema-id'])!;
    const page = (schema.fields as Json[]).find((f) => f.name === 'page')!;
    const deletes = (await c.manifestFiles()).filter((mf) => mf.content === 1);
    expect(deletes.length).toBe(1);
    await c.rewriteManifest(String(deletes[0]!.manifest_path), (es) => {
      for (const e of es) (e.data_file as AvroRecord).equality_ids = [Number(page.id)];
    });
    expect(codes(await c.validate())).toEqual(['delete.equality_ids']);
  });

  it('a DELETED entry that keeps the snapshot id of the snapshot that added the file', async () => {
    // Compaction only: its replace snapshot's manifests record the rewritten files as DELETED.
    const steps = { compact: true, rewriteManifests: false, expire: false, orphans: false };
    expect(
      (
        await maintainTable(t.deps(), CLICKS, {
          steps,
          retainLast: 1,
          expireOlderThanMs: 0,
          orphansOlderThanMs: 0,
        })
      ).failed,
    ).toEqual([]);
    await expectValidTable({ ...(await floeTableOptions(t.wh, CLICKS.name)), snapshots: 'all' });
    const c = await copy();
    const withDeleted = await manifestsWith(c, 2);
    expect(withDeleted.length).toBeGreaterThan(0);
    const parentId = (await c.currentSnapshot())['parent-snapshot-id'] as bigint;
    await c.rewriteManifest(withDeleted[0]!, (es) => {
      for (const e of es) if (e.status === 2) e.snapshot_id = parentId;
    });
    expect(codes(await c.validate())).toEqual(['entry.deleted_snapshot_id']);
  });
});
