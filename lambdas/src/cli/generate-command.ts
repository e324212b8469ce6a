/**
 * `floe generate`: the public sample's events (ORDER, USER, CLICK; v1 or v2; ~10 % duplicate
 * deliveries, ~5 % late) written to a Kinesis stream, local (kinesalite, `--endpoint`) or real
 * (the SDK's default credentials and region), as JSON or as GSR-framed Avro with the writer schemas
 * registered (local registry file, or a Glue Schema Registry). `--record-to` keeps an NDJSON copy of
 * every event sent, in the order sent. `--cdc` sends Debezium change events of a `customers` table
 * instead (sample/sample-changes.ts), keyed by the customer id so each key's changes stay in order.
 */
import { promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  createKinesisClient,
  type KinesisClient,
  type ProducerRecord,
  putRecords,
} from '../adapters/aws/kinesis-producer.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { avroDatumType } from '../avro/datum.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import type { SchemaRegistry, SchemaVersion } from '../ports/schema-registry.ts';
import { encodeGsrFrame } from '../records/gsr.ts';
import { sampleAvroDatum } from '../sample/sample-avro.ts';
import { type ChangeEvent, changeKey, customerChanges } from '../sample/sample-changes.ts';
import { sampleEvents, toNdjsonLine } from '../sample/sample-events.ts';

export interface GenerateOptions {
  readonly stream?: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly events?: string;
  readonly version?: string;
  readonly format?: string;
  readonly warehouse?: string;
  readonly registryFile?: string;
  readonly registryName?: string;
  readonly rate?: string;
  readonly seed?: string;
  readonly recordTo?: string;
  /** Debezium change events of a `customers` table instead of the sample's events (JSON only). */
  readonly cdc?: boolean;
}

export interface GenerateResult {
  readonly sent: number;
  readonly byType: Readonly<Record<string, number>>;
}

function positiveInt(name: string, v: string | undefined, dflt: number, allowZero = false): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `--${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${v}`,
    );
  }
  return n;
}

async function registryFor(
  opts: GenerateOptions,
): Promise<SchemaRegistry & Required<Pick<SchemaRegistry, 'register'>>> {
  if (opts.registryName !== undefined) {
    const { GlueSchemaRegistry, createGlueClient } = await import('../adapters/aws/glue-schema-registry.ts');
    const r = new GlueSchemaRegistry({
      glue: createGlueClient(opts.region === undefined ? {} : { region: opts.region }),
      registryName: opts.registryName,
    });
    return r as SchemaRegistry & Required<Pick<SchemaRegistry, 'register'>>;
  }
  const file =
    opts.registryFile ??
    (opts.warehouse !== undefined ? join(resolve(opts.warehouse), '_floe', 'registry.json') : undefined);
  if (file === undefined) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      '--format avro needs a schema registry: --registry-name NAME (Glue), or --registry-file FILE / -w DIR (local)',
    );
  }
  const { LocalSchemaRegistry } = await import('../adapters/local/local-schema-registry.ts');
  return new LocalSchemaRegistry({ ids: randomIds, file: resolve(file) });
}

export async function generateCommand(
  opts: GenerateOptions,
  out: (s: string) => void,
  client: KinesisClient = createKinesisClient({
    ...(opts.endpoint === undefined ? {} : { endpoint: opts.endpoint }),
    ...(opts.region === undefined ? {} : { region: opts.region }),
  }),
  /** Register schemas here instead of the registry the options name (the demo's own stack). */
  givenRegistry?: SchemaRegistry & Required<Pick<SchemaRegistry, 'register'>>,
): Promise<GenerateResult> {
  const n = positiveInt('events', opts.events, 1000);
  const rate = positiveInt('rate', opts.rate, 0, true);
  const seed = positiveInt('seed', opts.seed, 42, true);
  const version = opts.version ?? 'v1';
  if (version !== 'v1' && version !== 'v2')
    throw new FloeError(ErrorKind.ConfigInvalid, `--version must be v1 or v2, got ${version}`);
  const format = opts.format ?? 'json';
  if (format !== 'json' && format !== 'avro')
    throw new FloeError(ErrorKind.ConfigInvalid, `--format must be json or avro, got ${format}`);
  if (opts.cdc && format !== 'json')
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      '--cdc sends JSON change events; --format avro does not apply',
    );
  const stream = opts.stream ?? 'floe-events';
  const registry = format === 'avro' ? (givenRegistry ?? (await registryFor(opts))) : undefined;
  const versions = new Map<string, { version: SchemaVersion; type: ReturnType<typeof avroDatumType> }>();

  const nowMs = systemClock.nowMs();
  const events = opts.cdc ? customerChanges({ seed, nowMs }) : sampleEvents({ seed, nowMs, version });
  const byType: Record<string, number> = {};
  const recorded: string[] = [];
  const chunk = rate > 0 ? Math.max(1, Math.min(500, rate)) : 500;
  let sent = 0;
  const started = Date.now();
  out(
    `sending ${n} ${opts.cdc ? 'customer change' : `${version} ${format}`} events to stream ${stream}${opts.endpoint ? ` at ${opts.endpoint}` : ''}`,
  );
  while (sent < n) {
    const batch: ProducerRecord[] = [];
    for (let i = 0; i < chunk && sent + batch.length < n; i++) {
      const ev = events.next().value as Record<string, unknown>;
      const line = opts.cdc ? JSON.stringify(ev) : toNdjsonLine(ev);
      recorded.push(line);
      const type = String(opts.cdc ? ev.op : ev.event_type);
      byType[type] = (byType[type] ?? 0) + 1;
      let data: Uint8Array;
      if (registry) {
        const a = sampleAvroDatum(JSON.parse(line) as Record<string, unknown>, version);
        const key = `${a.schemaName}/${version}`;
        let v = versions.get(key);
        if (!v) {
          const registered = await registry.register(a.schemaName, JSON.stringify(a.schema), 'AVRO');
          v = { version: registered, type: avroDatumType(a.schema) };
          versions.set(key, v);
          out(`  schema ${a.schemaName} version ${registered.versionNumber} (${registered.id})`);
        }
        data = encodeGsrFrame(v.version.id, v.type.encode(a.datum));
      } else data = new TextEncoder().encode(line);
      const partitionKey = opts.cdc ? changeKey(ev as ChangeEvent) : String(ev.event_id);
      batch.push({ data, partitionKey });
    }
    await putRecords(client, stream, batch);
    sent += batch.length;
    if (sent % 5000 < batch.length || sent === n) out(`  ${sent}/${n} sent`);
    if (rate > 0) {
      const due = started + (sent / rate) * 1000;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
  if (opts.recordTo !== undefined) await fs.appendFile(resolve(opts.recordTo), `${recorded.join('\n')}\n`);
  out(
    `sent ${sent} events: ${Object.entries(byType)
      .map(([t, c]) => `${t} ${c}`)
      .join(', ')}`,
  );
  return { sent, byType };
}
