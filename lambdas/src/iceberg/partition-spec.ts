/**
 * Partition specs (spec: "Partitioning"). Field ids start at 1000 and are unique across specs.
 * Kept in the spec's JSON shape; transforms are parsed by `transform.ts`.
 */
import {
  asArray,
  asObject,
  invalid,
  type JsonObject,
  optInt,
  reqInt,
  reqString,
} from './metadata/json-fields.ts';
export interface PartitionField {
  readonly 'source-id': number;
  readonly 'field-id': number;
  readonly name: string;
  /** `identity`, `bucket[16]`, `truncate[4]`, `year`, `month`, `day`, `hour`, `void`. */
  readonly transform: string;
}

export interface PartitionSpec {
  readonly 'spec-id': number;
  readonly fields: readonly PartitionField[];
}

/** Partition field ids start here (Java's `PARTITION_DATA_ID_START`). */
export const PARTITION_DATA_ID_START = 1000;
/** `last-partition-id` of a table that never had a partition field. */
export const UNPARTITIONED_LAST_ASSIGNED_ID = 999;

export const UNPARTITIONED_SPEC: PartitionSpec = Object.freeze({ 'spec-id': 0, fields: Object.freeze([]) });

export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform === 'void');
}

/** Highest partition field id of a spec (999 when it has none, like Java's `lastAssignedFieldId`). */
export function lastAssignedPartitionId(spec: PartitionSpec): number {
  return spec.fields.reduce((max, f) => Math.max(max, f['field-id']), UNPARTITIONED_LAST_ASSIGNED_ID);
}

/** Same fields (source, field id, name, transform) in the same order; spec ids are ignored. */
export function specsEquivalent(a: PartitionSpec, b: PartitionSpec): boolean {
  return (
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i]!;
      return (
        f['source-id'] === g['source-id'] &&
        f['field-id'] === g['field-id'] &&
        f.name === g.name &&
        f.transform === g.transform
      );
    })
  );
}

/**
 * Parses a partition field list. v1's bare `partition-spec` array may omit field ids; Java then
 * numbers them from 1000 in order. Multi-argument v3 transforms (`source-ids`) are not modelled.
 */
export function partitionFieldsFromJson(v: unknown, what: string): PartitionField[] {
  return asArray(v, what).map((x, i) => {
    const j = asObject(x, `${what} field ${i}`);
    const w = `${what} field ${JSON.stringify(j.name)}`;
    let sourceId = optInt(j, 'source-id', w);
    if (sourceId === undefined && Array.isArray(j['source-ids'])) {
      const ids = j['source-ids'] as unknown[];
      if (ids.length !== 1)
        throw invalid(
          w,
          `multi-argument transforms (source-ids ${JSON.stringify(ids.map(String))}) are not supported`,
        );
      sourceId = reqInt({ id: ids[0] }, 'id', `${w} source-ids`);
    }
    if (sourceId === undefined) throw invalid(w, "missing required field 'source-id'");
    return {
      name: reqString(j, 'name', w),
      transform: reqString(j, 'transform', w),
      'source-id': sourceId,
      'field-id': optInt(j, 'field-id', w) ?? PARTITION_DATA_ID_START + i,
    };
  });
}

/** Parses one `partition-specs` entry (spec "Partition Specs", Appendix C). */
export function partitionSpecFromJson(v: unknown, what = 'partition spec'): PartitionSpec {
  const j = asObject(v, what);
  const specId = reqInt(j, 'spec-id', what);
  return { 'spec-id': specId, fields: partitionFieldsFromJson(j.fields, `partition spec ${specId}`) };
}

/** Java's key order: spec-id, fields[name, transform, source-id, field-id]. */
export function partitionSpecToJson(spec: PartitionSpec): JsonObject {
  return {
    'spec-id': spec['spec-id'],
    fields: spec.fields.map((f) => ({
      name: f.name,
      transform: f.transform,
      'source-id': f['source-id'],
      'field-id': f['field-id'],
    })),
  };
}
