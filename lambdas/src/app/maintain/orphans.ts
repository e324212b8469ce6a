/**
 * Orphan file cleanup (Java `DeleteOrphanFiles`): files under the table's location that no metadata
 * reaches — leftovers of failed or abandoned commits — and that are older than the threshold. A
 * younger file is never deleted: it may belong to a commit in flight. Reachable means named by the
 * current metadata file, its metadata log, its statistics, a table property (legacy watermark
 * files), any snapshot's manifest list, manifest, data or delete file, the catalog's version hint,
 * or `protect` (files a streaming ingest has staged but not yet committed).
 *
 * Paths are compared as Java does with `equalSchemes` (s3a/s3n = s3) and, in addition, after
 * percent-decoding, so two spellings of one object never make it look orphaned; and the run refuses
 * to delete anything when none of the table's live data files shows up in the listing (the listing
 * and the metadata disagree about where the table is — deleting would destroy it).
 */
import { CHANGE_VERSIONS_DIR } from '../../engine/key-versions.ts';
import { ErrorKind, FloeError, isFloeError } from '../../errors.ts';
import { DataFileContent } from '../../iceberg/manifest/types.ts';
import { currentSnapshot } from '../../iceberg/table-metadata.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import { tableIdToString } from '../../ports/catalog.ts';
import { deleteQuietly, listEntries, type ObjectEntry, type ObjectStore } from '../../ports/object-store.ts';
import { ManifestReader, metadataFiles, reachedBy } from './reachable.ts';

export interface OrphanReport {
  /** Objects under the table location. */
  readonly listed: number;
  /** Deleted (or, dry run, that would be). */
  readonly orphans: number;
  readonly bytes: number;
  /** Unreached but younger than the threshold: kept. */
  readonly young: number;
  /** A few of the orphans' URIs, for the report. */
  readonly sample: readonly string[];
}

export interface OrphanOptions {
  readonly olderThanMs: number;
  readonly nowMs: number;
  readonly dryRun?: boolean;
  /** Files that must be kept though no metadata reaches them (staged, not yet committed). */
  readonly protect?: () => Promise<Iterable<string>>;
}

const SAMPLE = 5;
/** Floe's own state beside a table's files (change versions: engine/key-versions.ts), never orphans. */
const FLOE_STATE = `./${CHANGE_VERSIONS_DIR}/`;
const EQUAL_SCHEMES: Readonly<Record<string, string>> = { s3a: 's3', s3n: 's3' };

export async function deleteOrphanFiles(
  store: ObjectStore,
  table: LoadedTable,
  opts: OrphanOptions,
): Promise<OrphanReport> {
  const meta = table.metadata;
  const keyOf = tableKeys(table);
  const listed = await listEntries(store, `${meta.location}/`);
  const reachable = new Set<string>();
  const add = (uri: string) => reachable.add(keyOf(uri));
  for (const f of metadataFiles(meta, table.metadataLocation)) add(f);
  add(`${meta.location}/metadata/version-hint.text`);
  const reached = await reachedBy(new ManifestReader(store), meta.snapshots).catch((e: unknown) => {
    if (!isFloeError(e, ErrorKind.NotFound)) throw e;
    // Without every manifest, what the table reaches is unknown: deleting anything could destroy it.
    throw new FloeError(
      ErrorKind.DataInvalid,
      `cannot tell which files of ${tableIdToString(table.id)} are orphans: ${e.message} (a snapshot names a file that is gone; expire that snapshot first)`,
      { cause: e, context: { table: tableIdToString(table.id) } },
    );
  });
  for (const f of reached.manifestLists) add(f);
  for (const f of reached.manifests) add(f);
  for (const f of reached.contentFiles.keys()) add(f);
  for (const f of (await opts.protect?.()) ?? []) add(f);
  refuseOnDisagreement(table, listed, reached.contentFiles, reachable, keyOf);
  const cutoff = opts.nowMs - opts.olderThanMs;
  const orphans: ObjectEntry[] = [];
  let young = 0;
  const names = reachableNames(reachable);
  for (const e of listed) {
    const key = keyOf(e.uri);
    if (reachable.has(key) || key.startsWith(FLOE_STATE)) continue;
    // File names are unique (uuids): a listed file named like a reached one is that file spelled
    // another way — the comparison is wrong for this table, and deleting would destroy it.
    const twin = names.get(baseName(key));
    if (twin !== undefined) refuseSpelling(table, e.uri, twin);
    // An object without a time (0) counts as young: never guess that something is old.
    if (e.lastModifiedMs > 0 && e.lastModifiedMs < cutoff) orphans.push(e);
    else young++;
  }
  if (!opts.dryRun)
    await deleteQuietly(
      store,
      orphans.map((o) => o.uri),
    );
  return {
    listed: listed.length,
    orphans: orphans.length,
    bytes: orphans.reduce((n, o) => n + o.size, 0),
    young,
    sample: orphans.slice(0, SAMPLE).map((o) => o.uri),
  };
}

