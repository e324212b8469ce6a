/**
 * ObjectStore on the local filesystem. URIs are `file:///abs/path`; a root map lets other URI
 * prefixes (e.g. `http://127.0.0.1:8080/wh`) be backed by a local folder, so a table whose
 * location is an HTTP URL can be written here and served to HTTP-only readers.
 *
 * A `file:` URI names its file literally: the path part exactly as written, `%` and all, as Java's
 * Hadoop `Path` and PyIceberg read it (a partition folder `region=x%3Dy` is a folder of that
 * name; a warehouse in `my dir` is `file:///…/my dir`). Warehouses written before that were
 * stored percent-decoded (`my%20dir` in the location, `my dir` on disk; `region=x=y` on disk):
 * a name with escapes whose literal spelling does not exist is looked up decoded, so they keep
 * reading, and `floe maintain --rewrite-locations` moves their tables to literal names.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { ObjectEntry, ObjectStore } from '../../ports/object-store.ts';

export interface LocalRoot {
  /** URI prefix, e.g. `http://127.0.0.1:8080/warehouse`. */
  readonly prefix: string;
  /** Folder that holds the objects under that prefix. */
  readonly dir: string;
}

/**
 * The decoded spelling (URIs under a root, and the earlier spelling of `file:` URIs): escapes of
 * bytes a file name cannot hold (`/`, NUL; `\` on Windows) are kept as written, not decoded, so a
 * partition folder escaped as Java does (`region=eu%2Fwest`) is one folder of exactly that name,
 * not a folder `west` inside `region=eu`. Every other escape is decoded.
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

/**
 * The literal local path of a `file:` URI (`file:/p`, `file:///p`, `file://localhost/p`): its
 * path part exactly as written.
 */
export function literalFilePath(uri: string): string {
  const m = /^file:(?:\/\/(?:localhost)?(?=\/))?(\/.*)$/is.exec(uri);
  if (!m) throw new FloeError(ErrorKind.DataInvalid, `not a local file URI: ${uri}`);
  const path = m[1]!;
  if (path.startsWith('//')) throw new FloeError(ErrorKind.DataInvalid, `not a local file URI: ${uri}`);
  if (process.platform === 'win32') return /^\/[A-Za-z]:/.test(path) ? path.slice(1) : path;
  return path;
}

/** The earlier, decoded local path of a `file:` URI (RFC 8089 but the kept escapes). */
function decodedFilePath(uri: string): string {
  try {
    return fileURLToPath(protectKept(uri));
  } catch (e) {
    throw new FloeError(ErrorKind.DataInvalid, `not a local file URI: ${uri}`, { cause: e });
  }
}

/** `file:///abs/dir` for a local folder (no trailing slash), naming it literally. */
export function fileUri(path: string): string {
  const slashed = process.platform === 'win32' ? `/${path.replace(/\\/g, '/')}` : path;
  return `file://${slashed}`.replace(/\/+$/, '');
}

export class LocalObjectStore implements ObjectStore {
  private readonly roots: LocalRoot[];
  /** Folders this store created or found (a write into one needs no mkdir, nor a failed open first). */
  private readonly folders = new Set<string>();

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

  /**
   * Local path of a URI (or throws for URIs this store does not serve): where its object is, or
   * would be written.
   */
  pathOf(uri: string): string {
    return this.resolve(uri, false);
  }

  private write(path: string, bytes: Uint8Array | string): Promise<void> {
    return writeCreatingDirs(path, bytes, this.folders);
  }

  /** Only a `file:` URI outside the roots has two spellings: for every other, both paths are one. */
  storedAsDecoded(uri: string): boolean {
    return this.resolve(uri, false) !== this.resolve(uri, true);
  }

  /** `read`: an existing object's path, `write`: where a put stores it (a `file:` URI: literally). */
  private resolve(uri: string, write: boolean): string {
    for (const r of this.roots) {
      if (uri === r.prefix || uri.startsWith(`${r.prefix}/`)) {
        const rest = decodeKeeping(uri.slice(r.prefix.length + 1), uri);
        if (rest.split('/').includes('..')) {
          throw new FloeError(ErrorKind.DataInvalid, `refusing path with '..' in ${uri}`);
        }
        return join(r.dir, rest);
      }
    }
    if (uri.startsWith('file:')) {
      // Read: the literal name, else (written before names were literal) the decoded one if that
      // exists. Written: always the literal name.
      const literal = literalFilePath(uri);
      if (write || !uri.includes('%') || existsSync(literal)) return literal;
      let decoded: string;
      try {
        decoded = decodedFilePath(uri);
      } catch {
        return literal; // not an escape at all (`100%`): the literal name is the only one
      }
      return decoded !== literal && existsSync(decoded) ? decoded : literal;
    }
    if (uri.startsWith('/')) return uri;
    throw new FloeError(ErrorKind.FeatureUnsupported, `local object store cannot serve ${uri}`);
  }

  /** The URI of `path`, found below `base` = `pathOf(like)` (a `file:` one: spelled as `like`, then literally). */
  private uriOf(path: string, like: string, base: string): string {
    for (const r of this.roots) {
      if (like === r.prefix || like.startsWith(`${r.prefix}/`)) {
        const rel = path.slice(r.dir.length).split('/').filter(Boolean).map(encodeURIComponent).join('/');
        return `${r.prefix}/${unprotectKept(rel)}`;
      }
    }
    if (!like.startsWith('file:')) return path;
    const rel = relative(base, path).split(sep).filter(Boolean).join('/');
    const head = like.replace(/\/+$/, '');
    return rel === '' ? head : `${head}/${rel}`;
  }

  async get(uri: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await fs.readFile(this.pathOf(uri)));
    } catch (e) {
      throw notFoundOr(e, uri);
    }
  }

  async put(uri: string, bytes: Uint8Array | string): Promise<void> {
    const path = this.resolve(uri, true);
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await this.write(tmp, bytes);
    await fs.rename(tmp, path); // atomic on POSIX: readers see old or new, never half
  }

  async putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    if (this.storedAsDecoded(uri)) return false; // present in the earlier spelling
    const path = this.resolve(uri, true);
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await this.write(tmp, bytes);
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
    const base = this.pathOf(prefix);
    return (await filesUnder(base)).map((p) => this.uriOf(p, prefix, base)).sort();
  }

  async listEntries(prefix: string): Promise<ObjectEntry[]> {
    const out: ObjectEntry[] = [];
    const base = this.pathOf(prefix);
    for (const path of await filesUnder(base)) {
      const st = await fs.stat(path, { bigint: true }).catch(() => undefined);
      // A file deleted since the walk saw it is simply not listed, as S3 would not list it.
      if (st?.isFile()) {
        // Nearest millisecond: a time set through utimes (seconds as a float) lands a hair early
        // (…122.99999 for …123), and a floor would report the millisecond before the one set.
        const lastModifiedMs = Number((st.mtimeNs + 500_000n) / 1_000_000n);
        out.push({ uri: this.uriOf(path, prefix, base), size: Number(st.size), lastModifiedMs });
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

/**
 * Writes `path`. Its folder is made once per store (a table's many files share few folders); one
 * removed behind the store's back since is made again.
 */
async function writeCreatingDirs(
  path: string,
  bytes: Uint8Array | string,
  folders: Set<string>,
): Promise<void> {
  const folder = dirname(path);
  if (!folders.has(folder)) {
    await fs.mkdir(folder, { recursive: true });
    folders.add(folder);
  }
  try {
    await fs.writeFile(path, bytes);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await fs.mkdir(folder, { recursive: true });
    await fs.writeFile(path, bytes);
  }
}
