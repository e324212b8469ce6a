/**
 * Partition values of any content land and read back: records whose identity, truncate and bucket
 * partition values hold `/`, `%`, `+`, spaces, control characters, unicode, the empty string,
 * null or 1,000 characters are loaded by `floe load` (a real process) into a file:// warehouse,
 * and in process into an S3 warehouse (s3rver). Checked independently of the scan planner: the
 * manifests' partition tuples (computed here from the spec's rules), the data file names (Java's
 * escaping), the rows DuckDB reads from the live files, the rows `floe query` returns, and the
 * independent Iceberg validator (every snapshot walked) over every table.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { FileCatalog } from '../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { murmur3Hash32, murmur3HashLong } from '../../lambdas/src/iceberg/murmur3.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/index.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import {
  currentSnapshotOf,
  fileWarehouse,
  type LiveFile,
  liveFiles,
  load,
  openDuck,
  sqlString,
  tempDir,
} from '../helpers/e2e.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/floe.mjs');
const NS = 'default';

/** String partition values of every awkward kind; `null` too. */
const STRINGS: readonly (string | null)[] = [
  'eu/west',
  '/../../etc/passwd',
  'a b',
  'a+b',
  '100%',
  '%2F',
  'k=v&x=y',
  'what?',
  '#tag',
  'back\\slash',
  'tab\tnew\nline\u0001',
  'é ü',
  '東京',
  '😀🎉x',
  '',
  null,
  'null',
  '..',
  ' ',
  'x'.repeat(1000),
  `${'x'.repeat(999)}y`,
  '😀'.repeat(1000),
];

/** Long partition values (identity, truncate[10], bucket[4]) and doubles (identity). */
// (truncate[10] of the minimum long would leave the long range: Floe refuses it, so it is not here.)
const LONGS: readonly bigint[] = [
  0n,
  -7n,
  42n,
  9007199254740993n,
  -9223372036854775800n,
  9223372036854775807n,
];
const DOUBLES: readonly number[] = [1.5, -2.25, 1e300, 0.1];

const CONFIG = {
  partitioning: {
    candidates: [],
    tables: {
      s_events: ['region', 'truncate[3](region)', 'bucket[8](region)', 'hour(ts)'],
      n_events: ['num', 'truncate[10](num)', 'bucket[4](num)', 'identity(ratio)'],
    },
  },
};

const TS = ['2025-03-14T15:00:00Z', '2025-03-14T16:59:59.999Z'];

function inputLines(): string[] {
  const s = STRINGS.map((region, i) => JSON.stringify({ event_type: 's', id: i, region, ts: TS[i % 2] }));
  // Longs are written as JSON integers (exact beyond 2^53), doubles with a fraction or exponent.
  const n = LONGS.map((num, i) => {
    const ratio = DOUBLES[i % DOUBLES.length]!;
    const text = Number.isInteger(ratio) ? ratio.toFixed(1) : String(ratio);
    return `{"event_type":"n","id":${i},"num":${num},"ratio":${text}}`;
  });
  return [...s, ...n];
}

// ---- expectations from the spec's transform rules, computed here ----

const utf8 = new TextEncoder();
const truncate3 = (v: string | null) => (v === null ? null : Array.from(v).slice(0, 3).join(''));
const bucketString = (v: string | null, n: number) =>
  v === null ? null : (murmur3Hash32(utf8.encode(v)) & 0x7fffffff) % n;
const hourOf = (ts: string) => Math.floor(Date.parse(ts) / 3_600_000);
const floorTo = (v: bigint, w: bigint) => v - (((v % w) + w) % w);

function expectedStringTuple(id: number): unknown[] {
  const v = STRINGS[id]!;
  return [v, truncate3(v), bucketString(v, 8), hourOf(TS[id % 2]!)];
}

function expectedNumberTuple(id: number): unknown[] {
  const v = LONGS[id]!;
  return [v, floorTo(v, 10n), (murmur3HashLong(v) & 0x7fffffff) % 4, DOUBLES[id % DOUBLES.length]];
}

// ---- independent reads ----

interface TableRows {
  /** `id → partition tuple` of the file holding that row. */
  readonly tupleOf: Map<number, unknown[]>;
  /** Rows as read by DuckDB from the live files, keyed by id. */
  readonly rows: Map<number, Record<string, unknown>>;
  readonly files: LiveFile[];
}