/**
 * Keys that compare a table's files wherever they are spelled from: a path below the table's
 * location, or below the folder its metadata file is in (a table copied from S3 keeps its `s3://`
 * location in the metadata while new metadata files are named by the local folder), becomes the
 * path relative to that root; anything else stays absolute.
 */
function tableKeys(table: LoadedTable): (uri: string) => string {
  const roots = [pathKey(`${table.metadata.location}/`)];
  const folder = /^(.*\/)metadata\/[^/]+$/.exec(pathKey(table.metadataLocation))?.[1];
  if (folder !== undefined && !roots.includes(folder)) roots.push(folder);
  return (uri) => {
    const k = pathKey(uri);
    for (const r of roots) if (k.startsWith(r)) return `./${k.slice(r.length)}`;
    return k;
  };
}

/**
 * Stops before deleting anything when the listing and the metadata disagree about where the table
 * is (a relocated copy, a scheme the store spells differently): the current metadata file, when
 * it lies below the location, must be listed and recognised, and so must at least one live data file.
 */
function refuseOnDisagreement(
  table: LoadedTable,
  listed: readonly ObjectEntry[],
  reached: ReadonlyMap<string, { content: number }>,
  reachable: ReadonlySet<string>,
  keyOf: (uri: string) => string,
): void {
  const seen = new Set(listed.map((e) => keyOf(e.uri)));
  const current = keyOf(table.metadataLocation);
  const refuse = (why: string) => {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `refusing to delete orphan files of ${tableIdToString(table.id)}: ${why}`,
      { context: { table: tableIdToString(table.id), location: table.metadata.location } },
    );
  };
  if (current.startsWith('./') && !seen.has(current)) {
    refuse(
      `its current metadata file ${table.metadataLocation} is not in the listing of ${table.metadata.location}`,
    );
  }
  if (!currentSnapshot(table.metadata)) return;
  const data = [...reached].filter(
    ([p, f]) => f.content === DataFileContent.DATA && keyOf(p).startsWith('./'),
  );
  if (data.length === 0) return; // every data file lives elsewhere (write.data.path): nothing to compare
  if (!data.some(([p]) => seen.has(keyOf(p))) || ![...seen].some((k) => reachable.has(k))) {
    refuse(
      `none of its ${data.length} data files under ${table.metadata.location} appears in the listing of that location`,
    );
  }
}

function baseName(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

function reachableNames(reachable: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const k of reachable) out.set(baseName(k), k);
  return out;
}

function refuseSpelling(table: LoadedTable, listed: string, reached: string): never {
  throw new FloeError(
    ErrorKind.DataInvalid,
    `refusing to delete orphan files of ${tableIdToString(table.id)}: the listing shows ${listed}, which the metadata names as ${reached.replace(/^\.\//, `${table.metadata.location}/`)}; the two spellings of the table's location disagree`,
    { context: { table: tableIdToString(table.id), listed, reached } },
  );
}

/** The comparable form of a URI: equal schemes folded, `file:/x` = `file:///x`, escapes decoded. */
export function pathKey(uri: string): string {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/.exec(uri);
  let scheme = '';
  let rest = uri;
  if (m) {
    scheme = m[1]!.toLowerCase();
    scheme = EQUAL_SCHEMES[scheme] ?? scheme;
    rest = m[2]!;
    if (scheme === 'file') rest = `//${rest.replace(/^\/+/, '/')}`;
  }
  rest = rest.replace(/(?<!^\/?)\/{2,}/g, '/').replace(/\/(\.\/)+/g, '/');
  if (!scheme) rest = rest.replace(/^(\.\/)+/, ''); // `./t/x` and `t/x`: one relative path
  try {
    rest = decodeURIComponent(rest);
  } catch {
    // Not a valid escape sequence: compare as written.
  }
  return `${scheme}:${rest}`;
}
