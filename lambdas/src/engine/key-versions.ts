/**
 * Change versions (ports/change-versions.ts) kept as files beside a table's data, on any object
 * store: `<table location>/floe/change-versions/b-XX.json` (a branch other than main:
 * `…/change-versions/branches/<branch>/b-XX.json`), the keys spread over 64 files by a hash
 * of their text. A commit reads and rewrites the files its keys fall in, so it costs one GET and
 * one PUT per touched file, and bytes in proportion to the keys those files hold (about 40 bytes a
 * key): cheap for `floe load` and local warehouses; a streaming committer on AWS keeps versions in
 * DynamoDB instead (adapters/aws/dynamodb-change-versions.ts), at one read and one write per key.
 *
 * `floe maintain` never takes these files for orphans (maintain/orphans.ts). One writer per table
 * (the commit lease): a put reads each file again and raises versions, never lowers them.
 */

import { ErrorKind, FloeError } from '../errors.ts';
import { murmur3Hash32 } from '../iceberg/murmur3.ts';
import { MAIN_BRANCH } from '../iceberg/snapshot.ts';
import { type ChangeVersions, type KeyVersion, raises } from '../ports/change-versions.ts';
import type { ObjectStore } from '../ports/object-store.ts';
import { forEachBounded } from './bounded.ts';

/** Below a table's location: where its change versions live. */
export const CHANGE_VERSIONS_DIR = 'floe/change-versions';
const BUCKETS = 64;
const FORMAT = 'floe-change-versions';

type Bucket = Map<string, KeyVersion>;

export class KeyVersionFiles implements ChangeVersions {
  constructor(private readonly store: ObjectStore) {}

  async get(location: string, keys: readonly string[], branch?: string): Promise<Map<string, KeyVersion>> {
    const out = new Map<string, KeyVersion>();
    const byBucket = groupByBucket(keys);
    await forEachBounded([...byBucket], 8, async ([b, ks]) => {
      const bucket = await this.read(bucketUri(location, b, branch));
      for (const k of ks) {
        const v = bucket.get(k);
        if (v) out.set(k, v);
      }
    });
    return out;
  }

  async put(location: string, versions: ReadonlyMap<string, KeyVersion>, branch?: string): Promise<void> {
    const byBucket = groupByBucket([...versions.keys()]);
    await forEachBounded([...byBucket], 8, async ([b, ks]) => {
      const uri = bucketUri(location, b, branch);
      const bucket = await this.read(uri);
      for (const k of ks) {
        const v = versions.get(k)!;
        if (raises(v, bucket.get(k))) bucket.set(k, v);
      }
      await this.store.put(uri, encode(bucket));
    });
  }

  private async read(uri: string): Promise<Bucket> {
    let bytes: Uint8Array;
    try {
      bytes = await this.store.get(uri);
    } catch (e) {
      if (!(await this.store.exists(uri))) return new Map();
      throw e;
    }
    return decode(bytes, uri);
  }
}

function bucketUri(location: string, b: number, branch: string | undefined): string {
  const dir = branch === undefined || branch === MAIN_BRANCH ? '' : `branches/${branch}/`;
  return `${location}/${CHANGE_VERSIONS_DIR}/${dir}b-${b.toString(16).padStart(2, '0')}.json`;
}

const utf8 = new TextEncoder();

function groupByBucket(keys: readonly string[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const k of keys) {
    const b = (murmur3Hash32(utf8.encode(k)) >>> 0) % BUCKETS;
    let list = out.get(b);
    if (!list) {
      list = [];
      out.set(b, list);
    }
    list.push(k);
  }
  return out;
}

function encode(bucket: Bucket): string {
  const keys: Record<string, [string, 0 | 1]> = {};
  for (const [k, v] of [...bucket].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    keys[k] = [v.version.toString(), v.deleted ? 1 : 0];
  return JSON.stringify({ format: FORMAT, version: 1, keys });
}

function decode(bytes: Uint8Array, uri: string): Bucket {
  const o = JSON.parse(new TextDecoder().decode(bytes)) as { format?: unknown; keys?: unknown };
  if (o.format !== FORMAT || typeof o.keys !== 'object' || o.keys === null)
    throw new FloeError(ErrorKind.DataInvalid, `change versions ${uri}: not a ${FORMAT} file`, {
      context: { uri },
    });
  const out: Bucket = new Map();
  for (const [k, v] of Object.entries(o.keys as Record<string, [string, number]>))
    out.set(k, { version: BigInt(v[0]), deleted: v[1] === 1 });
  return out;
}
