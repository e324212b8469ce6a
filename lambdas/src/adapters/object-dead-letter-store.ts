/**
 * DeadLetterStore over any ObjectStore (local disk, S3 …): one JSON object per dead letter at
 * `<base>/<reason>/<key>.json`, so operators can browse by reason and a retry overwrites the same
 * object (the key is deterministic, DESIGN §4).
 *
 * The key does not depend on the reason. Should a retry classify the same record differently (the
 * table's schema evolved in between), `put` removes the copy under the old reason, so each record
 * has at most one dead letter and a replay cannot inject it twice. `get` and `delete` look in every
 * reason folder. A put therefore costs one write, one folder listing and a (free on S3) delete per
 * other reason; dead letters are rare, so this is cheap.
 *
 * `entries` is one listing per reason folder (sizes and times come with it, nothing is read), and
 * `delete(key, reason)` one request: what a purge of many dead letters needs.
 */

import { settleAll } from '../engine/bounded.ts';
import { DeadLetterReason } from '../engine/dead-letters.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import {
  type DeadLetterEntry,
  type DeadLetterListOptions,
  type DeadLetterRecord,
  type DeadLetterStore,
  isDeadLetterKey,
} from '../ports/dead-letters.ts';
import { listEntries, type ObjectStore } from '../ports/object-store.ts';

const REASON = /^[a-z0-9][a-z0-9-]*$/;
const KNOWN_REASONS: readonly string[] = Object.values(DeadLetterReason);
const CONCURRENCY = 16;

export class ObjectStoreDeadLetterStore implements DeadLetterStore {
  private readonly base: string;

  /** `base`: a folder URI, e.g. `s3://bucket/floe/dead-letters` or `file:///tmp/wh/_dead_letters`. */
  constructor(
    private readonly store: ObjectStore,
    base: string,
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  async put(d: DeadLetterRecord): Promise<void> {
    checkKey(d.key);
    if (!REASON.test(d.reason)) {
      const context = { key: d.key, reason: d.reason };
      throw new FloeError(ErrorKind.DataInvalid, `illegal dead-letter reason '${d.reason}'`, { context });
    }
    await this.store.put(this.uriOf(d.reason, d.key), `${JSON.stringify(d)}\n`);
    const others = (await this.reasons()).filter((r) => r !== d.reason);
    await settleAll(others.map((r) => this.store.delete(this.uriOf(r, d.key))));
  }

  async list(opts: DeadLetterListOptions = {}): Promise<DeadLetterRecord[]> {
    const prefix = opts.prefix ?? '';
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return [];
    // A prefix naming a source folder (`<source>-<hash>/…`) lists only that folder.
    const slash = prefix.indexOf('/');
    const folder = slash >= 0 && isDeadLetterKey(`${prefix.slice(0, slash)}/x`) ? prefix.slice(0, slash) : '';
    const found: { key: string; reason: string }[] = [];
    const listings = await settleAll(
      (await this.reasons()).map(async (reason) => {
        const under = folder ? `${this.base}/${reason}/${folder}` : `${this.base}/${reason}`;
        return { reason, uris: await this.store.list(under) };
      }),
    );
    for (const { reason, uris } of listings) {
      for (const uri of uris) {
        const key = keyOfUri(uri);
        if (key?.startsWith(prefix)) found.push({ key, reason });
      }
    }
    found.sort((a, b) => cmp(a.key, b.key) || cmp(a.reason, b.reason));
    const chosen = found.slice(0, Math.min(found.length, limit));
    const out: (DeadLetterRecord | undefined)[] = new Array(chosen.length);
    let next = 0;
    const worker = async () => {
      while (next < chosen.length) {
        const i = next++;
        const c = chosen[i]!;
        out[i] = await this.read(c.reason, c.key);
      }
    };
    await settleAll(Array.from({ length: Math.min(CONCURRENCY, chosen.length) }, worker));
    return out.filter((r): r is DeadLetterRecord => r !== undefined);
  }

  async entries(): Promise<DeadLetterEntry[]> {
    const listings = await settleAll(
      (await this.reasons()).map(async (reason) => ({
        reason,
        objects: await listEntries(this.store, `${this.base}/${reason}`),
      })),
    );
    const out: DeadLetterEntry[] = [];
    for (const { reason, objects } of listings) {
      for (const o of objects) {
        const key = keyOfUri(o.uri);
        if (key !== undefined) out.push({ key, reason, bytes: o.size, storedAtMs: o.lastModifiedMs });
      }
    }
    return out.sort((a, b) => cmp(a.key, b.key) || cmp(a.reason, b.reason));
  }

  async get(key: string): Promise<DeadLetterRecord | undefined> {
    checkKey(key);
    const hits = await settleAll((await this.reasons()).map((r) => this.read(r, key)));
    return hits.find((h) => h !== undefined);
  }

  async delete(key: string, reason?: string): Promise<void> {
    checkKey(key);
    if (reason !== undefined) {
      if (!REASON.test(reason)) {
        throw new FloeError(ErrorKind.DataInvalid, `illegal dead-letter reason '${reason}'`, {
          context: { key, reason },
        });
      }
      await this.store.delete(this.uriOf(reason, key));
      return;
    }
    await settleAll((await this.reasons()).map((r) => this.store.delete(this.uriOf(r, key))));
  }

  private uriOf(reason: string, key: string): string {
    return `${this.base}/${reason}/${key}.json`;
  }

  /**
   * Every known reason plus any other reason folder present under the base (written by a newer
   * Floe). The known reasons are always included, not discovered: some S3-compatible servers
   * (s3rver) omit a folder that holds only folders from a delimiter listing, and this costs at most
   * a few free DELETEs or empty LISTs.
   */
  private async reasons(): Promise<string[]> {
    const present = (await this.store.listChildren(this.base)).filter((r) => REASON.test(r));
    return [...new Set([...KNOWN_REASONS, ...present])].sort();
  }

  private async read(reason: string, key: string): Promise<DeadLetterRecord | undefined> {
    const uri = this.uriOf(reason, key);
    let bytes: Uint8Array;
    try {
      bytes = await this.store.get(uri);
    } catch (e) {
      if (isFloeError(e, ErrorKind.NotFound)) return undefined;
      throw e;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new FloeError(ErrorKind.DataInvalid, `dead letter ${uri} is not valid JSON`, { cause: e });
    }
    const r = parsed as Partial<DeadLetterRecord> | null;
    if (
      r === null ||
      typeof r !== 'object' ||
      r.key !== key ||
      typeof r.source !== 'string' ||
      typeof r.line !== 'number' ||
      typeof r.reason !== 'string' ||
      typeof r.detail !== 'string' ||
      typeof r.raw !== 'string'
    ) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `dead letter ${uri} does not hold the dead letter '${key}'`,
        {
          context: { uri, key },
        },
      );
    }
    return r as DeadLetterRecord;
  }
}

function checkKey(key: string): void {
  if (!isDeadLetterKey(key)) {
    throw new FloeError(ErrorKind.DataInvalid, `not a dead-letter key: '${key}' (see deadLetterKey)`, {
      context: { key },
    });
  }
}

/** The key of `…/<reason>/<source>/<position>.json`: its last two segments (keys are URI-safe). */
function keyOfUri(uri: string): string | undefined {
  if (!uri.endsWith('.json')) return undefined;
  const parts = uri.slice(0, -'.json'.length).split('/');
  if (parts.length < 2) return undefined;
  const key = `${parts[parts.length - 2]}/${parts[parts.length - 1]}`;
  return isDeadLetterKey(key) ? key : undefined;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
