/**
 * Record → table name (DESIGN §3). The first rule that applies wins:
 *
 * 0. a DynamoDB change record (Kinesis Data Streams for DynamoDB) goes to its source table's name,
 *    lower-cased and sanitised (`Music` → `music`), unless `dynamodb` is off (`source.framings`);
 * 1. the explicit table-name field, if configured and present (`tableField`);
 * 2. the template, if configured and every placeholder has a value (`flights_{airport}`,
 *    `{source}_{payload.kind}_events`; placeholders are dotted paths into the record);
 * 3. the routing field's value plus the suffix (`event_type: "ORDER"` → `order_events`).
 *
 * A path the record lacks at its top is looked up in its `payload` object too (Kafka Connect's
 * `{schema, payload}` wrapping: `routeValueAt`).
 *
 * A missing, empty or non-text routing value goes to `defaultTable`, or is dead-lettered
 * (`no-route`) when that is null. A value present but impossible to turn into a legal name is
 * dead-lettered (`illegal-name`), never sent to a surprise table; so is a table outside the
 * allow-list (`not-allowed`).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { dynamoDbTableOf } from '../records/dynamodb-change.ts';
import { isLegalTableName, MAX_TABLE_NAME_LENGTH, sanitizeTableName } from './table-name.ts';

/** Routing settings (the `routing` section of the configuration). */
export interface RoutingConfig {
  /** Dotted path of a field holding the table name itself. */
  readonly tableField?: string;
  /** Dotted path of the field whose value names the table. Default `event_type`. */
  readonly routingField: string;
  /** Appended to the routing field's value. Default `_events`. */
  readonly suffix: string;
  /** E.g. `flights_{airport}`; placeholders are dotted paths. */
  readonly template?: string;
  /** Where records without a routing value go; null dead-letters them. Default `unknown_events`. */
  readonly defaultTable: string | null;
  /** If set, only these tables may receive records. */
  readonly allowList?: readonly string[];
  /**
   * Avro records: `schema-name` (default, as the AWS sample) routes by the writer schema's name
   * (`OrderEvent` → `orderevent`); `fields` routes them by their fields like JSON records.
   */
  readonly avroRouteBy?: 'schema-name' | 'fields';
}

/** Defaults matching the AWS sample. */
export const DEFAULT_ROUTING: RoutingConfig = Object.freeze({
  routingField: 'event_type',
  suffix: '_events',
  defaultTable: 'unknown_events',
});

/** Which rule chose the table. */
export type RouteRule =
  | 'table-field'
  | 'template'
  | 'routing-field'
  | 'default'
  | 'schema-name'
  | 'consolidated'
  | 'dynamodb';

/** The table for a record, or why there is none. */
export type RouteResult =
  | { readonly ok: true; readonly table: string; readonly rule: RouteRule }
  | {
      readonly ok: false;
      readonly reason: 'no-route' | 'illegal-name' | 'not-allowed';
      readonly detail: string;
    };

/**
 * A template whose literal text holds a dot names a namespace too: `analytics.{source}_events` →
 * namespace `analytics`, `{tenant}.orders` → one namespace per tenant. Split at the first such dot.
 */
export function splitNamespace(parts: readonly TemplatePart[]): {
  namespace?: TemplatePart[];
  table: TemplatePart[];
} {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (typeof p !== 'string' || !p.includes('.')) continue;
    const dot = p.indexOf('.');
    const before = [...parts.slice(0, i), ...(dot > 0 ? [p.slice(0, dot)] : [])];
    const after = [...(dot < p.length - 1 ? [p.slice(dot + 1)] : []), ...parts.slice(i + 1)];
    return { namespace: before, table: after };
  }
  return { table: [...parts] };
}

/** A template split into literal text and placeholder paths. */
export type TemplatePart = string | { readonly path: readonly string[] };

/**
 * Parses a routing template. Throws `FloeError(ConfigInvalid)` on unbalanced braces, empty
 * placeholders or a template without any placeholder.
 */
