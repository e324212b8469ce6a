/**
 * Partitioning helpers over a `PartitionSpec` and its `Schema` (spec §"Partitioning",
 * §"Partition Evolution", §"Manifest Lists" field_summary, Appendix B paths).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { compareValues, toBinary } from './conversions.ts';
import type { FieldSummary } from './manifest/types.ts';
import { partitionPathOf } from './partition-path.ts';
import { isUnpartitioned, type PartitionField, type PartitionSpec } from './partition-spec.ts';
import { type IndexedField, indexById, type Schema } from './schema.ts';
import {
  applyTransform,
  canTransform,
  defaultPartitionFieldName,
  parseTransform,
  partitionValueToPath,
  type Transform,
  transformResultType,
  transformToString,
} from './transform.ts';
import { isPrimitive, type PrimitiveType, type StructType, T, typeToString } from './types.ts';
import type { IcebergValue, Row } from './values.ts';

/** One partition field resolved against the schema. */
interface ResolvedField {
  readonly field: PartitionField;
  readonly transform: Transform;
  /** Undefined only for a `void` field whose source column was dropped. */
  readonly source?: IndexedField;
  readonly resultType: PrimitiveType;
}

function fieldLabel(f: PartitionField): string {
  return `partition field '${f.name}' (id ${f['field-id']}, ${f.transform} of source ${f['source-id']})`;
}

/**
 * Rejects specs a writer must not commit: unknown transforms, missing/non-primitive sources,
 * sources inside lists or maps, transforms that do not apply to the source type, duplicate
 * field ids or names, and names that shadow another schema column (spec §"Partitioning").
 */
export function validateSpec(spec: PartitionSpec, schema: Schema): void {
  resolveSpec(spec, schema);
}

function resolveSpec(spec: PartitionSpec, schema: Schema): ResolvedField[] {
  const index = indexById(schema);
  const columnNames = new Map<string, number>();
  for (const [id, f] of index) columnNames.set(f.path.join('.'), id);
  const ids = new Set<number>();
  const names = new Set<string>();
  return spec.fields.map((field) => {
    const label = fieldLabel(field);
    if (ids.has(field['field-id']))
      throw new FloeError(ErrorKind.DataInvalid, `duplicate field id in ${label}`);
    ids.add(field['field-id']);
    if (field.name === '') throw new FloeError(ErrorKind.DataInvalid, `empty name in ${label}`);
    if (names.has(field.name)) throw new FloeError(ErrorKind.DataInvalid, `duplicate name in ${label}`);
    names.add(field.name);
    const transform = parseTransform(field.transform);
    if (transform.kind === 'unknown') {
      throw new FloeError(ErrorKind.FeatureUnsupported, `unknown transform '${field.transform}' in ${label}`);
    }
    const source = index.get(field['source-id']);
    const shadowed = columnNames.get(field.name);
    // Java: a partition name may equal a column name only for an identity partition of that column.
    if (shadowed !== undefined && !(transform.kind === 'identity' && shadowed === field['source-id'])) {
      throw new FloeError(ErrorKind.SchemaIncompatible, `${label} has the name of schema column ${shadowed}`);
    }
    // A void field may outlive its dropped source column (v1 "removed" fields).
    if (transform.kind === 'void') {
      const srcType = source && isPrimitive(source.field.type) ? source.field.type : T.int;
      return { field, transform, ...(source ? { source } : {}), resultType: srcType };
    }
    if (!source) throw new FloeError(ErrorKind.SchemaIncompatible, `source column not found for ${label}`);
    const where = `source column '${source.path.join('.')}'`;
    if (source.inCollection) {
      throw new FloeError(ErrorKind.SchemaIncompatible, `${label}: ${where} is inside a list or map`);
    }
    const type = source.field.type;
    if (!isPrimitive(type)) {
      throw new FloeError(
        ErrorKind.SchemaIncompatible,
        `${label}: ${where} is not primitive (${typeToString(type)})`,
      );
    }
    if (!canTransform(transform, type)) {
      throw new FloeError(
        ErrorKind.SchemaIncompatible,
        `${label}: transform ${transformToString(transform)} does not apply to ${where} of type ${typeToString(type)}`,
      );
    }
    return { field, transform, source, resultType: transformResultType(transform, type) };
  });
}

// Resolution is per (spec, schema) pair; cache it so per-row calls stay cheap.
const cache = new WeakMap<PartitionSpec, WeakMap<Schema, ResolvedField[]>>();

