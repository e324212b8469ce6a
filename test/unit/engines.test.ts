/**
 * One supported Node range, stated once (package.json `engines`): every installed package must
 * accept all of it, so `npm ci` never warns EBADENGINE on a supported Node, and this Node must be
 * in it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isSubset, satisfies } from '../helpers/node-range.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface LockPackage {
  readonly version?: string;
  readonly engines?: { readonly node?: string } | readonly string[];
}
const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as {
  packages: Record<string, LockPackage>;
};
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string } };
const supported = pkg.engines.node;

/** `engines.node` of a lock entry (old packages list engines as an array of strings). */
function nodeRange(p: LockPackage): string | undefined {
  if (Array.isArray(p.engines)) return p.engines.find((e) => e.startsWith('node'))?.replace(/^node\s*/, '');
  return (p.engines as { node?: string } | undefined)?.node;
}

describe('Node engines', () => {
  it('the lock file states the same range as package.json', () => {
    expect(nodeRange(lock.packages['']!)).toBe(supported);
  });

  it('every package in package-lock.json accepts every supported Node version', () => {
    const conflicts = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, p]) => {
        const range = nodeRange(p);
        return range === undefined || isSubset(supported, range) ? [] : [`${path}@${p.version}: ${range}`];
      });
    expect(conflicts).toEqual([]);
  });

  it('this Node is supported', () => {
    expect(satisfies(process.versions.node, supported)).toBe(true);
  });

  it('the range check agrees with npm on the ranges it has met', () => {
    expect(isSubset('>=20', '>=22.12.0')).toBe(false); // commander 15
    expect(isSubset('>=20', '^20.19.0 || >=22.12.0')).toBe(false); // vite 8: not 20.0–20.18
    expect(isSubset('^20.19.0 || ^22.13.0 || >=24', '^20.0.0 || ^22.0.0 || >=24.0.0')).toBe(true);
    expect(isSubset('^20.19.0 || >=22', '18 || 20 || >=22')).toBe(true);
    expect(isSubset('>=20', '18 || 20 || >=22')).toBe(false); // 21
    expect(isSubset('>=20', '>= 0.6')).toBe(true);
    expect(isSubset('>=20', '>=6 <7 || >=8')).toBe(true);
    expect(isSubset('>=20', '>=0.6.x')).toBe(true);
    expect(isSubset('>=20', '*')).toBe(true);
    expect(isSubset('>=20', '^10 || ^12 || >=14')).toBe(true);
    expect(satisfies('20.19.0', '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies('22.12.5', '^20.19.0 || ^22.13.0 || >=24')).toBe(false);
    expect(satisfies('0.9.1', '^0.9')).toBe(true);
    expect(satisfies('0.10.0', '^0.9')).toBe(false);
  });
});
