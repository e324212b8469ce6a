/**
 * Where each key's newest change version is kept, for upsert tables whose changes carry one
 * (DynamoDB change records: `ApproximateCreationDateTime`). The stream may deliver a change twice
 * and out of order, so a commit drops every change older than the newest one already committed
 * (or being committed) for its key, deletes included: an old change arriving late neither
 * overwrites a newer row nor brings back a removed key (engine/upsert-write.ts).
 *
 * Only the table's committer writes it (under the table's commit lease, or a `floe load` run);
 * versions are raised before the catalog commit, so a commit that fails after that is retried
 * from the same staged changes and finds its own versions: a change whose version equals the
 * stored one is applied again (idempotent), unless the stored one is a delete and it is not.
 */
export interface KeyVersion {
  /** The change's version (DynamoDB: epoch microseconds). */
  readonly version: bigint;
  /** Whether that change removed the key. */
  readonly deleted: boolean;
}

export interface ChangeVersions {
  /**
   * The known versions of `keys` (exact key texts) of the table at `location`, as `branch` (absent:
   * main) holds them (each branch's changes are its own); absent: none known.
   */
  get(location: string, keys: readonly string[], branch?: string): Promise<Map<string, KeyVersion>>;
  /** Records these versions (each newer than, or equal to, what `get` gave) for `branch`. */
  put(location: string, versions: ReadonlyMap<string, KeyVersion>, branch?: string): Promise<void>;
}

/**
 * Whether storing `next` raises the key's stored version: a newer version, or a delete at the same
 * one (the rule every store keeps, so a put never lowers a version).
 */
export function raises(next: KeyVersion, stored: KeyVersion | undefined): boolean {
  if (stored === undefined || next.version > stored.version) return true;
  return next.version === stored.version && next.deleted && !stored.deleted;
}

/** Whether a change (`version`, a delete or not) wins over the key's stored version. */
export function supersedes(version: bigint, deleted: boolean, stored: KeyVersion | undefined): boolean {
  if (stored === undefined || version > stored.version) return true;
  if (version < stored.version) return false;
  // The same time: the stored change again (a retry, a duplicate), or a delete beating an upsert.
  return deleted || !stored.deleted;
}
