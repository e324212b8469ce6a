/** Commits as data: requirements, updates, the pure fold that applies them, and table creation. */
export {
  type ApplyContext,
  applyUpdates,
  PREVIOUS_VERSIONS_MAX_DEFAULT,
  PREVIOUS_VERSIONS_MAX_PROP,
  RESERVED_PROPERTIES,
  stripTrailingSlash,
} from './apply.ts';
export { DEFAULT_TABLE_PROPERTIES, type NewTableOptions, newTableMetadata } from './new-table.ts';
export { checkRequirements } from './requirements.ts';
export {
  LAST_ADDED,
  type TableRequirement,
  type TableRequirementType,
  type TableUpdate,
  type TableUpdateAction,
} from './updates.ts';