function fieldIds(m: TableMetadata): Map<string, number> {
  const schema = m.schemas.find((s) => s.schemaId === m['current-schema-id'])!;
  return new Map(schema.fields.map((f) => [f.name, f.id]));
}

/** Reads every live file of the table with DuckDB (by field id) and pairs its rows with its tuple. */
async function readTable(
  store: ObjectStore,
  m: TableMetadata,
  columns: Record<string, string>,
  localPath: (uri: string) => Promise<string>,
): Promise<TableRows> {
  const ids = fieldIds(m);
  const schemaMap = Object.entries(columns)
    .map(([name, type]) => `${ids.get(name)}: {name: '${name}', type: '${type}', default_value: NULL}`)
    .join(', ');
  const files = await liveFiles(store, currentSnapshotOf(m)!);
  const tupleOf = new Map<number, unknown[]>();
  const rows = new Map<number, Record<string, unknown>>();
  const duck = await openDuck();
  try {
    for (const f of files) {
      const path = await localPath(f.file.file_path);
      const got = await duck.rows(
        `SELECT * FROM read_parquet(${sqlString(path)}, schema=map{${schemaMap}}, hive_partitioning=false)`,
      );
      expect(got.length).toBe(Number(f.file.record_count));
      for (const r of got) {
        const id = Number(r.id);
        expect(rows.has(id), `id ${id} in two files`).toBe(false);
        rows.set(id, r);
        tupleOf.set(id, [...f.file.partition]);
      }
    }
  } finally {
    duck.close();
  }
  return { tupleOf, rows, files };
}

/** Every check on the loaded tables, whichever store holds them. */
async function checkTables(
  store: ObjectStore,
  metadata: (name: string) => Promise<TableMetadata>,
  localPath: (uri: string) => Promise<string>,
): Promise<void> {
  const s = await readTable(
    store,
    await metadata('s_events'),
    { id: 'BIGINT', region: 'VARCHAR' },
    localPath,
  );
  // Every string record, exactly, in a file whose tuple is the record's partition.
  expect([...s.rows.keys()].sort((a, b) => a - b)).toEqual(STRINGS.map((_, i) => i));
  for (const [id, row] of s.rows) {
    expect(row.region, `id ${id}`).toBe(STRINGS[id]);
    expect(s.tupleOf.get(id), `id ${id}`).toEqual(expectedStringTuple(id));
  }
  // Names as Java escapes them (URLEncoder), every segment storable.
  const pathOf = (id: number) => s.files.find((f) => f.file.partition[0] === STRINGS[id])!.file.file_path;
  const hour = (id: number) => `ts_hour=2025-03-14-${id % 2 === 0 ? '15' : '16'}`;
  expect(pathOf(0)).toContain(
    `/data/region=eu%2Fwest/region_trunc=eu%2F/region_bucket=${bucketString('eu/west', 8)}/${hour(0)}/`,
  );
  expect(pathOf(2)).toContain('/data/region=a+b/region_trunc=a+b/');
  expect(pathOf(3)).toContain('/data/region=a%2Bb/region_trunc=a%2Bb/');
  expect(pathOf(4)).toContain('/data/region=100%25/region_trunc=100/');
  expect(pathOf(14)).toContain('/data/region=/region_trunc=/');
  expect(pathOf(15)).toContain('/data/region=null/region_trunc=null/region_bucket=null/');
  for (const f of s.files) {
    for (const seg of f.file.file_path.split('/')) expect(Buffer.byteLength(seg)).toBeLessThanOrEqual(255);
  }
  // Two 1,000-character values with a 999-character common prefix: two partition folders.
  const dirOf = (id: number) => pathOf(id).slice(0, pathOf(id).lastIndexOf('/'));
  expect(dirOf(19)).not.toBe(dirOf(20));

  const n = await readTable(
    store,
    await metadata('n_events'),
    { id: 'BIGINT', num: 'BIGINT', ratio: 'DOUBLE' },
    localPath,
  );
  expect([...n.rows.keys()].sort((a, b) => a - b)).toEqual(LONGS.map((_, i) => i));
  for (const [id, row] of n.rows) {
    expect(row.num, `id ${id}`).toBe(LONGS[id]);
    expect(row.ratio, `id ${id}`).toBe(DOUBLES[id % DOUBLES.length]);
    expect(n.tupleOf.get(id), `id ${id}`).toEqual(expectedNumberTuple(id));
  }
}

