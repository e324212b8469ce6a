/**
 * `floe load` (DESIGN §2): NDJSON sources → one append commit per table. The steps:
 *
 * 1. start the run: compile routing, rules and the fast path (engine/load-run.ts);
 * 2. read each source — after asking the load history which tables hold it already — line by
 *    line into its tables, writing the largest tables as parts whenever the run holds more than
 *    its memory budget;
 * 3. finish every table: its last part, then one commit (several tables at a time);
 * 4. report rows, dead letters and failed tables.
 *
 * A run that stops half-way commits nothing for the tables it had not finished: the parts it
 * wrote for them are files no snapshot references, which `floe maintain` removes as orphans.
 */
import { tableId } from '../config.ts';
import { LoadRun } from '../engine/load-run.ts';
import type { LoadDeps, LoadReport, LoadSource } from '../engine/load-types.ts';

export type {
  LoadDeps,
  LoadProgress,
  LoadReport,
  LoadSource,
  TableFailure,
  TableLoadResult,
} from '../engine/load-types.ts';

export async function loadSources(deps: LoadDeps, sources: readonly LoadSource[]): Promise<LoadReport> {
  const run = await LoadRun.start(deps, sources);
  try {
    for (let i = 0; i < sources.length; i++) {
      await skipWhatTablesHold(deps, run, sources[i]!, i);
      await readSource(deps, run, sources[i]!, i);
    }
    const done = await run.finish(async (table, fedBy) => {
      const plan = await deps.history?.planTable(tableId(deps.config, table), fedBy);
      return plan?.summary;
    });
    return run.report(done);
  } finally {
    await run.close();
  }
}

/** The tables that already hold the source (load history): its records skip them. */
async function skipWhatTablesHold(
  deps: LoadDeps,
  run: LoadRun,
  src: LoadSource,
  index: number,
): Promise<void> {
  const holders = await deps.history?.beforeSource?.(src.name);
  if (holders) run.skipFor(index, holders);
}

/** Every line of the source into its table, relieving memory between chunks. */
async function readSource(deps: LoadDeps, run: LoadRun, src: LoadSource, index: number): Promise<void> {
  let n = 0;
  const progress = () => {
    if (n % 50_000 === 0) deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
  };
  if (src.chunks && run.threads > 0) {
    await run.readChunks(src.chunks, index, (lines) => {
      n = lines;
      deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
    });
    return;
  }
  if (src.chunks) {
    let offset = 0;
    for await (const chunk of src.chunks) {
      const len = chunk.length;
      let pos = 0;
      while (pos < len) {
        let nl = chunk.indexOf(10, pos);
        if (nl < 0) nl = len;
        const end = nl > pos && chunk[nl - 1] === 13 ? nl - 1 : nl;
        n++;
        progress();
        const slow = run.takeBytes(chunk, pos, end, index, n, offset + pos);
        if (slow) await slow;
        pos = nl + 1;
      }
      offset += len;
      await run.relieve();
    }
  } else {
    for await (const batch of batchesOf(src.lines ?? [])) {
      for (const raw of batch) {
        n++;
        progress();
        await run.takeText(raw, index, n);
      }
      await run.relieve();
    }
  }
  deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
}

async function* batchesOf(lines: NonNullable<LoadSource['lines']>): AsyncGenerator<readonly string[]> {
  if (Symbol.iterator in lines) {
    const all = Array.isArray(lines) ? (lines as readonly string[]) : [...(lines as Iterable<string>)];
    for (let i = 0; i < all.length; i += 65_536) yield all.slice(i, i + 65_536);
    return;
  }
  for await (const item of lines) yield typeof item === 'string' ? [item] : item;
}
