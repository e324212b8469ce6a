/**
 * Legacy INT96 timestamps (Impala, old Spark). The Arrow reader turns them into nanosecond
 * timestamps, indistinguishable from a real TIMESTAMP(NANOS) column, so the footer tells which
 * leaves were INT96: only those may be narrowed to microseconds (a NANOS column may not).
 */

import { readFooter } from './footer.ts';
import { getField, structList } from './thrift-compact.ts';

// parquet.thrift: FileMetaData.schema, SchemaElement.type / num_children, Type.INT96.
const FMD_SCHEMA = 2;
const SE_TYPE = 1;
const SE_NUM_CHILDREN = 5;
const TYPE_INT96 = 3;

/** Depth-first ordinals of the file's primitive columns stored as INT96. */
export function int96LeafOrdinals(file: Uint8Array): Set<number> {
  const elements = structList(getField(readFooter(file), FMD_SCHEMA));
  const out = new Set<number>();
  let leaf = 0;
  // elements[0] is the root; a leaf is an element without children.
  for (const el of elements.slice(1)) {
    const children = getField(el, SE_NUM_CHILDREN);
    if (typeof children === 'number' && children > 0) continue;
    if (getField(el, SE_TYPE) === TYPE_INT96) out.add(leaf);
    leaf++;
  }
  return out;
}
