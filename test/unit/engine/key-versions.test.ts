/**
 * Change versions kept beside a table (engine/key-versions.ts) and the rule that decides whether a
 * change wins over a key's stored one (ports/change-versions.ts), checked by the contract every
 * store must keep (test/helpers/change-versions-contract.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { CHANGE_VERSIONS_DIR, KeyVersionFiles } from '../../../lambdas/src/engine/key-versions.ts';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { type KeyVersion, supersedes } from '../../../lambdas/src/ports/change-versions.ts';
import { checkChangeVersionsContract } from '../../helpers/change-versions-contract.ts';
import { tempDir } from '../../helpers/e2e.ts';

const tmp = tempDir('floe-key-versions-');
afterAll(() => tmp.cleanup());
const store = new LocalObjectStore();
let n = 0;

describe('supersedes', () => {
  it('a newer change wins; an older loses; at the same time a delete wins and the same change re-applies', () => {
    const up = (v: bigint): KeyVersion => ({ version: v, deleted: false });
    const del = (v: bigint): KeyVersion => ({ version: v, deleted: true });
    expect(supersedes(5n, false, undefined)).toBe(true);
    expect(supersedes(6n, false, del(5n))).toBe(true);
    expect(supersedes(4n, true, up(5n))).toBe(false);
    expect(supersedes(5n, false, up(5n))).toBe(true); // a retry of the same commit
    expect(supersedes(5n, true, up(5n))).toBe(true);
    expect(supersedes(5n, true, del(5n))).toBe(true);
    expect(supersedes(5n, false, del(5n))).toBe(false); // never revives a removed key
  });
});

describe('KeyVersionFiles', () => {
  it('keeps the newest version of every key across puts (the ChangeVersions contract)', async () => {
    await checkChangeVersionsContract(
      () => new KeyVersionFiles(store),
      () => fileUri(`${tmp.dir}/t${++n}`),
      30,
    );
  });

  it('an unknown table has no versions; a damaged file is an error naming it', async () => {
    const location = fileUri(`${tmp.dir}/damaged`);
    const files = new KeyVersionFiles(store);
    expect(await files.get(location, ['a'])).toEqual(new Map());
    await files.put(location, new Map([['a', { version: 1n, deleted: false }]]));
    const written = await store.list(`${location}/${CHANGE_VERSIONS_DIR}/`);
    expect(written).toHaveLength(1);
    await store.put(written[0]!, '{"not":"versions"}');
    const e = await files.get(location, ['a']).catch((x: unknown) => x);
    expect(isFloeError(e, ErrorKind.DataInvalid)).toBe(true);
    expect(String((e as Error).message)).toContain(written[0]!);
  });
});
