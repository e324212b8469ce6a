/**
 * What `floe load` loaded, kept in the snapshot summary of every table it commits to, so running
 * a load again is safe: a file a table already holds is skipped for that table (README "Running a
 * load again").
 *
 * One summary key, {@link LOADED_FILES_KEY}, on each commit: one line per input file that fed the
 * table in that commit, `<hash> <size> <name>`. `hash` is the first 128 bits of the file's SHA-256
 * in hex (`sha256sum FILE | cut -c1-32`): it identifies the bytes, so a renamed copy is the same
 * file and an appended-to one is another. `name` (the base name, at most 60 characters) is for
 * messages only. About 60 bytes per file; the list is never carried forward: each commit records
 * its own files and the check walks the table's lineage (current snapshot, then parents).
 */

import { MAIN_BRANCH } from '../iceberg/snapshot.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { branchHead, snapshotAncestors } from '../iceberg/table-metadata.ts';
import type { Catalog, TableIdentifier } from '../ports/catalog.ts';

export const LOADED_FILES_KEY = 'floe.loaded-files';

/** A file's identity: its content hash and size in bytes. */
export interface FileFingerprint {
  readonly hash: string;
  readonly size: number;
}

export interface LoadedFile extends FileFingerprint {
  /** For messages only (a base name). */
  readonly name: string;
}

/** A file as a table's lineage records it: which snapshot loaded it, and when. */
export interface PastLoad extends LoadedFile {
  readonly snapshotId: bigint;
  readonly timestampMs: bigint;
}

const MAX_NAME = 60;
const ENTRY = /^([0-9a-f]{32}) (\d+) (.*)$/;

/** A base name fit for one summary line: no control characters, at most 60 characters. */
export function displayName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  const clean = name.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length <= MAX_NAME ? clean : `…${clean.slice(-(MAX_NAME - 1))}`;
}

export function formatLoadedFiles(files: readonly LoadedFile[]): string {
  return files.map((f) => `${f.hash} ${f.size} ${displayName(f.name)}`).join('\n');
}

/** The entries of one summary value; lines that are not entries are ignored. */
export function parseLoadedFiles(value: string | undefined): LoadedFile[] {
  if (value === undefined) return [];
  const out: LoadedFile[] = [];
  for (const line of value.split('\n')) {
    const m = ENTRY.exec(line);
    if (m) out.push({ hash: m[1]!, size: Number(m[2]), name: m[3]! });
  }
  return out;
}

/**
 * Every file the table's lineage records, newest first. Snapshots other engines wrote carry no
 * record and are walked through; the walk stops where expired snapshots broke the chain.
 */
export function pastLoads(metadata: TableMetadata, branch: string = MAIN_BRANCH): PastLoad[] {
  const current = branchHead(metadata, branch);
  if (!current) return [];
  const out: PastLoad[] = [];
  for (const s of snapshotAncestors(metadata, current['snapshot-id'])) {
    for (const f of parseLoadedFiles(s.summary[LOADED_FILES_KEY])) {
      out.push({ ...f, snapshotId: s['snapshot-id'], timestampMs: s['timestamp-ms'] });
    }
  }
  return out;
}

/** Asked by the load (see `LoadDeps.history`). */
export interface LoadHistory {
  /**
   * Before a source is read: which tables hold it already (their records of it are left out);
   * undefined when none may. The load writes tables in parts while it reads, so this is decided
   * before any record of the source is kept.
   */
  beforeSource?(source: string): Promise<SourceHolders | undefined>;
  /** `sources`: the inputs whose records were routed to the table, in input order. */
  planTable(id: TableIdentifier, sources: readonly string[]): Promise<TablePlan>;
}

/** The tables that hold a source already (see `LoadHistory.beforeSource`). */
export interface SourceHolders {
  /** Every table: the source repeats an earlier input of this load. */
  readonly all: boolean;
  /** Tables (`namespace.name`) whose lineage holds the source. */
  readonly tables: ReadonlySet<string>;
  /** Called when a table that holds the source is met with a record of it (the user is told). */
  skipped(id: TableIdentifier): void;
}

