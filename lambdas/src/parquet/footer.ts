/**
 * Parquet footer post-processing. The Arrow writer gets a few Iceberg requirements wrong or cannot
 * express them, so we decode the footer (`FileMetaData`), patch the schema, re-encode it and read
 * the per-column sizes and row-group offsets the manifest needs. Data pages and page indexes sit
 * before the footer and keep their absolute offsets, so only the tail of the file changes.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { compareBytes } from '../iceberg/conversions.ts';
import {
  asBigInt,
  decodeStruct,
  encodeStruct,
  getField,
  removeField,
  setField,
  structList,
  type TList,
  type TStruct,
  TType,
  type TValue,
} from './thrift-compact.ts';

// Thrift field ids from parquet.thrift.
const FMD_SCHEMA = 2;
const FMD_ROW_GROUPS = 4;
const FMD_KV = 5;
const SE_NAME = 4;
const SE_NUM_CHILDREN = 5;
const SE_CONVERTED_TYPE = 6;
const SE_FIELD_ID = 9;
const SE_LOGICAL_TYPE = 10;
const LT_MAP = 2;
const LT_UUID = 14;
const CT_MAP = 1;
const RG_COLUMNS = 1;
const CC_META = 3;
const CMD_PATH = 3;
const CMD_TOTAL_COMPRESSED = 7;
const CMD_DATA_PAGE_OFFSET = 9;
const CMD_DICT_PAGE_OFFSET = 11;
const CMD_STATISTICS = 12;
const ST_MAX = 1;
const ST_MIN = 2;
const ST_MAX_VALUE = 5;
const ST_MIN_VALUE = 6;
const KV_KEY = 1;
const KV_VALUE = 2;

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1"
const utf8 = new TextEncoder();

/** Schema fixes applied to the footer, by Iceberg field id. */
export interface FooterPatch {
  /** Leaves that must carry the UUID logical type (Arrow has no way to say so). */
  readonly uuidIds: ReadonlySet<number>;
  /**
   * Leaves whose legacy ConvertedType must go: `TIMESTAMP_MICROS`/`TIME_MICROS` imply UTC
   * adjustment, which is wrong for Iceberg `timestamp` and `time`.
   */
  readonly dropConvertedTypeIds: ReadonlySet<number>;
  /** Key/value metadata to set (replacing same-named keys). */
  readonly keyValues?: ReadonlyMap<string, string>;
  /** Keys to remove (e.g. the writer's embedded `ARROW:schema`). */
  readonly dropKeys?: readonly string[];
  /** Name for the root schema element (Java Iceberg uses `table`). */
  readonly rootName?: string;
}

/** What the manifest needs from the footer. */
export interface FooterMetrics {
  /** Sum of `total_compressed_size` over row groups, per leaf field id. */
  readonly columnSizes: Map<number, bigint>;
  /** Start offset of every row group, ascending. */
  readonly splitOffsets: bigint[];
  /**
   * Byte-wise min / max of each leaf's column-chunk statistics over all row groups, as the
   * writer recorded them (for BYTE_ARRAY leaves: UTF-8 or raw bytes; possibly truncated by the
   * writer, which keeps them valid lower / upper bounds). Absent when a chunk has no statistics.
   */
  readonly byteStats: Map<number, { min: Uint8Array; max: Uint8Array }>;
}

function invalid(msg: string): FloeError {
  return new FloeError(ErrorKind.Unexpected, `Parquet footer: ${msg}`);
}

function footerBounds(file: Uint8Array): { start: number; end: number } {
  const n = file.length;
  if (n < 12) throw invalid(`file too short (${n} bytes)`);
  for (let i = 0; i < 4; i++) {
    if (file[i] !== MAGIC[i] || file[n - 4 + i] !== MAGIC[i]) throw invalid('missing PAR1 magic');
  }
  const len = new DataView(file.buffer, file.byteOffset + n - 8, 4).getUint32(0, true);
  const start = n - 8 - len;
  if (start < 4) throw invalid(`footer length ${len} exceeds file size`);
  return { start, end: n - 8 };
}