/** `SELECT id, region` rows of the query engine as comparable strings. */
const regionKeys = (rows: readonly Record<string, unknown>[]) =>
  rows.map((r) => JSON.stringify([String(r.id), r.region])).sort();
const wantRegionKeys = () => STRINGS.map((v, i) => JSON.stringify([String(i), v])).sort();

// ---------------------------------------------------------------------------------------------

function floe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.FLOE_WAREHOUSE;
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** `floe load` (a real process) of the input into the warehouse `whDir`, with `CONFIG`. */
async function loadInto(dir: string, whDir: string): Promise<void> {
  const input = join(dir, 'in.ndjson');
  const config = join(dir, 'floe.config.json');
  writeFileSync(input, `${inputLines().join('\n')}\n`);
  writeFileSync(config, JSON.stringify(CONFIG));
  const run = await floe('load', input, '-w', whDir, '-c', config, '-q');
  expect(run.stderr + run.stdout).not.toMatch(/NOT LOADED|FAILED/);
  expect(run.code).toBe(0);
}

describe('floe load: partition values of any content (file:// warehouse)', () => {
  const tmp = tempDir('floe-e2e-pvals-');
  const whDir = join(tmp.dir, 'wh');
  afterAll(() => tmp.cleanup());

  beforeAll(async () => {
    await loadInto(tmp.dir, whDir);
  }, 120_000);

  it('every record lands in its partition tuple and reads back exactly through DuckDB', async () => {
    const wh = fileWarehouse(whDir);
    await checkTables(
      wh.store,
      async (name) => (await wh.catalog.loadTable({ namespace: NS, name })).metadata,
      async (uri) => wh.store.pathOf(uri),
    );
  });

  it('stores Java-escaped folder names as written: region=eu%2Fwest is one folder', () => {
    const data = join(whDir, NS, 's_events', 'data');
    const folders = readdirSync(data);
    expect(folders).toContain('region=eu%2Fwest');
    expect(folders).not.toContain('region=eu');
    expect(folders).toContain('region=%2F..%2F..%2Fetc%2Fpasswd');
    expect(folders).toContain('region=null');
    expect(folders).toContain('region=');
  });

  it('floe query returns every value exactly', async () => {
    const run = await floe('query', '-w', whDir, '--json', 'SELECT id, region FROM s_events');
    expect(run.code).toBe(0);
    const rows = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(regionKeys(rows)).toEqual(wantRegionKeys());
    const nums = await floe('query', '-w', whDir, '--json', 'SELECT id, num FROM n_events ORDER BY id');
    expect(nums.code).toBe(0);
    expect(
      nums.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { num: string }).num),
    ).toEqual(LONGS.map(String));
  });

  it("an independent validator accepts every table, every snapshot (file locations read literally, as Java's Hadoop FileIO reads them)", async () => {
    const reports = await expectWarehouseValid(fileWarehouse(whDir));
    expect([...reports.keys()].sort()).toEqual([`${NS}.n_events`, `${NS}.s_events`]);
  });
});

/**
 * A reader that takes every location literally, as Java's Hadoop `Path` and PyIceberg do
 * (`urlparse`, no unquoting): the path part of `file:` URIs is the file name, escapes and all.
 * Nothing of Floe's store is in the loop.
 */
function literalPath(uri: string): string {
  const m = /^file:(?:\/\/(?:localhost)?(?=\/))?(\/.*)$/s.exec(uri);
  if (!m) throw new Error(`not a local file URI: ${uri}`);
  return m[1]!;
}
const literalStore = {
  get: async (uri: string) => new Uint8Array(readFileSync(literalPath(uri))),
} as unknown as ObjectStore;

