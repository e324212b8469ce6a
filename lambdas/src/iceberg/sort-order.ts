/** Sort orders (spec: "Sorting"). Order id 0 is reserved for the unsorted order. */
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
