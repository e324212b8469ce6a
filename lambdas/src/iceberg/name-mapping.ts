/**
 * Name mapping (spec Appendix C, table property `schema.name-mapping.default`): how readers find
 * field ids for data files written without them (imported or migrated files). Each entry maps one
 * or more literal names at one level of nesting to a field id; `fields` maps the names one level
 * below (struct fields, or `element` for a list, `key` / `value` for a map).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { parseJson } from './json.ts';

export interface MappedField {
  /** Absent when the names are known but have no id (such columns are not read). */
  readonly fieldId?: number;
  readonly names: readonly string[];
  readonly fields?: NameMapping;
}

export type NameMapping = readonly MappedField[];

/** Table property holding the default name mapping. */
export const NAME_MAPPING_PROPERTY = 'schema.name-mapping.default';

/** Parses a name mapping from its JSON text (or an already parsed JSON value). */
export function parseNameMapping(json: unknown): NameMapping {
  const value = typeof json === 'string' ? parseJson(json) : json;
  return mappingFrom(value, '$');
}

/** The table's default name mapping, or undefined when the property is unset. */
export function tableNameMapping(properties: Readonly<Record<string, string>>): NameMapping | undefined {
  const text = properties[NAME_MAPPING_PROPERTY];
  return text === undefined ? undefined : parseNameMapping(text);
}

/** The entry of `mapping` that lists `name`, if any. */
export function findMapped(mapping: NameMapping | undefined, name: string): MappedField | undefined {
  return mapping?.find((m) => m.names.includes(name));
}

function mappingFrom(v: unknown, where: string): NameMapping {
  if (!Array.isArray(v)) throw invalid(where, 'expected an array of mapped fields');
  return v.map((entry, i) => mappedField(entry, `${where}[${i}]`));
}

function mappedField(v: unknown, where: string): MappedField {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(where, 'expected an object');
  const o = v as Record<string, unknown>;
  const names = o.names;
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
    throw invalid(where, '"names" must be an array of strings');
  }
  const id = fieldId(o['field-id'], where);
  const nested =
    o.fields === undefined || o.fields === null ? undefined : mappingFrom(o.fields, `${where}.fields`);
  return {
    ...(id === undefined ? {} : { fieldId: id }),
    names: names as string[],
    ...(nested === undefined ? {} : { fields: nested }),
  };
}

function fieldId(v: unknown, where: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n))
    throw invalid(where, '"field-id" must be an integer');
  return n;
}

function invalid(where: string, why: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `invalid name mapping at ${where}: ${why}`, {
    context: { property: NAME_MAPPING_PROPERTY },
  });
}