/** Whether `holders` says the table `id` holds the source (telling so, if it does). */
export function holds(holders: SourceHolders, id: TableIdentifier): boolean {
  if (!holders.all && !holders.tables.has(tableKey(id))) return false;
  holders.skipped(id);
  return true;
}

export interface TablePlan {
  /** Sources whose records the table must not get again. */
  readonly skip: ReadonlySet<string>;
  /** Summary keys for the table's commit (what it loads now). */
  readonly summary: Readonly<Record<string, string>>;
}

/** What the history decided, for the user. */
export type HistoryEvent =
  /** The table already holds the file (by content: also under another name). */
  | {
      readonly kind: 'already-loaded';
      readonly source: string;
      readonly table: TableIdentifier;
      readonly past: PastLoad;
    }
  /** The file repeats an earlier input of this load, byte for byte: it is loaded once. */
  | { readonly kind: 'duplicate'; readonly source: string; readonly sameAs: string }
  /** A file of the same name with other content was loaded before: this one is new and loads. */
  | {
      readonly kind: 'changed';
      readonly source: string;
      readonly table: TableIdentifier;
      readonly past: PastLoad;
    };

export interface FileLoadHistoryOptions {
  /** Load every file again, whatever the tables hold. */
  readonly force: boolean;
  readonly onEvent: (e: HistoryEvent) => void;
  /**
   * A source's size (a stat), and its fingerprint by reading it whole. `beforeSource` reads a
   * file ahead only when some table, or an earlier input, has a file of its size: a first load
   * reads each file once.
   */
  readonly sizeOf?: (source: string) => Promise<number>;
  readonly fingerprint?: (source: string) => Promise<LoadedFile>;
  /** The branch a table's load commits to: its lineage says what the table holds (default main). */
  readonly branchOf?: (id: TableIdentifier) => string;
}

/** The load history of a catalog's tables, for inputs identified by their fingerprints. */
export class FileLoadHistory implements LoadHistory {
  private readonly told = new Set<string>();
  private everywhere: Promise<Map<string, PastLoad>> | undefined;

  /** Sizes of the inputs asked about so far (`beforeSource`), by source. */
  private readonly sizes = new Map<string, number>();

  /** `files`: each input's fingerprint by source name, in input order (filled in as they are read). */
  constructor(
    private readonly catalog: Catalog,
    private readonly files: Map<string, LoadedFile>,
    private readonly options: FileLoadHistoryOptions,
  ) {}

  async beforeSource(source: string): Promise<SourceHolders | undefined> {
    const { force, sizeOf, fingerprint } = this.options;
    if (force) return undefined;
    let file = this.files.get(source);
    const earlier = [...this.sizes.keys()].filter((s) => s !== source);
    if (file === undefined) {
      if (!sizeOf || !fingerprint) return undefined;
      const size = await sizeOf(source);
      const sameSize = earlier.some((s) => this.sizes.get(s) === size);
      if (!sameSize && !(await this.pastBySize()).has(size)) {
        this.sizes.set(source, size);
        return undefined; // no table has a file of this size, nor does this load: a new file
      }
      // Possibly a file loaded before (or given twice): its bytes decide, read ahead.
      file = await fingerprint(source);
      this.files.set(source, file);
    }
    this.sizes.set(source, file.size);
    for (const e of earlier) {
      if (this.sizes.get(e) !== file.size) continue;
      let other = this.files.get(e);
      if (other === undefined && fingerprint) {
        other = await fingerprint(e);
        this.files.set(e, other);
      }
      if (other?.hash === file.hash) {
        this.tell(`dup ${source}`, { kind: 'duplicate', source, sameAs: e });
        return { all: true, tables: new Set(), skipped: () => undefined };
      }
    }
    const holders = new Map<string, PastLoad>();
    for (const h of (await this.pastBySize()).get(file.size) ?? []) {
      if (h.load.hash === file.hash && !holders.has(h.table)) holders.set(h.table, h.load);
    }
    if (holders.size === 0) return undefined;
    return {
      all: false,
      tables: new Set(holders.keys()),
      skipped: (id) => {
        const past = holders.get(tableKey(id));
        if (past)
          this.tell(`hit ${source} ${tableKey(id)}`, { kind: 'already-loaded', source, table: id, past });
      },
    };
  }