interface LeafInfo {
  readonly id: number | undefined;
  readonly path: Uint8Array[];
}

/** Leaf columns in schema (= column chunk) order, with their field ids and paths. */
function leafColumns(schema: TStruct[]): LeafInfo[] {
  const out: LeafInfo[] = [];
  let i = 0;
  const walk = (parent: Uint8Array[]): void => {
    const el = schema[i++];
    if (!el) throw invalid('schema ends early');
    const path = [...parent, getField(el, SE_NAME) as Uint8Array];
    const children = getField(el, SE_NUM_CHILDREN) as number | undefined;
    if (children === undefined || children === 0) {
      out.push({ id: getField(el, SE_FIELD_ID) as number | undefined, path });
      return;
    }
    for (let c = 0; c < children; c++) walk(path);
  };
  const root = schema[i++];
  if (!root) throw invalid('empty schema');
  const rootChildren = (getField(root, SE_NUM_CHILDREN) as number | undefined) ?? 0;
  for (let c = 0; c < rootChildren; c++) walk([]);
  return out;
}

function isMapGroup(el: TStruct): boolean {
  const lt = getField(el, SE_LOGICAL_TYPE) as TStruct | undefined;
  return (
    getField(el, SE_CONVERTED_TYPE) === CT_MAP || (lt !== undefined && getField(lt, LT_MAP) !== undefined)
  );
}

function patchSchema(schema: TStruct[], patch: FooterPatch): void {
  const root = schema[0];
  if (root && patch.rootName !== undefined)
    setField(root, SE_NAME, TType.BINARY, utf8.encode(patch.rootName));
  schema.forEach((el, idx) => {
    // The Arrow writer names a map's repeated group `entries`; the Parquet spec says `key_value`.
    const next = schema[idx + 1];
    if (next && isMapGroup(el)) setField(next, SE_NAME, TType.BINARY, utf8.encode('key_value'));
  });
  for (const el of schema) {
    const id = getField(el, SE_FIELD_ID) as number | undefined;
    if (id === undefined) continue;
    if (patch.uuidIds.has(id)) {
      const uuid: TStruct = {
        kind: 'struct',
        fields: [{ id: LT_UUID, type: TType.STRUCT, value: { kind: 'struct', fields: [] } }],
      };
      setField(el, SE_LOGICAL_TYPE, TType.STRUCT, uuid);
      removeField(el, SE_CONVERTED_TYPE);
    }
    if (patch.dropConvertedTypeIds.has(id)) removeField(el, SE_CONVERTED_TYPE);
  }
}

function patchKeyValues(fmd: TStruct, patch: FooterPatch): void {
  if (!patch.keyValues && !patch.dropKeys) return;
  const decoder = new TextDecoder();
  const drop = new Set([...(patch.dropKeys ?? []), ...(patch.keyValues?.keys() ?? [])]);
  const kept = structList(getField(fmd, FMD_KV)).filter((kv) => {
    const key = getField(kv, KV_KEY);
    return !(key instanceof Uint8Array && drop.has(decoder.decode(key)));
  });
  for (const [k, v] of patch.keyValues ?? []) {
    kept.push({
      kind: 'struct',
      fields: [
        { id: KV_KEY, type: TType.BINARY, value: utf8.encode(k) },
        { id: KV_VALUE, type: TType.BINARY, value: utf8.encode(v) },
      ],
    });
  }
  if (kept.length === 0) removeField(fmd, FMD_KV);
  else
    setField(fmd, FMD_KV, TType.LIST, {
      kind: 'list',
      wireType: TType.LIST,
      elemType: TType.STRUCT,
      items: kept,
    });
}

