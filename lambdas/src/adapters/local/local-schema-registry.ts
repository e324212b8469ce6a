/**
 * A local schema registry with the Glue Schema Registry's behaviour (facts §12.2), for the
 * embedded stack, `floe generate` and tests:
 *
 * - `register(name, definition)` returns the existing version when the schema already has an
 *   identical definition (JSON definitions compare after normalising whitespace and key order,
 *   as `GetSchemaByDefinition` does for Avro); otherwise it adds version N+1 of that schema with a
 *   fresh id from the injected {@link Ids};
 * - `getSchemaVersion(id)` rejects with `FloeError(NotFound)` for an unknown id.
 *
 * In memory by default; with `file`, every version is persisted as JSON (written atomically) so
 * several processes (`floe generate`, then `floe demo`) share it. An id not found in memory is
 * looked up again in the file before NotFound. Concurrent `register` calls are serialised within a
 * process; two processes registering at the same instant are not coordinated.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { Ids } from '../../ports/clock.ts';
import type { SchemaDataFormat, SchemaRegistry, SchemaVersion } from '../../ports/schema-registry.ts';
import { isUuid } from '../../records/gsr.ts';

export interface LocalSchemaRegistryOptions {
  /** Source of new version ids (`randomIds`, or `seededIds(n)` for reproducible output). */
  readonly ids: Ids;
  /** JSON file that persists the registry; omit for a purely in-memory registry. */
  readonly file?: string;
}

interface RegistryFile {
  readonly versions: SchemaVersion[];
}

export class LocalSchemaRegistry implements SchemaRegistry {
  private readonly ids: Ids;
  private readonly file: string | undefined;
  private readonly byId = new Map<string, SchemaVersion>();
  /** Versions of each schema, index = versionNumber - 1. */
  private readonly byName = new Map<string, SchemaVersion[]>();
  private loaded = false;
  /** Tail of the chain that serialises `register` (and file writes). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: LocalSchemaRegistryOptions) {
    this.ids = options.ids;
    this.file = options.file;
  }

  async getSchemaVersion(id: string): Promise<SchemaVersion> {
    const key = id.toLowerCase();
    await this.ensureLoaded();
    let v = this.byId.get(key);
    if (v === undefined && this.file !== undefined) {
      await this.reload(); // another process may have registered it since
      v = this.byId.get(key);
    }
    if (v === undefined) {
      throw new FloeError(ErrorKind.NotFound, `schema version ${id} not found in the local schema registry`, {
        context: { schemaVersionId: id },
      });
    }
    return v;
  }

  register(
    schemaName: string,
    definition: string,
    dataFormat: SchemaDataFormat = 'AVRO',
  ): Promise<SchemaVersion> {
    const run = this.queue.then(() => this.registerNow(schemaName, definition, dataFormat));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Every version of `schemaName`, oldest first (empty when unknown). */
  async versions(schemaName: string): Promise<SchemaVersion[]> {
    await this.ensureLoaded();
    return [...(this.byName.get(schemaName) ?? [])];
  }

  /** The newest version of `schemaName`, or undefined. */
  async latest(schemaName: string): Promise<SchemaVersion | undefined> {
    const all = await this.versions(schemaName);
    return all[all.length - 1];
  }

  private async registerNow(
    schemaName: string,
    definition: string,
    dataFormat: SchemaDataFormat,
  ): Promise<SchemaVersion> {
    if (schemaName.trim() === '') {
      throw new FloeError(ErrorKind.DataInvalid, 'schema name must not be empty');
    }
    if (this.file !== undefined) await this.reload();
    else await this.ensureLoaded();
    const norm = normaliseDefinition(definition, dataFormat);
    const existing = this.byName.get(schemaName) ?? [];
    for (const v of existing) {
      if (v.dataFormat === dataFormat && normaliseDefinition(v.definition, v.dataFormat) === norm) return v;
    }
    if (existing.length > 0 && existing[0]!.dataFormat !== dataFormat) {
      throw new FloeError(
        ErrorKind.SchemaIncompatible,
        `schema '${schemaName}' is ${existing[0]!.dataFormat}, cannot register a ${dataFormat} version`,
      );
    }
    let id = this.ids.uuid().toLowerCase();
    while (this.byId.has(id)) id = this.ids.uuid().toLowerCase();
    if (!isUuid(id)) throw new FloeError(ErrorKind.Unexpected, `id source produced a non-UUID '${id}'`);
    const v: SchemaVersion = { id, schemaName, definition, dataFormat, versionNumber: existing.length + 1 };
    this.add(v);
    await this.save();
    return v;
  }

  private add(v: SchemaVersion): void {
    this.byId.set(v.id, v);
    const list = this.byName.get(v.schemaName);
    if (list === undefined) this.byName.set(v.schemaName, [v]);
    else list.push(v);
  }

  private async ensureLoaded(): Promise<void> {
    if (!this.loaded) await this.reload();
  }

  /** Reads the file (if any) and adds versions not yet known; known ids keep their objects. */
  private async reload(): Promise<void> {
    this.loaded = true;
    if (this.file === undefined) return;
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    let parsed: RegistryFile;
    try {
      parsed = JSON.parse(text) as RegistryFile;
      if (!Array.isArray(parsed.versions)) throw new Error('no "versions" array');
    } catch (e) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `schema registry file ${this.file} is corrupt: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    const fresh = parsed.versions
      .filter((v) => !this.byId.has(v.id))
      .sort((a, b) => a.versionNumber - b.versionNumber);
    for (const v of fresh) this.add(Object.freeze({ ...v }));
  }

  private async save(): Promise<void> {
    if (this.file === undefined) return;
    const versions = [...this.byName.values()].flat();
    const body: RegistryFile = { versions };
    await fs.mkdir(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    await fs.writeFile(tmp, `${JSON.stringify(body, null, 2)}\n`);
    await fs.rename(tmp, this.file);
  }
}

/** The definition text registrations compare: canonical JSON (sorted keys) when it parses. */
function normaliseDefinition(definition: string, dataFormat: SchemaDataFormat): string {
  if (dataFormat === 'PROTOBUF') return definition.trim();
  try {
    return canonicalJson(JSON.parse(definition));
  } catch {
    return definition.trim();
  }
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