  private bySize: Promise<Map<number, { table: string; load: PastLoad }[]>> | undefined;

  /** Every table's past loads, by file size (read once per load). */
  private pastBySize(): Promise<Map<number, { table: string; load: PastLoad }[]>> {
    this.bySize ??= (async () => {
      const out = new Map<number, { table: string; load: PastLoad }[]>();
      for (const namespace of await this.catalog.listNamespaces()) {
        for (const name of await this.catalog.listTables(namespace)) {
          const id = { namespace, name };
          // A table that cannot be read tells nothing here (its own load reports the failure).
          const loads = await this.tableLoads(id).catch(() => []);
          for (const load of loads) {
            const list = out.get(load.size) ?? [];
            list.push({ table: tableKey(id), load });
            out.set(load.size, list);
          }
        }
      }
      return out;
    })();
    return this.bySize;
  }

  async planTable(id: TableIdentifier, sources: readonly string[]): Promise<TablePlan> {
    const force = this.options.force;
    const past = force ? [] : await this.tableLoads(id);
    const byHash = new Map<string, PastLoad>();
    for (const p of past) if (!byHash.has(p.hash)) byHash.set(p.hash, p);
    const firstWith = new Map<string, string>();
    for (const [source, f] of this.files) if (!firstWith.has(f.hash)) firstWith.set(f.hash, source);
    const skip = new Set<string>();
    const record = new Map<string, LoadedFile>();
    for (const source of sources) {
      const file = this.files.get(source);
      if (file === undefined) continue;
      // The first input of this load with these bytes is the one that loads.
      const first = force ? source : (firstWith.get(file.hash) ?? source);
      const hit = byHash.get(file.hash);
      if (first !== source) {
        skip.add(source);
        this.tell(`dup ${source}`, { kind: 'duplicate', source, sameAs: first });
      } else if (hit !== undefined) {
        skip.add(source);
        this.tell(`hit ${source} ${tableKey(id)}`, { kind: 'already-loaded', source, table: id, past: hit });
      } else {
        const sameName = past.find((p) => p.name === displayName(file.name));
        if (sameName !== undefined)
          this.tell(`changed ${source}`, { kind: 'changed', source, table: id, past: sameName });
        record.set(file.hash, file);
      }
    }
    const summary: Record<string, string> = {};
    if (record.size > 0) summary[LOADED_FILES_KEY] = formatLoadedFiles([...record.values()]);
    return { skip, summary };
  }

  /** Where any table of the catalog last loaded a file with this hash (read once per load). */
  async loadedAnywhere(hash: string): Promise<PastLoad | undefined> {
    this.everywhere ??= this.readEverywhere();
    return (await this.everywhere).get(hash);
  }

  private async tableLoads(id: TableIdentifier): Promise<PastLoad[]> {
    if (!(await this.catalog.tableExists(id))) return [];
    return pastLoads((await this.catalog.loadTable(id)).metadata, this.options.branchOf?.(id));
  }

  private async readEverywhere(): Promise<Map<string, PastLoad>> {
    const out = new Map<string, PastLoad>();
    for (const namespace of await this.catalog.listNamespaces()) {
      for (const name of await this.catalog.listTables(namespace)) {
        // A table that cannot be read tells nothing here (its own load reports the failure).
        const loads = await this.tableLoads({ namespace, name }).catch(() => []);
        for (const p of loads) if (!out.has(p.hash)) out.set(p.hash, p);
      }
    }
    return out;
  }

  private tell(key: string, e: HistoryEvent): void {
    if (this.told.has(key)) return;
    this.told.add(key);
    this.options.onEvent(e);
  }
}

export function tableKey(id: TableIdentifier): string {
  return `${id.namespace}.${id.name}`;
}
