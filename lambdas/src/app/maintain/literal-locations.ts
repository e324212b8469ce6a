/**
 * `--rewrite-locations`: a local table written before `file:` names were literal (its files
 * stored under percent-decoded names, and perhaps its location recorded escaped, `my%20dir` for
 * the folder `my dir`) moved to names readers that take locations literally (Hadoop `Path`,
 * PyIceberg) find. The location is respelled as the catalog's own for the table (a
 * `set-location` commit, only when both spellings name the same place), and compaction then
 * rewrites every live data file that is stored decoded or under the old spelling, writing them,
 * and the manifests that list them, under the literal location.
 */

import type { DataFile } from '../../iceberg/manifest/types.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import type { CompactionDeps } from './compact.ts';
import { commitOptimistically } from './optimistic.ts';
import { pathKey } from './orphans.ts';

/**
 * Commits the table's location as the catalog spells it when the recorded one is another spelling
 * of the same place; returns the new location (for `dryRun`, the one it would set), else undefined.
 */
export async function respellLocation(
  deps: CompactionDeps,
  table: LoadedTable,
  dryRun: boolean,
): Promise<string | undefined> {
  const own = deps.catalog.defaultLocation(table.id).replace(/\/+$/, '');
  const recorded = table.metadata.location.replace(/\/+$/, '');
  if (recorded === own || pathKey(recorded) !== pathKey(own)) return undefined;
  if (dryRun) return own;
  await commitOptimistically(deps, table.id, async (base) =>
    base.metadata.location.replace(/\/+$/, '') === own
      ? undefined
      : { updates: [{ action: 'set-location', location: own }], written: [], result: own },
  );
  return own;
}

/**
 * Whether compaction must rewrite `file` of a table at `location` (read when asked, so it sees a
 * location just respelled): stored under a decoded name, or named with another spelling of the
 * location.
 */
export function needsLiteralName(store: ObjectStore, location: () => string): (file: DataFile) => boolean {
  return (file) => {
    const loc = location().replace(/\/+$/, '');
    const uri = file.file_path;
    if (!uri.startsWith(`${loc}/`) && pathKey(uri).startsWith(`${pathKey(loc)}/`)) return true;
    return store.storedAsDecoded?.(uri) === true;
  };
}
