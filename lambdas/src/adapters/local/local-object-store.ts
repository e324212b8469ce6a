/**
 * ObjectStore on the local filesystem. URIs are `file:///abs/path`; a root map lets other URI
 * prefixes (e.g. `http://127.0.0.1:8080/wh`) be backed by a local folder, so a table whose
 * location is an HTTP URL can be written here and served to HTTP-only readers.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { ObjectEntry, ObjectStore } from '../../ports/object-store.ts';

export interface LocalRoot {
  /** URI prefix, e.g. `http://127.0.0.1:8080/warehouse`. */
  readonly prefix: string;
  /** Folder that holds the objects under that prefix. */
  readonly dir: string;
}

/**
 * Escapes of bytes a file name cannot hold (`/`, NUL; `\` on Windows) are kept as written, not
 * decoded: a partition folder escaped as Java does (`region=eu%2Fwest`) is one folder of exactly
 * that name, as Java's Hadoop FileIO and S3 store it, not a folder `west` inside `region=eu`. Every
 * other escape is decoded, as file URLs always were here (a warehouse in `my dir` is
 * `file:///…/my%20dir`), so existing warehouses keep their files.
 */
const KEPT_ESCAPE = process.platform === 'win32' ? /%(?:2f|5c|00)/gi : /%(?:2f|00)/gi;
const KEPT_ESCAPE_ENCODED = process.platform === 'win32' ? /%25(2f|5c|00)/gi : /%25(2f|00)/gi;

/** Escapes `%` of the kept escapes, so a URL decoder leaves them as text. */
function protectKept(uri: string): string {
  return uri.replace(KEPT_ESCAPE, (m) => `%25${m.slice(1)}`);
}

/**
 * Inverse of `protectKept` on an encoded name: a literal `%2F` in a file name lists as `%2F`, the
 * form it was written as. In encoder output every `%` starts an escape, so `%252F` can only be
 * the encoding of the text `%2F`.
 */
function unprotectKept(encoded: string): string {
  return encoded.replace(KEPT_ESCAPE_ENCODED, '%$1');
}

/** Percent-decodes `text` but the kept escapes; a malformed escape is `DataInvalid`. */
function decodeKeeping(text: string, uri: string): string {
  try {
    return decodeURIComponent(protectKept(text));
  } catch (e) {
    throw new FloeError(ErrorKind.DataInvalid, `malformed percent-escape in ${uri}`, { cause: e });
  }
}

/** Local path of a `file:` URI, decoded as `decodeKeeping` does. */
function filePathOf(uri: string): string {
  try {
    return fileURLToPath(protectKept(uri));
  } catch (e) {
    throw new FloeError(ErrorKind.DataInvalid, `not a local file URI: ${uri}`, { cause: e });
  }
}

/** `file:///abs/dir` for a local folder (no trailing slash). */
export function fileUri(path: string): string {
  return pathToFileURL(path).href.replace(/\/$/, '');
}

export class LocalObjectStore implements ObjectStore {
  private readonly roots: LocalRoot[];

  constructor(roots: readonly LocalRoot[] = []) {
    this.roots = roots.map((r) => ({ prefix: r.prefix.replace(/\/$/, ''), dir: r.dir }));
  }

