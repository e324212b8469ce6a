/**
 * The namespaces a configuration can route records to, so IAM grants exactly those (issue #14).
 *
 * A record lands in the stack's namespace unless a rule names another one (README
 * "Configuration"): a routing template whose literal text holds a dot (`analytics.{source}_events`,
 * `{tenant}.orders`) or a consolidation rule's `namespace`. The template is read with the product's
 * own parser (`parseTemplate` + `splitNamespace`, lambdas/src/routing/route.ts) and a literal
 * namespace part is sanitised exactly as the router does at run time (`sanitizeTableName(…, 252)`),
 * so `Analytics.{x}` grants `analytics`, the namespace the records really reach.
 *
 * A namespace part with a placeholder (`{tenant}.orders`, `t_{tenant}.orders`) can produce any
 * name, and IAM cannot be written for "any": the deploy must say which with
 * `-c allowedNamespaces=a,b,c` (names, or prefixes `tenant_*`). The Lambdas then hold the routing
 * to the same list: a `guards.allowTables` expression is added to FLOE_CONFIG (combined with a
 * configured one), so a record routed to another namespace is dead-lettered (`guard-allow-tables`,
 * the detail naming the table) instead of failing on AccessDenied and stalling its shard.
 *
 * The maintenance function visits the same namespaces (`MAINTENANCE_NAMESPACES`, the patterns of
 * `namespacePatterns`), its role granted the same scope as the committer's.
 */
import { parseNamespacePatterns } from '../lambdas/src/app/maintain/namespaces.ts';
import type { FloeConfig } from '../lambdas/src/config.ts';
import { parseTemplate, splitNamespace, type TemplatePart } from '../lambdas/src/routing/route.ts';
import { sanitizeTableName } from '../lambdas/src/routing/table-name.ts';

/** What IAM grants: names, and name prefixes (`prefix*`). */
export interface NamespaceScope {
  /** Exact namespaces, the stack's own first. */
  readonly names: readonly string[];
  /** Prefixes of `allowedNamespaces` entries like `tenant_*` (no `*`). */
  readonly prefixes: readonly string[];
}

/** `analytics` → `analytics`; `tenant_*` → `tenant_*`: each as an IAM resource / condition value. */
export function namespacePatterns(scope: NamespaceScope): string[] {
  return [...scope.names, ...scope.prefixes.map((p) => `${p}*`)];
}

/** How the template names namespaces. */
export type TemplateNamespace =
  | { readonly kind: 'none' }
  | { readonly kind: 'literal'; readonly namespace: string }
  | { readonly kind: 'illegal'; readonly text: string }
  | { readonly kind: 'variable'; readonly template: string };

/** The namespace part of a routing template, as the router will render it. */
export function templateNamespace(template: string | undefined): TemplateNamespace {
  if (template === undefined) return { kind: 'none' };
  const split = splitNamespace(parseTemplate(template));
  if (split.namespace === undefined) return { kind: 'none' };
  if (split.namespace.some((p: TemplatePart) => typeof p !== 'string')) return { kind: 'variable', template };
  const text = (split.namespace as string[]).join('');
  const ns = sanitizeTableName(text, 252);
  // The router dead-letters every record of such a template (`illegal-name`).
  if (ns === undefined || ns.startsWith('aws')) return { kind: 'illegal', text };
  return { kind: 'literal', namespace: ns };
}

/**
 * `-c allowedNamespaces` entries: a legal namespace, or a legal prefix followed by `*` — read by
 * the same rules as the maintenance function's `MAINTENANCE_NAMESPACES`.
 */
export function parseAllowedNamespaces(entries: readonly string[]): {
  names: string[];
  prefixes: string[];
  bad: string[];
} {
  return parseNamespacePatterns(entries);
}

/** Why the namespaces cannot be granted: the template's fault, or `allowedNamespaces`'. */
export interface NamespaceProblem {
  readonly about: 'template' | 'allowedNamespaces';
  readonly message: string;
}

export interface ReachableNamespaces {
  readonly scope: NamespaceScope;
  /** How the template names namespaces (`none` without a template). */
  readonly template: TemplateNamespace;
  /**
   * `guards.allowTables` for FLOE_CONFIG when the namespace is variable: routing keys in the
   * stack's namespace (no dot) or in a granted one (`ns.table`), combined with `configured`.
   */
  readonly allowTables?: string;
}

/**
 * The namespaces `config` can reach. `allowed` is `-c allowedNamespaces` (already split); it is
 * required exactly when the template's namespace part has a placeholder (the caller reports a
 * problem otherwise: see `problems`).
 */
export function reachableNamespaces(
  config: FloeConfig,
  allowed: { names: readonly string[]; prefixes: readonly string[] } | undefined,
): ReachableNamespaces & { readonly problems: readonly NamespaceProblem[] } {
  const problems: NamespaceProblem[] = [];
  const names = new Set<string>([config.namespace]);
  const prefixes = new Set<string>();
  const template = templateNamespace(config.routing.template);
  if (template.kind === 'literal') names.add(template.namespace);
  for (const rule of config.consolidate ?? []) if (rule.namespace !== undefined) names.add(rule.namespace);

  let allowTables: string | undefined;
  if (template.kind === 'variable') {
    if (allowed === undefined || allowed.names.length + allowed.prefixes.length === 0) {
      problems.push({
        about: 'template',
        message: `routing template '${template.template}' takes its namespace from the data, so IAM cannot name the namespaces it reaches: give -c allowedNamespaces=a,b,c (namespaces, or prefixes like tenant_*); records routed elsewhere are dead-lettered (guard-allow-tables)`,
      });
    } else {
      for (const n of allowed.names) names.add(n);
      for (const p of allowed.prefixes) prefixes.add(p);
      const alternatives = [
        ...[...names].map(escapeRegExp),
        ...[...prefixes].map((p) => `${escapeRegExp(p)}[a-z0-9_]*`),
      ];
      const ours = `[a-z0-9_]+|(?:${alternatives.join('|')})\\.[a-z0-9_]+`;
      const configured = config.guards?.allowTables;
      allowTables = configured === undefined ? ours : `(?=(?:${configured})$)(?:${ours})`;
    }
  } else if (allowed !== undefined && allowed.names.length + allowed.prefixes.length > 0) {
    problems.push({
      about: 'allowedNamespaces',
      message: `only applies when the routing template takes its namespace from the data (like {tenant}.orders); this configuration reaches ${[...names].join(', ')}, granted by name`,
    });
  }
  if (template.kind === 'illegal') {
    problems.push({
      about: 'template',
      message: `routing template's namespace '${template.text}' can never be a namespace ([a-z0-9_], not starting with 'aws'): every record it routes would be dead-lettered`,
    });
  }
  return {
    scope: { names: [...names], prefixes: [...prefixes] },
    template,
    ...(allowTables === undefined ? {} : { allowTables }),
    problems,
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
