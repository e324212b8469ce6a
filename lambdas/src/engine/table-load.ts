/**
 * One table of a `floe load` run, written in parts and committed once.
 *
 * A table whose records fit in memory until the end of the run is staged and committed in one
 * go (`loadTableColumnar`, else `loadTable`): when the table moves under the load (another
 * writer evolved it), that part is simply staged again for the new table.
 *
 * A table the memory budget flushes earlier (`flushPart`) has each part evolved against the
 * table as the run has shaped it so far (schema and spec changes accumulate, as metadata-only
 * updates) and written as data files at once, as Iceberg's own writers roll files; the columns are
 * then released. `finish` writes the last part and commits every file in one snapshot. A column's
 * type is decided by the part that first writes it: a later record that does not fit it is judged
 * against the table as it then is (a type conflict), exactly as in a later load. Such a table
 * cannot be staged again, so when its schema or spec changed under the load the commit fails for
 * this table alone, naming the cause; the files it wrote were never committed and are deleted
 * (what a crash leaves behind is removed by `floe maintain`'s orphan cleanup).
 */
import { inferOptionsFor, partitionCandidatesFor, typeConflictFor, upsertFor } from '../config.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { applyUpdates, type TableUpdate } from '../iceberg/metadata/index.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { tableIdToString } from '../ports/catalog.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import type { JsonValue } from '../records/json-line.ts';
import { StructInferrer } from '../schema/infer.ts';
import { commitAppend, createWithAppend, type PreparedAppend } from './append.ts';
import type { ColumnarPart } from './columnar-part.ts';
import { decideColumnar, loadTableColumnar, mergeBySeq, reparse, writeParts } from './columnar-stage.ts';
import type { DeadLetter } from './dead-letters.ts';
import { coercionSummary, loadTable, screen, stage } from './generic-stage.ts';
import type { LoadDeps, PendingRecord, TableLoadResult } from './load-types.ts';
import {
  createTableAs,
  type Evolved,
  evolve,
  newTableFor,
  stagingKey,
  UseGenericPath,
} from './table-staging.ts';

export class TableLoad {
  /** The table as this run has shaped it (after the parts written so far); undefined before the first. */
  private state: LoadedTable | undefined;
  /** The table as it was before the run (undefined: it did not exist). */
  private original: LoadedTable | undefined;
  private readonly uuid: string;
  private readonly updates: TableUpdate[] = [];
  private readonly files = new Map<number, DataFile[]>();
  private readonly staged: string[] = [];
  private readonly changes: string[] = [];
  private specChanged = false;
  private deadLetters = 0;
  private readonly coerced = new Map<string, number>();
  private genericParts = 0;
  /** Records taken on the fast path that were then written through the generic one. */
  private reparsed = 0;
  /** Why writing a part failed (the table then fails: `finish` throws it). */
  private failure: unknown;
  /** Records not written because an earlier part failed. */
  private lost = 0;
  /** Parts written so far. */
  parts = 0;
  /** Rows in the parts written so far. */
  rows = 0;

  /**
   * `reshape`: the field lists' projection of a record (`RecordRules.project`), for the fast
   * path's records read back as generic ones.
   */
  constructor(
    private readonly deps: LoadDeps,
    readonly id: TableIdentifier,
    private readonly reject: (d: DeadLetter) => Promise<void>,
    private readonly reshape?: (value: Record<string, JsonValue>) => Record<string, JsonValue>,
  ) {
    this.uuid = deps.ids.uuid();
  }

  /** Whether the table's records may be written in parts (an upsert table's may not: see below). */
  get flushable(): boolean {
    // An upsert table writes the last change of each key once per commit: all of them together.
    return upsertFor(this.deps.config, `${this.id.namespace}.${this.id.name}`) === undefined;
  }

  /**
   * Writes one part: the fast path's columns when they fit as they are (the table evolving as
   * they need), else every record through the generic path. Nothing is committed yet.
   */
  async flushPart(parts: readonly ColumnarPart[], generic: readonly PendingRecord[]): Promise<void> {
    if (!this.flushable)
      throw new FloeError(ErrorKind.Unexpected, `table ${this.name}: an upsert table is written in one part`);
    const records = rowsOf(parts) + generic.length;
    if (this.failure !== undefined) {
      this.lost += records;
      return;
    }
    try {
      await this.writePart(parts, generic);
    } catch (e) {
      // The table fails (reported by `finish`); its later records are counted, not written.
      this.failure = e;
      this.lost += records;
    }
  }

  /** Records of this table not written (after a failure): a failed table reports them. */
  get lostRecords(): number {
    return this.lost;
  }