  /**
   * Serves URIs under `prefix` from `dir`: a table copied here from S3 (or written with relative
   * paths, as some test suites do) keeps its original file URIs and still reads and appends.
   */
  addRoot(prefix: string, dir: string): void {
    for (const p of new Set([prefix, prefix.replace(/^\.\//, '')])) {
      const clean = p.replace(/\/+$/, '');
      if (clean === '' || this.roots.some((r) => r.prefix === clean)) continue;
      this.roots.push({ prefix: clean, dir });
    }
  }

  /** Local path of a URI (or throws for URIs this store does not serve). */
  pathOf(uri: string): string {
    for (const r of this.roots) {
      if (uri === r.prefix || uri.startsWith(`${r.prefix}/`)) {
        const rest = decodeKeeping(uri.slice(r.prefix.length + 1), uri);
        if (rest.split('/').includes('..')) {
          throw new FloeError(ErrorKind.DataInvalid, `refusing path with '..' in ${uri}`);
        }
        return join(r.dir, rest);
      }
    }
    if (uri.startsWith('file:')) return filePathOf(uri);
    if (uri.startsWith('/')) return uri;
    throw new FloeError(ErrorKind.FeatureUnsupported, `local object store cannot serve ${uri}`);
  }

  private uriOf(path: string, like: string): string {
    for (const r of this.roots) {
      if (like === r.prefix || like.startsWith(`${r.prefix}/`)) {
        const rel = path.slice(r.dir.length).split('/').filter(Boolean).map(encodeURIComponent).join('/');
        return `${r.prefix}/${unprotectKept(rel)}`;
      }
    }
    return like.startsWith('file:') ? unprotectKept(pathToFileURL(path).href) : path;
  }

  async get(uri: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await fs.readFile(this.pathOf(uri)));
    } catch (e) {
      throw notFoundOr(e, uri);
    }
  }

  async put(uri: string, bytes: Uint8Array | string): Promise<void> {
    const path = this.pathOf(uri);
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeCreatingDirs(tmp, bytes);
    await fs.rename(tmp, path); // atomic on POSIX: readers see old or new, never half
  }

  async putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    const path = this.pathOf(uri);
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeCreatingDirs(tmp, bytes);
    try {
      await fs.link(tmp, path); // link(2) fails with EEXIST: an atomic create-if-absent
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }

  async exists(uri: string): Promise<boolean> {
    try {
      await fs.access(this.pathOf(uri));
      return true;
    } catch {
      return false;
    }
  }

  async delete(uri: string): Promise<void> {
    await fs.rm(this.pathOf(uri), { force: true });
  }

  async list(prefix: string): Promise<string[]> {
    return (await filesUnder(this.pathOf(prefix))).map((p) => this.uriOf(p, prefix)).sort();
  }

  async listEntries(prefix: string): Promise<ObjectEntry[]> {
    const out: ObjectEntry[] = [];
    for (const path of await filesUnder(this.pathOf(prefix))) {
      const st = await fs.stat(path, { bigint: true }).catch(() => undefined);
      // A file deleted since the walk saw it is simply not listed, as S3 would not list it.
      if (st?.isFile()) {
        // Nearest millisecond: a time set through utimes (seconds as a float) lands a hair early
        // (…122.99999 for …123), and a floor would report the millisecond before the one set.
        const lastModifiedMs = Number((st.mtimeNs + 500_000n) / 1_000_000n);
        out.push({ uri: this.uriOf(path, prefix), size: Number(st.size), lastModifiedMs });
      }
    }
    return out.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  }

  async listChildren(prefix: string): Promise<string[]> {
    try {
      const names = await fs.readdir(this.pathOf(prefix));
      return names.filter((n) => !n.endsWith('.tmp')).sort();
    } catch {
      return [];
    }
  }

  async size(uri: string): Promise<number> {
    try {
      return (await fs.stat(this.pathOf(uri))).size;
    } catch (e) {
      throw notFoundOr(e, uri);
    }
  }
}

/** Paths of every file below `dir` (recursively; in-flight `.tmp` files skipped), unsorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (!e.name.endsWith('.tmp')) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

function notFoundOr(e: unknown, uri: string): unknown {
  if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
    return new FloeError(ErrorKind.NotFound, `no object at ${uri}`, { cause: e });
  }
  return e;
}

/** Writes `path`, creating its folder only when it is missing (the common case needs no mkdir). */
async function writeCreatingDirs(path: string, bytes: Uint8Array | string): Promise<void> {
  try {
    await fs.writeFile(path, bytes);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await fs.mkdir(dirname(path), { recursive: true });
    await fs.writeFile(path, bytes);
  }
}
