/** Manifests and manifest lists (spec: "Manifests", "Manifest Lists"). */
export {
  DATA_FILE_FIELDS,
  dataFileType,
  FIELD_SUMMARY_FIELDS,
  type FormatVersion,
  MANIFEST_ENTRY_FIELDS,
  MANIFEST_FILE_FIELDS,
  type ManifestFieldDef,
  manifestEntryType,
  manifestFileType,
  manifestPartitionType,
  V1_DEFAULT_BLOCK_SIZE,
} from './fields.ts';
export {
  type DecodedManifest,
  decodeManifest,
  type EncodeManifestOptions,
  encodeManifest,
  type InheritFrom,
  inheritManifestEntries,
  inheritManifestEntry,
} from './manifest.ts';
export {
  assignManifestFirstRowIds,
  type DecodedManifestList,
  decodeManifestList,
  type EncodeManifestListOptions,
  encodeManifestList,
  readManifestList,
} from './manifest-list.ts';
export * from './types.ts';
