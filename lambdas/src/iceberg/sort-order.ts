/** Sort orders (spec: "Sorting"). Order id 0 is reserved for the unsorted order. */
import { asArray, asObject, invalid, type JsonObject, reqInt, reqString } from './metadata/json-fields.ts';

export interface SortField {
  readonly transform: string;
  readonly 'source-id': number;
  readonly direction: 'asc' | 'desc';
  readonly 'null-order': 'nulls-first' | 'nulls-last';
}

export interface SortOrder {
  readonly 'order-id': number;
  readonly fields: readonly SortField[];
}

export const UNSORTED_ORDER: SortOrder = Object.freeze({ 'order-id': 0, fields: Object.freeze([]) });

/** Java's `INITIAL_SORT_ORDER_ID`: the first real (non-empty) order gets id 1. */
export const INITIAL_SORT_ORDER_ID = 1;

/** Same fields in the same order; order ids are ignored (Java `SortOrder.sameOrder`). */
export function sameOrder(a: SortOrder, b: SortOrder): boolean {
  return (
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i]!;
      return (
        f.transform === g.transform &&
        f['source-id'] === g['source-id'] &&
        f.direction === g.direction &&
        f['null-order'] === g['null-order']
      );
    })
  );
}

/** Parses one `sort-orders` entry (spec "Sort Orders", Appendix C). */
export function sortOrderFromJson(v: unknown, what = 'sort order'): SortOrder {
  const j = asObject(v, what);
  const orderId = reqInt(j, 'order-id', what);
  const w = `sort order ${orderId}`;
  const fields = asArray(j.fields, `${w} fields`).map((x, i): SortField => {
    const f = asObject(x, `${w} field ${i}`);
    const direction = reqString(f, 'direction', w).toLowerCase();
    const nullOrder = reqString(f, 'null-order', w).toLowerCase();
    if (direction !== 'asc' && direction !== 'desc')
      throw invalid(w, `invalid direction ${JSON.stringify(direction)}`);
    if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') {
      throw invalid(w, `invalid null-order ${JSON.stringify(nullOrder)}`);
    }
    return {
      transform: reqString(f, 'transform', w),
      'source-id': reqInt(f, 'source-id', w),
      direction,
      'null-order': nullOrder,
    };
  });
  return { 'order-id': orderId, fields };
}

/** Java's key order: order-id, fields[transform, source-id, direction, null-order]. */
export function sortOrderToJson(o: SortOrder): JsonObject {
  return {
    'order-id': o['order-id'],
    fields: o.fields.map((f) => ({
      transform: f.transform,
      'source-id': f['source-id'],
      direction: f.direction,
      'null-order': f['null-order'],
    })),
  };
}
