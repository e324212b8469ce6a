/**
 * Shared pieces of the column builders: the value-array types, null tracking and error messages.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { primitiveToString } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import type { PlanNode } from './column-plan.ts';
import type { PARENT_NULL } from './extract.ts';
import type { LeafStats } from './metrics.ts';

export type Obj = { readonly [name: string]: IcebergValue };
/** Values of one column: a value, null/undefined, or `PARENT_NULL` when the parent struct is null. */
export type Val = IcebergValue | typeof PARENT_NULL;
export type Vals = ArrayLike<Val>;

export function describe(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  if (v instanceof Map) return `Map(${v.size})`;
  if (Array.isArray(v)) return `array(${v.length})`;
  if (typeof v === 'object' && v !== null) return 'object';
  return String(v);
}

function typeName(node: PlanNode): string {
  return node.kind === 'leaf' ? primitiveToString(node.type) : node.kind;
}

export function badValue(node: PlanNode, v: unknown, i: number, why?: string): FloeError {
  return new FloeError(
    ErrorKind.DataInvalid,
    `column '${node.path}' (${typeName(node)}) cannot hold value ${describe(v)} at index ${i}${why ? `: ${why}` : ''}`,
    { context: { column: node.path, index: i } },
  );
}

/** Tracks nulls of one Arrow array; the bitmap is only allocated once a null appears. */
export class Validity {
  bits: Uint8Array | undefined;
  /** Nulls visible in Arrow (nullable fields). */
  nulls = 0;
  /**
   * Nulls hidden under a null parent in a required field: Arrow keeps them valid (zero value) so
   * non-nullable fields stay valid, but Parquet sees them as null through the parent.
   */
  hidden = 0;
  constructor(private readonly length: number) {}

  /**
   * Records a null at `i`. `parentNull` says the enclosing struct is null (fine for a required
   * field); a null in a required field whose parent is present is an error.
   */
  onNull(node: PlanNode, parentNull: boolean, i: number): void {
    if (node.required) {
      if (!parentNull) {
        throw new FloeError(ErrorKind.DataInvalid, `required column '${node.path}' is null at index ${i}`, {
          context: { column: node.path, index: i },
        });
      }
      this.hidden++;
      return;
    }
    if (this.bits === undefined) this.bits = new Uint8Array((this.length + 7) >> 3).fill(0xff);
    this.bits[i >> 3]! &= ~(1 << (i & 7));
    this.nulls++;
  }
}

export function finishLeaf(st: LeafStats, n: number, val: Validity): void {
  st.valueCount += n;
  st.nullCount += val.nulls + val.hidden;
}

export function setBounds(st: LeafStats, seen: boolean, min: IcebergValue, max: IcebergValue): void {
  if (seen && st.trackBounds) {
    st.min = min;
    st.max = max;
  }
}
