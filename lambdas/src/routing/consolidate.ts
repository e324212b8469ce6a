/**
 * Consolidated tables (DESIGN §3): a rule sends many event variants to ONE table instead of one
 * table per variant. The discriminator fields (e.g. `event_type`, `ride_type`) are always set, the
 * shared fields stay top-level, and every other field of the record goes into one optional struct
 * column per variant (e.g. `shared_ride_attributes`), so `WHERE event_type = 'COMPLETED' AND
 * ride_type = 'SHARED'` replaces a UNION over a dozen tables. A new variant is a new optional struct
 * column, added by normal schema evolution; no existing reader breaks.
 *
 * Pure: a compiled rule set maps a parsed record to its table and reshaped record, or says why it
 * cannot (a dead letter), or that no rule applies (ordinary routing then decides).
 */
import type { JsonObject, JsonValue } from '../records/json-line.ts';
import { columnNameOf } from '../schema/column-name.ts';

export interface ConsolidationRule {
  /** The consolidated table. */
  readonly table: string;
  /** The table's namespace when it is not the configured one (a per-rule namespace). */
  readonly namespace?: string;
  /**
   * Which records the rule takes: dotted field → allowed values (text), or `"*"` for any present
   * value. Every listed field must match. Default: records that have every discriminator.
   */
  readonly when?: Readonly<Record<string, readonly string[] | '*'>>;
  /** Fields that identify the variant; always set on the table's rows (top-level columns). */
  readonly discriminators: readonly string[];
  /** Fields every variant shares, kept as top-level columns. */
  readonly shared: readonly string[];
  /**
   * The variant's struct column, a template over fields (`{ride_type}_ride_attributes`); default:
   * the discriminator values joined by `_` plus `_attributes`. Lower-cased and made a legal column.
   */
  readonly variantColumn?: string;
}

export type ConsolidationResult =
  | { readonly ok: true; readonly table: string; readonly value: JsonObject; readonly variantColumn: string }
  | { readonly ok: false; readonly detail: string; readonly table: string };

export type Consolidator = (record: JsonObject) => ConsolidationResult | undefined;

interface Compiled {
  readonly rule: ConsolidationRule;
  readonly when: readonly { path: readonly string[]; values: ReadonlySet<string> | undefined }[];
  readonly discriminators: readonly { path: readonly string[]; column: string }[];
  readonly shared: ReadonlySet<string>;
  readonly template: readonly (string | { path: readonly string[] })[] | undefined;
}

/** Placeholders `{a.b}` of a column template (validated by the configuration). */
export function parseColumnTemplate(t: string): (string | { path: readonly string[] })[] {
  const parts: (string | { path: readonly string[] })[] = [];
  const re = /\{([^{}]+)\}/g;
  let last = 0;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) {
    if (m.index > last) parts.push(t.slice(last, m.index));
    parts.push({ path: m[1]!.split('.') });
    last = m.index + m[0].length;
  }
  if (last < t.length) parts.push(t.slice(last));
  return parts;
}

function valueAt(record: JsonValue, path: readonly string[]): JsonValue | undefined {
  let v: JsonValue | undefined = record;
  for (const key of path) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as JsonObject)[key];
  }
  return v;
}

/** A discriminator's text: strings, whole numbers and booleans; nothing else names a variant. */
function textOf(v: JsonValue | undefined): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  return undefined;
}

export function compileConsolidation(rules: readonly ConsolidationRule[]): Consolidator | undefined {
  if (rules.length === 0) return undefined;
  const compiled: Compiled[] = rules.map((rule) => ({
    rule,
    when: Object.entries(rule.when ?? {}).map(([path, values]) => ({
      path: path.split('.'),
      values: values === '*' ? undefined : new Set(values),
    })),
    discriminators: rule.discriminators.map((d) => ({
      path: d.split('.'),
      column: columnNameOf(d.split('.').join('_')) ?? d,
    })),
    shared: new Set(rule.shared),
    template: rule.variantColumn === undefined ? undefined : parseColumnTemplate(rule.variantColumn),
  }));
  return (record) => {
    for (const c of compiled) {
      // The routing key of a table in another namespace is `namespace.table`.
      const matches =
        c.when.length > 0
          ? c.when.every((w) => {
              const t = textOf(valueAt(record, w.path));
              return t !== undefined && (w.values === undefined || w.values.has(t));
            })
          : c.discriminators.every((d) => textOf(valueAt(record, d.path)) !== undefined);
      if (!matches) continue;
      return reshape(c, record);
    }
    return undefined;
  };
}

function reshape(c: Compiled, record: JsonObject): ConsolidationResult {
  const table = c.rule.namespace === undefined ? c.rule.table : `${c.rule.namespace}.${c.rule.table}`;
  const out: JsonObject = {};
  const values: string[] = [];
  for (const d of c.discriminators) {
    const t = textOf(valueAt(record, d.path));
    if (t === undefined) {
      return {
        ok: false,
        table,
        detail: `consolidated table '${table}': discriminator ${d.path.join('.')} is missing or not text`,
      };
    }
    values.push(t);
    out[d.column] = valueAt(record, d.path) as JsonValue;
  }
  let name: string;
  if (c.template) {
    let text = '';
    for (const part of c.template) {
      if (typeof part === 'string') text += part;
      else {
        const t = textOf(valueAt(record, part.path));
        if (t === undefined) {
          return {
            ok: false,
            table,
            detail: `consolidated table '${table}': ${part.path.join('.')} (in variantColumn) is missing or not text`,
          };
        }
        text += t;
      }
    }
    name = text;
  } else name = `${values.join('_')}_attributes`;
  const column = columnNameOf(name.toLowerCase());
  if (column === undefined) {
    return {
      ok: false,
      table,
      detail: `consolidated table '${table}': variant column ${JSON.stringify(name.slice(0, 80))} cannot be a column name`,
    };
  }
  const variant: JsonObject = {};
  const discriminatorTop = new Set(
    c.discriminators.filter((d) => d.path.length === 1).map((d) => d.path[0]!),
  );
  let any = false;
  for (const [k, v] of Object.entries(record)) {
    if (discriminatorTop.has(k)) continue;
    if (c.shared.has(k)) {
      out[k] = v;
      continue;
    }
    variant[k] = v;
    any = true;
  }
  if (any) {
    if (Object.hasOwn(out, column)) {
      return {
        ok: false,
        table,
        detail: `consolidated table '${table}': variant column '${column}' collides with a shared or discriminator field`,
      };
    }
    out[column] = variant;
  }
  return { ok: true, table, value: out, variantColumn: column };
}