function resolved(spec: PartitionSpec, schema: Schema): ResolvedField[] {
  let bySchema = cache.get(spec);
  if (!bySchema) {
    bySchema = new WeakMap();
    cache.set(spec, bySchema);
  }
  let r = bySchema.get(schema);
  if (!r) {
    r = resolveSpec(spec, schema);
    bySchema.set(schema, r);
  }
  return r;
}

/** The partition tuple's struct type: one optional field per partition field, typed by its result type. */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  return {
    kind: 'struct',
    fields: resolved(spec, schema).map((r) => ({
      id: r.field['field-id'],
      name: r.field.name,
      required: false,
      type: r.resultType,
    })),
  };
}

function readPath(row: Row, path: readonly string[]): IcebergValue {
  let v: IcebergValue = row;
  for (const name of path) {
    if (v === null || v === undefined) return null;
    if (typeof v !== 'object' || v instanceof Uint8Array || Array.isArray(v) || v instanceof Map) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `expected a struct on the way to column '${path.join('.')}'`,
      );
    }
    v = (v as { readonly [name: string]: IcebergValue })[name];
  }
  return v ?? null;
}

/**
 * Partition values of one row, in spec field order (spec §"Partitioning"). `row` is keyed by
 * top-level column names; nested sources are reached through their struct path.
 */
export function partitionTuple(spec: PartitionSpec, schema: Schema, row: Row): IcebergValue[] {
  return resolved(spec, schema).map((r) => {
    if (r.transform.kind === 'void' || !r.source) return null;
    const source = r.source.field.type as PrimitiveType;
    try {
      return applyTransform(r.transform, source, readPath(row, r.source.path));
    } catch (e) {
      // Name the partition field so a bad row is traceable to the spec.
      if (e instanceof FloeError)
        throw new FloeError(e.kind, `${fieldLabel(r.field)}: ${e.message}`, { cause: e, context: e.context });
      throw e;
    }
  });
}

