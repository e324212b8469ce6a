/**
 * The summary a maintenance snapshot starts from. Floe's audit copy of the commit watermark travels
 * on (the table property is the source of truth; the copy lets `floe snapshots` show it).
 */
import { currentSnapshot, type TableMetadata } from '../../iceberg/table-metadata.ts';

const CARRIED = new Set(['floe.watermark']);

export function carriedSummary(meta: TableMetadata): Record<string, string> {
  const parent = currentSnapshot(meta)?.summary ?? {};
  const out: Record<string, string> = { 'engine-name': 'floe' };
  for (const [k, v] of Object.entries(parent)) if (CARRIED.has(k) && typeof v === 'string') out[k] = v;
  return out;
}