describe('floe load: a warehouse folder with a space and a non-ASCII letter, read literally', () => {
  const tmp = tempDir('floe-e2e-pvals-literal-');
  const whDir = join(tmp.dir, 'my lake é');
  afterAll(() => tmp.cleanup());

  beforeAll(async () => {
    await loadInto(tmp.dir, whDir);
  }, 120_000);

  const metadata = async (name: string) =>
    (await fileWarehouse(whDir).catalog.loadTable({ namespace: NS, name })).metadata;

  it('names the table locations literally, without escapes', async () => {
    for (const name of ['s_events', 'n_events']) {
      const m = await metadata(name);
      expect(m.location).toBe(`file://${join(whDir, NS, name)}`);
      const snap = currentSnapshotOf(m)!;
      expect(existsSync(literalPath(snap['manifest-list']!))).toBe(true);
    }
  });

  it('a literal reader finds every manifest and data file, and every row in its partition tuple', async () => {
    const m = await metadata('s_events');
    const files = await liveFiles(literalStore, currentSnapshotOf(m)!);
    expect(files.length).toBeGreaterThan(0);
    const missing = files.map((f) => f.file.file_path).filter((uri) => !existsSync(literalPath(uri)));
    expect(missing).toEqual([]);
    await checkTables(literalStore, metadata, async (uri) => literalPath(uri));
  });

  it('stores each Java-escaped partition folder under exactly its escaped name', () => {
    const folders = readdirSync(join(whDir, NS, 's_events', 'data'));
    for (const name of [
      'region=k%3Dv%26x%3Dy',
      'region=what%3F',
      'region=%23tag',
      'region=100%25',
      'region=a+b',
    ])
      expect(folders).toContain(name);
    expect(folders).not.toContain('region=k=v&x=y');
  });
});

/**
 * The local store as it was before `file:` names were literal, written here on its own: a URI's
 * path is percent-decoded but for `%2F` and `%00` (RFC 8089 otherwise), and listings spell paths
 * back as `pathToFileURL` does. Used to lay out a warehouse the old way.
 */
class DecodingStore implements ObjectStore {
  private readonly inner = new LocalObjectStore();
  private at(uri: string): string {
    return fileUri(fileURLToPath(uri.replace(/%(2f|00)/gi, '%25$1')));
  }
  private back(uri: string): string {
    return pathToFileURL(literalPath(uri)).href.replace(/%25(2f|00)/gi, '%$1');
  }
  get = (uri: string) => this.inner.get(this.at(uri));
  put = (uri: string, b: Uint8Array | string) => this.inner.put(this.at(uri), b);
  putIfAbsent = (uri: string, b: Uint8Array | string) => this.inner.putIfAbsent(this.at(uri), b);
  exists = (uri: string) => this.inner.exists(this.at(uri));
  delete = (uri: string) => this.inner.delete(this.at(uri));
  size = (uri: string) => this.inner.size(this.at(uri));
  listChildren = (prefix: string) => this.inner.listChildren(this.at(prefix));
  list = async (prefix: string) => (await this.inner.list(this.at(prefix))).map((u) => this.back(u));
}

describe('floe maintain --rewrite-locations: a warehouse written when file names were stored percent-decoded', () => {
  const tmp = tempDir('floe-e2e-pvals-legacy-');
  const whDir = join(tmp.dir, 'old lake é');
  afterAll(() => tmp.cleanup());

  beforeAll(async () => {
    const store = new DecodingStore();
    const catalog = new FileCatalog(store, pathToFileURL(whDir).href);
    const { dead, report } = await load({ store, catalog }, [{ name: 'in.ndjson', lines: inputLines() }], {
      config: parseConfig(CONFIG),
    });
    expect(dead).toEqual([]);
    expect(report.failures ?? []).toEqual([]);
    expect(report.rows).toBe(STRINGS.length + LONGS.length);
  }, 120_000);

  const metadata = async (name: string) =>
    (await fileWarehouse(whDir).catalog.loadTable({ namespace: NS, name })).metadata;
  const missingLiterally = async (name: string) => {
    const m = await metadata(name);
    if (!existsSync(literalPath(currentSnapshotOf(m)!['manifest-list']!))) return ['the manifest list'];
    const files = await liveFiles(literalStore, currentSnapshotOf(m)!);
    return files.map((f) => f.file.file_path).filter((uri) => !existsSync(literalPath(uri)));
  };
  const queryRegions = async () => {
    const run = await floe('query', '-w', whDir, '--json', 'SELECT id, region FROM s_events');
    expect(run.code).toBe(0);
    return regionKeys(
      run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
  };

  it('was laid out the old way: an escaped location, decoded folders a literal reader misses', async () => {
    expect((await metadata('s_events')).location).toContain('/old%20lake%20%C3%A9/');
    expect(readdirSync(join(whDir, NS, 's_events', 'data'))).toContain('region=k=v&x=y');
    expect(await missingLiterally('s_events')).not.toEqual([]);
  });

  it('keeps reading: floe query finds every row', async () => {
    expect(await queryRegions()).toEqual(wantRegionKeys());
  });

  it('rewrites location and files under literal names: a literal reader then sees every row', async () => {
    const dry = await floe('maintain', '-w', whDir, '--rewrite-locations', '--dry-run', '--json');
    expect(dry.code).toBe(0);
    expect(await missingLiterally('s_events')).not.toEqual([]); // a dry run changes nothing
    const run = await floe('maintain', '-w', whDir, '--rewrite-locations');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`→ file://${join(whDir, NS, 's_events')}`);
    for (const name of ['s_events', 'n_events']) {
      expect((await metadata(name)).location).toBe(`file://${join(whDir, NS, name)}`);
      expect(await missingLiterally(name)).toEqual([]);
    }
    await checkTables(literalStore, metadata, async (uri) => literalPath(uri));
    expect(await queryRegions()).toEqual(wantRegionKeys());
    // Every other step runs on the moved tables as before.
    const all = await floe('maintain', '-w', whDir, '--json');
    expect(all.code).toBe(0);
    expect(await queryRegions()).toEqual(wantRegionKeys());
    await checkTables(literalStore, metadata, async (uri) => literalPath(uri));
  });
});