  private async writePart(parts: readonly ColumnarPart[], generic: readonly PendingRecord[]): Promise<void> {
    if (rowsOf(parts) + generic.length === 0) return; // nothing held: no part
    if (this.parts === 0) {
      const exists = await this.deps.catalog.tableExists(this.id);
      this.original = exists ? await this.deps.catalog.loadTable(this.id) : undefined;
      this.state = this.original;
    }
    const held = parts.filter((p) => p.rowCount > 0);
    if (held.length === 0 || generic.length > 0 || !(await this.flushColumnar(held))) {
      const records = mergeBySeq([...generic], held.length > 0 ? await this.reparse(held) : []);
      if (records.length > 0) await this.flushGeneric(records);
      this.genericParts++;
    }
    this.parts++;
  }

  /**
   * The last part and the commit. A table never flushed before is staged and committed in one go
   * (and staged again if the table moves meanwhile); else the last part is written and every part
   * committed together. `summary` is added to the snapshot summary (the load history's record).
   */
  async finish(
    parts: readonly ColumnarPart[],
    generic: readonly PendingRecord[],
    summary: Readonly<Record<string, string>> | undefined,
  ): Promise<TableLoadResult> {
    const deps = summary ? { ...this.deps, summary: { ...this.deps.summary, ...summary } } : this.deps;
    const held = parts.filter((p) => p.rowCount > 0);
    if (this.parts === 0 && this.failure === undefined) {
      const whole = held.length > 0 && generic.length === 0;
      const done =
        (whole ? await loadTableColumnar(deps, this.id, held) : undefined) ??
        (await loadTable(
          deps,
          this.id,
          mergeBySeq([...generic], held.length > 0 ? await this.reparse(held) : []),
          this.reject,
        ));
      return { ...done, reparsed: this.reparsed };
    }
    if (held.length > 0 || generic.length > 0) await this.flushPart(held, generic);
    if (this.failure !== undefined) {
      await deleteQuietly(deps.store, this.staged.splice(0));
      throw this.failure;
    }
    return this.commit(deps);
  }

  /** The parts' records as parsed ones, for the generic path (counted: `reparsed`). */
  private async reparse(held: readonly ColumnarPart[]): Promise<PendingRecord[]> {
    this.reparsed += rowsOf(held);
    return reparse(held, this.reshape);
  }

  private get name(): string {
    return tableIdToString(this.id);
  }

  private async flushColumnar(parts: readonly ColumnarPart[]): Promise<boolean> {
    const candidates = partitionCandidatesFor(this.deps.config, this.id.name);
    const decided = await decideColumnar(this.deps, this.id, parts, this.state);
    if (!decided) return false;
    const base = this.state ?? newTableFor(this.deps, this.id, decided.batchType, candidates, this.uuid);
    const ev = evolve(base, decided.batchType, candidates, decided.fit);
    const before = this.staged.length;
    let dataFiles: DataFile[];
    try {
      dataFiles = await writeParts(this.deps, base.metadata, ev.schema, ev.spec, parts, this.staged);
    } catch (e) {
      if (!(e instanceof UseGenericPath)) throw e;
      await deleteQuietly(this.deps.store, this.staged.splice(before));
      return false;
    }
    this.absorb(base, { ...ev, specId: ev.spec['spec-id'] }, dataFiles);
    return true;
  }

  private async flushGeneric(records: PendingRecord[]): Promise<void> {
    const cfg = this.deps.config;
    const name = this.id.name;
    const options = inferOptionsFor(cfg, name);
    const candidates = partitionCandidatesFor(cfg, name);
    const inferrer = () => new StructInferrer(options);
    const screened = await screen(
      this.deps,
      this.id,
      records,
      inferrer(),
      inferrer,
      { base: this.state },
      { coerce: typeConflictFor(cfg, name) === 'coerce', maxColumns: cfg.limits.maxColumnsPerTable },
    );
    for (const [what, n] of screened.coerced) this.coerced.set(what, (this.coerced.get(what) ?? 0) + n);
    for (const d of screened.rejected) await this.refuse(d);
    if (screened.accepted.length === 0) return;
    const fresh = (t: Parameters<typeof newTableFor>[2]) =>
      newTableFor(this.deps, this.id, t, candidates, this.uuid);
    const out = this.state
      ? await stage(
          this.deps,
          this.state,
          screened.batchType,
          candidates,
          screened.accepted,
          this.staged,
          screened.fit,
        )
      : await stage(
          this.deps,
          fresh(screened.batchType),
          screened.batchType,
          candidates,
          screened.accepted,
          this.staged,
          screened.fit,
          fresh,
        );
    for (const d of out.rejected) await this.refuse(d);
    if (out.prepared.dataFiles.length === 0) return;
    this.absorb(
      out.base,
      {
        updates: [...out.prepared.updates],
        changes: [...out.changes],
        specChanged: out.specChanged,
        specId: out.prepared.specId,
      },
      out.prepared.dataFiles,
    );
  }