export function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  const re = /\{([^{}]*)\}/g;
  let last = 0;
  for (let m = re.exec(template); m !== null; m = re.exec(template)) {
    if (m.index > last) parts.push(template.slice(last, m.index));
    const path = m[1]!.trim().split('.');
    if (path.some((p) => p.trim() === '')) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `routing.template '${template}' has an empty placeholder '${m[0]}'`,
      );
    }
    parts.push({ path: path.map((p) => p.trim()) });
    last = re.lastIndex;
  }
  if (last < template.length) parts.push(template.slice(last));
  for (const p of parts) {
    if (typeof p === 'string' && /[{}]/.test(p)) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `routing.template '${template}' has an unbalanced '{' or '}'`,
      );
    }
  }
  if (!parts.some((p) => typeof p !== 'string')) {
    throw new FloeError(ErrorKind.ConfigInvalid, `routing.template '${template}' has no {placeholder}`);
  }
  return parts;
}

/** The value at a dotted path, reading own properties only (never `constructor` & co). */
function valueAt(record: unknown, path: readonly string[]): unknown {
  let v: unknown = record;
  for (const key of path) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/**
 * The value a routing path names: at the record's top, or, when it is not there, inside the
 * record's `payload` object. Kafka Connect's JSON converter (Debezium Server's default) wraps the
 * event as `{schema, payload}`, so `source.table` routes a wrapped change event as it does a bare
 * one (`payload.source.table` works too). A path found at the top always wins.
 */
function routeValueAt(record: unknown, path: readonly string[]): unknown {
  const v = valueAt(record, path);
  if (v !== undefined || path[0] === ENVELOPE_PAYLOAD) return v;
  const payload = valueAt(record, [ENVELOPE_PAYLOAD]);
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  return valueAt(payload, path);
}

/** The key of a wrapped envelope's event (`{schema, payload}`). */
export const ENVELOPE_PAYLOAD = 'payload';

/** Placeholder values may be text or whole numbers (`flights_{year}`); anything else: no value. */
function templateText(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  return undefined;
}

function shown(v: string): string {
  return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
}

/** `template '…': field {payload.kind} is missing` (or empty, or not text): the placeholder and the template. */
function placeholderGap(template: string, path: readonly string[], v: unknown): string {
  const what =
    v === undefined
      ? 'is missing'
      : typeof v === 'string'
        ? 'is empty'
        : `is not text or a whole number (${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v})`;
  return `template '${template}': field {${path.join('.')}} ${what}`;
}

/** A router compiled from a configuration (paths split and the template parsed once). */
export type Router = (record: object) => RouteResult;

export interface RouterOptions {
  /** Route DynamoDB change records by their table name (default true). */
  readonly dynamodb?: boolean;
}

/** Compiles `cfg` into a {@link Router}. Throws `FloeError(ConfigInvalid)` on a bad template. */
export function compileRouter(cfg: RoutingConfig, options: RouterOptions = {}): Router {
  const dynamodb = options.dynamodb !== false;
  const tablePath = cfg.tableField?.split('.');
  const routingPath = cfg.routingField.split('.');
  const template = cfg.template === undefined ? undefined : splitNamespace(parseTemplate(cfg.template));
  const suffix = cfg.suffix;
  const maxBase = MAX_TABLE_NAME_LENGTH - suffix.length;

  const finish = finisher(cfg);

  return (record) => {
    const source = dynamodb ? dynamoDbTableOf(record) : undefined;
    if (source !== undefined) {
      const name = sanitizeTableName(source);
      if (name === undefined) {
        return {
          ok: false,
          reason: 'illegal-name',
          detail:
            source === ''
              ? 'a DynamoDB change record without a tableName (or a table in its eventSourceARN)'
              : `DynamoDB tableName ${shown(source)} cannot be a table name`,
        };
      }
      return finish(name, 'dynamodb');
    }
    if (tablePath !== undefined) {
      const v = routeValueAt(record, tablePath);
      if (typeof v === 'string' && v.trim() !== '') {
        const name = sanitizeTableName(v);
        if (name === undefined) {
          return {
            ok: false,
            reason: 'illegal-name',
            detail: `${cfg.tableField} value ${shown(v)} cannot be a table name`,
          };
        }
        return finish(name, 'table-field');
      }
    }
    // Why the template gave no name (for the dead letter when nothing else routes the record).
    let templateGap: string | undefined;
    if (template !== undefined) {
      const render = (parts: readonly TemplatePart[]): string | undefined => {
        let text = '';
        for (const part of parts) {
          if (typeof part === 'string') text += part;
          else {
            const v = routeValueAt(record, part.path);
            const t = templateText(v);
            if (t === undefined) {
              templateGap ??= placeholderGap(cfg.template!, part.path, v);
              return undefined;
            }
            text += t;
          }
        }
        return text;
      };
      const text = render(template.table);
      const nsText = template.namespace === undefined ? undefined : render(template.namespace);
      if (text !== undefined && (template.namespace === undefined || nsText !== undefined)) {
        const name = sanitizeTableName(text);
        if (name === undefined) {
          return {
            ok: false,
            reason: 'illegal-name',
            detail: `template gives ${shown(text)}, which cannot be a table name`,
          };
        }
        if (nsText === undefined) return finish(name, 'template');
        const ns = sanitizeTableName(nsText, 252);
        if (ns === undefined || ns.startsWith('aws')) {
          return {
            ok: false,
            reason: 'illegal-name',
            detail: `template gives namespace ${shown(nsText)}, which cannot be a namespace`,
          };
        }
        // A routing key `namespace.table`: table names never contain a dot.
        const routed = finish(name, 'template');
        return routed.ok ? { ...routed, table: `${ns}.${name}` } : routed;
      }
    }
    const v = routeValueAt(record, routingPath);
    if (typeof v === 'string' && v.trim() !== '') {
      const base = sanitizeTableName(v, maxBase);
      if (base === undefined) {
        return {
          ok: false,
          reason: 'illegal-name',
          detail: `${cfg.routingField} value ${shown(v)} cannot be a table name`,
        };
      }
      return finish(base + suffix, 'routing-field');
    }
    if (cfg.defaultTable === null) {
      const what = v === undefined ? 'missing' : `not text (${v === null ? 'null' : typeof v})`;
      return {
        ok: false,
        reason: 'no-route',
        detail:
          templateGap === undefined
            ? `routing field ${cfg.routingField} is ${what} and there is no default table`
            : `${templateGap} (routing field ${cfg.routingField}, the fallback, is ${what}) and there is no default table`,
      };
    }
    return finish(cfg.defaultTable, 'default');
  };
}

function finisher(cfg: RoutingConfig): (table: string, rule: RouteRule) => RouteResult {
  const allow = cfg.allowList === undefined ? undefined : new Set(cfg.allowList);
  return (table, rule) => {
    if (!isLegalTableName(table)) {
      return { ok: false, reason: 'illegal-name', detail: `table name '${table}' is not legal` };
    }
    if (allow !== undefined && rule !== 'default' && !allow.has(table)) {
      return { ok: false, reason: 'not-allowed', detail: `table '${table}' is not in routing.allowList` };
    }
    return { ok: true, table, rule };
  };
}

/**
 * Routes Avro records by their writer schema's name (short name, without namespace): lower-cased,
 * `-` and `.` → `_`, sanitised like every table name (`OrderEvent` → `orderevent`).
 */
export function compileSchemaNameRouter(cfg: RoutingConfig): (schemaName: string) => RouteResult {
  const finish = finisher(cfg);
  const cache = new Map<string, RouteResult>();
  return (schemaName) => {
    let r = cache.get(schemaName);
    if (r === undefined) {
      const short = schemaName.slice(schemaName.lastIndexOf('.') + 1);
      const name = sanitizeTableName(short.replace(/-/g, '_'));
      r =
        name === undefined
          ? {
              ok: false,
              reason: 'illegal-name',
              detail: `schema name ${shown(schemaName)} cannot be a table name`,
            }
          : finish(name, 'schema-name');
      cache.set(schemaName, r);
    }
    return r;
  };
}

const routers = new WeakMap<RoutingConfig, Router>();

/** Routes one record with `cfg` (the compiled router is cached per configuration object). */
export function routeRecord(record: object, cfg: RoutingConfig): RouteResult {
  let r = routers.get(cfg);
  if (r === undefined) {
    r = compileRouter(cfg);
    routers.set(cfg, r);
  }
  return r(record);
}