describe('load: partition values of any content (S3 warehouse on s3rver)', () => {
  let s3: Awaited<ReturnType<typeof startS3rver>>;
  let store: S3ObjectStore;
  let catalog: FileCatalog;
  const tmp = tempDir('floe-e2e-pvals-s3-');
  const local = new Map<string, string>();

  /** A local copy of an S3 object for DuckDB (which reads local paths here). */
  async function download(uri: string): Promise<string> {
    let path = local.get(uri);
    if (!path) {
      mkdirSync(join(tmp.dir, 'copies'), { recursive: true });
      path = join(tmp.dir, 'copies', `${local.size}.parquet`);
      writeFileSync(path, await store.get(uri));
      local.set(uri, path);
    }
    return path;
  }

  beforeAll(async () => {
    s3 = await startS3rver();
    store = new S3ObjectStore(s3.client);
    catalog = new FileCatalog(store, 's3://bucket/wh');
    const { report, dead } = await load({ store, catalog }, [{ name: 'in.ndjson', lines: inputLines() }], {
      config: parseConfig(CONFIG),
    });
    expect(dead).toEqual([]);
    expect(report.rows).toBe(STRINGS.length + LONGS.length);
  }, 120_000);

  afterAll(async () => {
    await s3?.close();
    tmp.cleanup();
  });

  const metadata = async (name: string) => (await catalog.loadTable({ namespace: NS, name })).metadata;

  it('every record lands in its partition tuple and reads back exactly through DuckDB', async () => {
    await checkTables(store, metadata, download);
  });

  it('the data files are listed under their escaped keys', async () => {
    const m = await metadata('s_events');
    const live = (await liveFiles(store, currentSnapshotOf(m)!)).map((f) => f.file.file_path).sort();
    expect(await store.list(`${m.location}/data`)).toEqual(live);
  });

  it('the query engine returns every value exactly', async () => {
    const engine = new IcebergQueryEngine({ read: (u) => store.get(u), resolvePath: (u) => local.get(u)! });
    try {
      const m = await metadata('s_events');
      for (const f of await liveFiles(store, currentSnapshotOf(m)!)) await download(f.file.file_path);
      await engine.registerTable('s_events', m);
      expect(regionKeys((await engine.query('SELECT id, region FROM s_events')).rows)).toEqual(
        wantRegionKeys(),
      );
    } finally {
      engine.close();
    }
  });

  it('an independent validator accepts every table, every snapshot (S3 keys as written)', async () => {
    // Named, not listed: s3rver answers a delimited listing of these keys with nothing.
    const tables = ['n_events', 's_events'].map((name) => ({ namespace: NS, name }));
    const reports = await expectWarehouseValid({ store, catalog }, { tables });
    expect([...reports.keys()].sort()).toEqual([`${NS}.n_events`, `${NS}.s_events`]);
  });
});