/** Rewrites every column chunk's `path_in_schema` to match the (renamed) schema. */
function patchPaths(fmd: TStruct, leaves: LeafInfo[]): void {
  for (const rg of structList(getField(fmd, FMD_ROW_GROUPS))) {
    structList(getField(rg, RG_COLUMNS)).forEach((cc, idx) => {
      const meta = getField(cc, CC_META) as TStruct | undefined;
      const leaf = leaves[idx];
      if (!meta || !leaf) return;
      const path: TList = { kind: 'list', wireType: TType.LIST, elemType: TType.BINARY, items: leaf.path };
      setField(meta, CMD_PATH, TType.LIST, path);
    });
  }
}

function footerMetrics(fmd: TStruct, leaves: LeafInfo[]): FooterMetrics {
  const columnSizes = new Map<number, bigint>();
  const splitOffsets: bigint[] = [];
  const byteStats = new Map<number, { min: Uint8Array; max: Uint8Array }>();
  const noStats = new Set<number>();
  for (const rg of structList(getField(fmd, FMD_ROW_GROUPS))) {
    const columns = structList(getField(rg, RG_COLUMNS));
    columns.forEach((cc, idx) => {
      const meta = getField(cc, CC_META) as TStruct | undefined;
      const id = leaves[idx]?.id;
      if (!meta || id === undefined) return;
      const size = asBigInt(getField(meta, CMD_TOTAL_COMPRESSED)) ?? 0n;
      columnSizes.set(id, (columnSizes.get(id) ?? 0n) + size);
      const st = getField(meta, CMD_STATISTICS) as TStruct | undefined;
      const min = st && (getField(st, ST_MIN_VALUE) ?? getField(st, ST_MIN));
      const max = st && (getField(st, ST_MAX_VALUE) ?? getField(st, ST_MAX));
      if (!(min instanceof Uint8Array) || !(max instanceof Uint8Array)) {
        // An all-null chunk has no min/max; it does not widen the bounds of the others.
        if (!st) noStats.add(id);
        return;
      }
      const cur = byteStats.get(id);
      if (!cur) byteStats.set(id, { min, max });
      else {
        if (compareBytes(min, cur.min) < 0) cur.min = min;
        if (compareBytes(max, cur.max) > 0) cur.max = max;
      }
    });
    // Same rule as parquet-mr's BlockMetaData.getStartingPos: the first column's dictionary page
    // if it precedes the first data page, else the first data page.
    const first = columns[0] && (getField(columns[0], CC_META) as TStruct | undefined);
    if (first) {
      const data = asBigInt(getField(first, CMD_DATA_PAGE_OFFSET) as TValue) ?? 0n;
      const dict = asBigInt(getField(first, CMD_DICT_PAGE_OFFSET));
      splitOffsets.push(dict !== undefined && dict > 0n && dict < data ? dict : data);
    }
  }
  splitOffsets.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const id of noStats) byteStats.delete(id);
  return { columnSizes, splitOffsets, byteStats };
}

/**
 * Applies `patch` to the footer of the Parquet file `file` and returns the rewritten file together
 * with the footer-derived metrics. The input is not modified.
 */
export function patchFooter(
  file: Uint8Array,
  patch: FooterPatch,
): { bytes: Uint8Array; metrics: FooterMetrics } {
  const { start, end } = footerBounds(file);
  const fmd = decodeStruct(file.subarray(start, end));
  const schema = structList(getField(fmd, FMD_SCHEMA));
  patchSchema(schema, patch);
  patchKeyValues(fmd, patch);
  const leaves = leafColumns(schema);
  patchPaths(fmd, leaves);
  const metrics = footerMetrics(fmd, leaves);
  const footer = encodeStruct(fmd);
  const out = new Uint8Array(start + footer.length + 8);
  out.set(file.subarray(0, start), 0);
  out.set(footer, start);
  new DataView(out.buffer, out.byteOffset).setUint32(start + footer.length, footer.length, true);
  out.set(MAGIC, start + footer.length + 4);
  return { bytes: out, metrics };
}

/** Decodes the footer of a Parquet file (for inspection and tests). */
export function readFooter(file: Uint8Array): TStruct {
  const { start, end } = footerBounds(file);
  return decodeStruct(file.subarray(start, end));
}