function keyPart(v: IcebergValue): string {
  if (v === null || v === undefined) return 'n';
  switch (typeof v) {
    case 'boolean':
      return v ? 'T' : 'F';
    case 'number':
      return Object.is(v, -0) ? 'd-0' : `d${v}`;
    case 'bigint':
      return `L${v}`;
    case 'string':
      return `s${JSON.stringify(v)}`;
    default:
      if (v instanceof Uint8Array)
        return `x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
      throw new FloeError(ErrorKind.DataInvalid, `partition values must be primitive, got ${typeof v}`);
  }
}

/** A stable, collision-free string for grouping rows by partition (bigints and bytes included). */
export function partitionKey(tuple: readonly IcebergValue[]): string {
  return tuple.map(keyPart).join(',');
}

export { urlEncode } from './partition-path.ts';

/**
 * Data-file directory for a partition tuple: Java's `name=value/...`, URL-encoded, overlong
 * segments shortened (see `partition-path.ts`); '' when unpartitioned.
 */
export function partitionPath(spec: PartitionSpec, schema: Schema, tuple: readonly IcebergValue[]): string {
  if (isUnpartitioned(spec)) return '';
  const fields = resolved(spec, schema);
  if (tuple.length !== fields.length) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `partition tuple has ${tuple.length} values, spec has ${fields.length} fields`,
    );
  }
  return partitionPathOf(
    fields.map((r, i) => [r.field.name, partitionValueToPath(r.transform, r.resultType, tuple[i])] as const),
  );
}

/**
 * Manifest-list `partitions` summaries (spec §"Manifest Lists", field_summary): per partition
 * field whether any value is null / NaN and the min/max (not truncated) encoded as the result type.
 */
export function fieldSummaries(
  spec: PartitionSpec,
  schema: Schema,
  tuples: readonly (readonly IcebergValue[])[],
): FieldSummary[] {
  return resolved(spec, schema).map((r, i) => {
    let containsNull = false;
    let containsNan = false;
    let lo: IcebergValue = null;
    let hi: IcebergValue = null;
    for (const t of tuples) {
      const v = t[i];
      if (v === null || v === undefined) containsNull = true;
      else if (typeof v === 'number' && Number.isNaN(v)) containsNan = true;
      else {
        if (lo === null || compareValues(r.resultType, v, lo) < 0) lo = v;
        if (hi === null || compareValues(r.resultType, v, hi) > 0) hi = v;
      }
    }
    return {
      contains_null: containsNull,
      contains_nan: containsNan,
      ...(lo === null
        ? {}
        : { lower_bound: toBinary(r.resultType, lo), upper_bound: toBinary(r.resultType, hi) }),
    };
  });
}

// ---- evolution (spec §"Partition Evolution", v2 field-id rules) ----

export interface DesiredPartitionField {
  readonly sourceId: number;
  readonly transform: string;
  readonly name?: string;
}

export interface EvolvedSpec {
  readonly spec: PartitionSpec;
  readonly lastPartitionId: number;
  /** False when `spec` is the current default spec. */
  readonly changed: boolean;
}

/** Java `PartitionSpec.compatibleWith`: same source ids, transforms and names in order (ids ignored). */
function sameFields(a: readonly PartitionField[], b: readonly PartitionField[]): boolean {
  return (
    a.length === b.length &&
    a.every((f, i) => {
      const g = b[i]!;
      return (
        f['source-id'] === g['source-id'] &&
        transformToString(parseTransform(f.transform)) === transformToString(parseTransform(g.transform)) &&
        f.name === g.name
      );
    })
  );
}

function fieldKey(sourceId: number, transform: string): string {
  return `${sourceId}:${transformToString(parseTransform(transform))}`;
}

/**
 * Produces the spec for `desired` fields (spec §"Partition Evolution"). Returns an existing spec
 * when one is equivalent (the default first); otherwise a new spec with `spec-id` = max + 1 that
 * reuses the field id of any field with the same source id and transform from any earlier spec
 * (v2) and assigns fresh ids above `lastPartitionId` to the rest. Names default to an earlier
 * equivalent field's name, else Java's default name for the source column (needs `schema`).
 */
export function evolveSpec(
  specs: readonly PartitionSpec[],
  defaultSpecId: number,
  lastPartitionId: number,
  desired: readonly DesiredPartitionField[],
  schema?: Schema,
): EvolvedSpec {
  // Candidates per (source, transform), default spec last so its (latest) name is the fallback.
  const known = new Map<string, PartitionField[]>();
  const ordered = [...specs].sort(
    (a, b) => Number(a['spec-id'] === defaultSpecId) - Number(b['spec-id'] === defaultSpecId),
  );
  for (const s of ordered) {
    for (const f of s.fields) {
      const key = fieldKey(f['source-id'], f.transform);
      known.set(key, [...(known.get(key) ?? []), f]);
    }
  }
  const index = schema ? indexById(schema) : undefined;

  const seen = new Set<string>();
  const proposed = desired.map((d) => {
    const t = parseTransform(d.transform);
    if (t.kind === 'unknown') {
      throw new FloeError(
        ErrorKind.FeatureUnsupported,
        `unknown transform '${d.transform}' for source ${d.sourceId}`,
      );
    }
    const key = fieldKey(d.sourceId, d.transform);
    if (seen.has(key)) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `redundant partition field ${transformToString(t)} of source ${d.sourceId}`,
      );
    }
    seen.add(key);
    const candidates = known.get(key) ?? [];
    // Prefer the historical field with the same name (Java), else the most recent equivalent one.
    const prior = candidates.find((f) => f.name === d.name) ?? candidates[candidates.length - 1];
    const source = index?.get(d.sourceId);
    const name =
      d.name ?? prior?.name ?? (source ? defaultPartitionFieldName(t, source.path.join('.')) : undefined);
    if (name === undefined) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `partition field ${transformToString(t)} of source ${d.sourceId} needs a name (source column not found)`,
      );
    }
    return { 'source-id': d.sourceId, name, transform: transformToString(t), prior };
  });
  const asFields = proposed.map((p) => ({
    'source-id': p['source-id'],
    'field-id': -1,
    name: p.name,
    transform: p.transform,
  }));

  const current = specs.find((s) => s['spec-id'] === defaultSpecId);
  if (current && sameFields(current.fields, asFields))
    return { spec: current, lastPartitionId, changed: false };
  const existing = specs.find((s) => sameFields(s.fields, asFields));
  if (existing) return { spec: existing, lastPartitionId, changed: true };

  let next = lastPartitionId;
  const fields: PartitionField[] = proposed.map((p) => ({
    'source-id': p['source-id'],
    'field-id': p.prior ? p.prior['field-id'] : ++next,
    name: p.name,
    transform: p.transform,
  }));
  const names = new Set<string>();
  for (const f of fields) {
    if (names.has(f.name))
      throw new FloeError(ErrorKind.ConfigInvalid, `duplicate partition field name '${f.name}'`);
    names.add(f.name);
  }
  const specId = specs.reduce((m, s) => Math.max(m, s['spec-id']), -1) + 1;
  const spec: PartitionSpec = { 'spec-id': specId, fields };
  if (schema) validateSpec(spec, schema);
  return { spec, lastPartitionId: next, changed: true };
}