  /** Takes a written part into the run's view of the table. */
  private absorb(
    base: LoadedTable,
    ev: Pick<Evolved, 'updates' | 'changes' | 'specChanged'> & { readonly specId: number },
    dataFiles: readonly DataFile[],
  ): void {
    const metadata =
      ev.updates.length === 0
        ? base.metadata
        : applyUpdates(base.metadata, ev.updates, { nowMs: this.deps.clock.nowMs() });
    this.state = { ...base, metadata };
    this.updates.push(...ev.updates);
    for (const c of ev.changes) if (!this.changes.includes(c)) this.changes.push(c);
    this.specChanged ||= ev.specChanged;
    const specId = ev.specId;
    const list = this.files.get(specId) ?? [];
    list.push(...dataFiles);
    this.files.set(specId, list);
    for (const f of dataFiles) this.rows += Number(f.record_count);
  }

  private async refuse(d: DeadLetter): Promise<void> {
    this.deadLetters++;
    await this.reject(d);
  }

  /** Commits every part written: creates the table first when it is new. */
  private async commit(deps: LoadDeps): Promise<TableLoadResult> {
    const state = this.state;
    const allFiles = [...this.files.values()].flat();
    const result = (over: Partial<TableLoadResult>): TableLoadResult => ({
      table: this.id.name,
      created: false,
      rows: 0,
      files: 0,
      bytes: 0,
      deadLetters: this.deadLetters,
      schemaChanges: this.changes,
      specChanged: this.specChanged,
      attempts: 0,
      path: this.genericParts > 0 ? 'generic' : 'columnar',
      reparsed: this.reparsed,
      ...over,
    });
    if (state === undefined || allFiles.length === 0) return result({});
    const specId = state.metadata['default-spec-id'];
    const coerced = coercionSummary(this.coerced);
    const prepared: PreparedAppend = {
      updates: this.original ? this.updates : [],
      dataFiles: this.files.get(specId) ?? [],
      specId,
      otherSpecFiles: new Map([...this.files].filter(([id]) => id !== specId)),
      ...(coerced ? { summary: { 'floe.coerced': coerced } } : {}),
    };
    const done = (committed: { attempts: number; snapshot?: { 'snapshot-id': bigint } }, created: boolean) =>
      result({
        created,
        rows: this.rows,
        files: allFiles.length,
        bytes: allFiles.reduce((n, f) => n + Number(f.file_size_in_bytes), 0),
        attempts: committed.attempts,
        ...(committed.snapshot ? { snapshotId: committed.snapshot['snapshot-id'] } : {}),
      });
    // A new table is created with every part as its first snapshot, where the catalog can.
    let created = false;
    if (this.original === undefined) {
      const direct = await createWithAppend(deps, this.id, state.metadata, prepared, deps.summary);
      if (direct !== 'unsupported' && direct !== 'exists') return done(direct, true);
      created = direct === 'unsupported' && (await createTableAs(deps, this.id, state.metadata));
    }
    // What the files were written for: the table before the run (its updates then apply), or the
    // table this run created (which holds them already).
    const expected = this.original ?? state;
    let committed: Awaited<ReturnType<typeof commitAppend>>;
    try {
      committed = await commitAppend(deps, {
        table: this.id,
        ...(deps.summary ? { summary: deps.summary } : {}),
        prepare: async (base) => {
          if (stagingKey(base.metadata) !== stagingKey(expected.metadata)) {
            throw new TableMoved(
              `table ${this.name} changed its schema or partition spec while this load wrote ${this.parts} parts of it; nothing was committed to it: run the load again`,
            );
          }
          return prepared;
        },
      });
    } catch (e) {
      // Nothing references the files of a load that never swapped the table's metadata.
      if (e instanceof TableMoved) await deleteQuietly(deps.store, this.staged.splice(0));
      throw e;
    }
    return done(committed, created);
  }
}

function rowsOf(parts: readonly ColumnarPart[]): number {
  return parts.reduce((n, p) => n + p.rowCount, 0);
}

/** The table's schema or spec changed under a load that wrote it in parts. */
class TableMoved extends FloeError {
  constructor(message: string) {
    super(ErrorKind.CommitConflict, message, { retryable: true });
  }
}
