/** Record → table routing (DESIGN §3). */
export {
  compileRouter,
  DEFAULT_ROUTING,
  parseTemplate,
  type RouteResult,
  type RouteRule,
  type Router,
  type RoutingConfig,
  routeRecord,
  type TemplatePart,
} from './route.ts';
export { isLegalTableName, MAX_TABLE_NAME_LENGTH, sanitizeTableName } from './table-name.ts';
