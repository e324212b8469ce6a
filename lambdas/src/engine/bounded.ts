/**
 * Concurrency that never leaves work behind: when one task fails, the others are still awaited
 * before the failure is passed on, so a caller that returns (a handler, a table's commit releasing
 * its lease) has nothing of its own still in flight.
 */

/** Every promise settled; then the first rejection (in array order) is thrown, or the values returned. */
export async function settleAll<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** `fn` over `items` in order, `size` at a time, each group settled before the next starts. */
export async function inGroups<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await settleAll(items.slice(i, i + size).map(fn));
}

/**
 * Runs `fn` on every item, at most `limit` at a time, in item order of starting. After a failure
 * no further item starts; the ones running are awaited, then the first failure is thrown.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      try {
        await fn(items[next++]!);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await settleAll(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
