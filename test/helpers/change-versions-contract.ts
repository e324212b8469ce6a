/**
 * The contract of a ChangeVersions store (ports/change-versions.ts), for every implementation:
 * after any sequence of puts, `get` gives each key's newest version (at the same version, a delete
 * over an upsert), read through a fresh instance; a put never lowers a version (a stale writer's
 * late put changes nothing); keys of other tables, and of other branches of the same table, are
 * apart (main is main whether named or not).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ChangeVersions, KeyVersion } from '../../lambdas/src/ports/change-versions.ts';

export async function checkChangeVersionsContract(
  make: () => ChangeVersions,
  newLocation: () => string,
  numRuns = 20,
): Promise<void> {
  const keyArb = fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n }).map((b) => `bigint:${b}`),
  );
  const putArb = fc.array(fc.tuple(keyArb, fc.bigInt({ min: 0n, max: 2n ** 62n }), fc.boolean()), {
    minLength: 1,
    maxLength: 40,
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(putArb, fc.constantFrom(undefined, 'main', 'audit', 'wap/b.1')), {
        minLength: 1,
        maxLength: 5,
      }),
      async (puts) => {
        const location = newLocation();
        const other = newLocation();
        const models = new Map<string, Map<string, KeyVersion>>();
        for (const [batch, branch] of puts) {
          const versions = new Map<string, KeyVersion>();
          for (const [k, version, deleted] of batch) versions.set(k, { version, deleted });
          // Each put as a writer that may not have seen the others' (raise-only must hold).
          await make().put(location, versions, branch);
          const model = models.get(branch ?? 'main') ?? new Map<string, KeyVersion>();
          models.set(branch ?? 'main', model);
          for (const [k, v] of versions) {
            const had = model.get(k);
            if (!had || v.version > had.version || (v.version === had.version && v.deleted)) model.set(k, v);
          }
        }
        const keys = [...new Set([...models.values()].flatMap((m) => [...m.keys()])), 'never-put'];
        for (const branch of ['main', 'audit', 'wap/b.1']) {
          const want = new Map(
            [...(models.get(branch) ?? new Map<string, KeyVersion>())].filter(([k]) => keys.includes(k)),
          );
          expect(await make().get(location, keys, branch)).toEqual(want);
        }
        expect(await make().get(location, keys)).toEqual(models.get('main') ?? new Map());
        expect(await make().get(other, keys)).toEqual(new Map());
      },
    ),
    { numRuns },
  );
}
