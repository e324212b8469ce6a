/**
 * Which namespaces scheduled maintenance visits: every namespace the configuration can route
 * records to (README "Namespaces and IAM"), as the CDK app computes it at synth time
 * (lib/namespaces.ts `reachableNamespaces`) and grants it to the roles — the stack's own, a
 * routing template's literal one (`analytics.{source}_events`), consolidation rules' `namespace`s,
 * and for a template whose namespace comes from the data (`{tenant}.orders`) the names and
 * `prefix*` patterns of `-c allowedNamespaces`. The maintenance function gets the same list
 * (`MAINTENANCE_NAMESPACES`, handlers/maintenance-env.ts); a prefix is matched against the
 * namespaces the catalog holds at run time.
 *
 * A table's routing key, as the ingest and the committer name it (`config.ts` `tableId`): the
 * bare name in the stack's namespace, `namespace.name` in any other. Its ledger entries are kept
 * under the key the router produced: a template that names a namespace always produces
 * `namespace.name` (`{tenant}.orders` with tenant `floe` gives `floe.orders` for a table in the
 * stack's namespace `floe`), other rules the bare name: `ledgerKeys` lists both for a table of
 * the stack's namespace.
 */

import type { Catalog, TableIdentifier } from '../../ports/catalog.ts';
import { isLegalTableName } from '../../routing/table-name.ts';

/** Namespaces by name, and by prefix (`tenant_` for `tenant_*`). */
export interface NamespaceSet {
  readonly names: readonly string[];
  readonly prefixes: readonly string[];
}

/** Namespace names are table names of up to 252 characters that do not start with `aws`. */
export function isLegalNamespace(ns: string): boolean {
  return isLegalTableName(ns, 252) && !ns.startsWith('aws');
}

/**
 * Entries like `-c allowedNamespaces` and `MAINTENANCE_NAMESPACES`: a legal namespace, or a legal
 * prefix followed by `*` (a prefix may end with `_`, never is or starts with `aws`). Entries that
 * are neither are returned in `bad`.
 */
export function parseNamespacePatterns(entries: readonly string[]): {
  names: string[];
  prefixes: string[];
  bad: string[];
} {
  const names: string[] = [];
  const prefixes: string[] = [];
  const bad: string[] = [];
  for (const e of entries) {
    if (e.endsWith('*')) {
      const p = e.slice(0, -1);
      if (/^[a-z0-9][a-z0-9_]{0,250}$/.test(p) && !p.startsWith('aws') && !'aws'.startsWith(p))
        prefixes.push(p);
      else bad.push(e);
    } else if (isLegalNamespace(e)) names.push(e);
    else bad.push(e);
  }
  return { names, prefixes, bad };
}

/** Whether `ns` is one of `set`'s names or starts with one of its prefixes (and is legal). */
export function inNamespaceSet(set: NamespaceSet, ns: string): boolean {
  if (set.names.includes(ns)) return true;
  return isLegalNamespace(ns) && set.prefixes.some((p) => ns.startsWith(p));
}

/**
 * The namespaces to visit: `own` (the stack's, always), `set`'s names, and the catalog's
 * namespaces that start with one of its prefixes (the catalog is only asked when there is a
 * prefix). Sorted, the stack's first. A named namespace that does not exist yet simply has no
 * tables (`listTables` gives []).
 */
export async function namespacesToVisit(
  catalog: Pick<Catalog, 'listNamespaces'>,
  own: string,
  set: NamespaceSet | undefined,
): Promise<string[]> {
  const out = new Set<string>(set?.names ?? []);
  if (set !== undefined && set.prefixes.length > 0) {
    for (const ns of await catalog.listNamespaces()) if (inNamespaceSet(set, ns)) out.add(ns);
  }
  out.delete(own);
  return [own, ...[...out].sort()];
}

/** The routing key of a table (what the committer's `tableId` reads back): `name` or `namespace.name`. */
export function routingKeyOf(own: string, id: TableIdentifier): string {
  return id.namespace === own ? id.name : `${id.namespace}.${id.name}`;
}

/** The ledger keys a table's staged entries may be kept under (see the header). */
export function ledgerKeys(own: string, id: TableIdentifier): string[] {
  return id.namespace === own ? [id.name, `${id.namespace}.${id.name}`] : [`${id.namespace}.${id.name}`];
}
