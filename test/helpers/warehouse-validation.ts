/**
 * Every table of a warehouse through the independent Iceberg validator (iceberg-validator.ts), for
 * the end state of end-to-end and integration scenarios: each namespace the catalog lists, each
 * table in it, every snapshot walked by default.
 *
 * Files are read by URI without Floe's URI handling where a standard mapping exists: `file:` URIs
 * as Java's Hadoop FileIO (literally) or RFC 8089 read them (see `fileUriPath`), any other URI through the local store's own roots (HTTP
 * locations served from a folder, the original locations of a copied fixture table), or, for a
 * store that is not on local disk (S3 on s3rver), through the store's `get`/`exists`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Catalog, TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';
import {
  formatProblem,
  localTableIo,
  type SnapshotSelection,
  type ValidateOptions,
  type ValidationReport,
  validateTable,
} from './iceberg-validator.ts';

export interface ValidatedWarehouse {
  readonly store: Pick<ObjectStore, 'get' | 'exists'> & { pathOf?: (uri: string) => string };
  readonly catalog: Pick<Catalog, 'listNamespaces' | 'listTables' | 'loadTable'>;
}

export interface WarehouseValidationOptions {
  /** Which snapshots to walk (default: every snapshot). */
  readonly snapshots?: SnapshotSelection;
  /** Known defects to ignore, by `namespace.table` (fixtures other engines wrote; never Floe's own). */
  readonly knownDefects?: Readonly<Record<string, readonly string[]>>;
  /** How to read a URI (default: see the header). */
  readonly io?: Pick<ValidateOptions, 'read' | 'exists'>;
  /** These tables instead of every table the catalog lists. */
  readonly tables?: readonly TableIdentifier[];
}

export interface WarehouseValidation {
  /** `namespace.table` → its report. */
  readonly reports: Map<string, ValidationReport>;
  /** Every problem of every table, as `namespace.table: code: message [where]`. */
  readonly problems: string[];
}

/**
 * `read`/`exists` for tables whose locations are HTTP URLs served from a folder, mapped as
 * test/helpers/static-server.ts serves them: `<url>/<path>` is `<dir>/<path>`, percent-decoded.
 */
export function servedFolderIo(url: string, dir: string): Pick<ValidateOptions, 'read' | 'exists'> {
  const prefix = `${url.replace(/\/$/, '')}/`;
  return localTableIo((uri) => {
    if (!uri.startsWith(prefix)) throw new Error(`not served from ${dir}: ${uri}`);
    return join(dir, decodeURIComponent(uri.slice(prefix.length)));
  });
}

/** The default URI → file mapping for `store` (see the header). */
export function warehouseIo(store: ValidatedWarehouse['store']): Pick<ValidateOptions, 'read' | 'exists'> {
  const { pathOf } = store;
  if (typeof pathOf !== 'function') {
    return { read: (uri) => store.get(uri), exists: (uri) => store.exists(uri) };
  }
  return localTableIo((uri) => (uri.startsWith('file:') ? fileUriPath(uri) : pathOf.call(store, uri)));
}

/**
 * The local file a `file:` location names. Iceberg locations are strings, not strictly URIs: Java's
 * Hadoop FileIO and PyArrow read the path part literally (a partition folder escaped as
 * `region=eu%2Fwest` is a folder of that name), while RFC 8089 decodes escapes (`my%20dir`). The
 * first candidate that exists wins: literal, RFC 8089, then every escape decoded but those of bytes
 * a file name cannot hold (`/`, NUL), for a path that mixes both.
 */
function fileUriPath(uri: string): string {
  const literal = uri.replace(/^file:(\/\/[^/]*)?/, '');
  const candidates = [literal];
  try {
    candidates.push(fileURLToPath(uri));
  } catch {
    // An escaped `/` (RFC 8089 refuses it): only the literal and mixed readings apply.
  }
  try {
    candidates.push(decodeURIComponent(literal.replace(/%(2f|00)/gi, '%25$1')));
  } catch {
    // A malformed escape: literal only.
  }
  return candidates.find((c) => existsSync(c)) ?? literal;
}

/** Validates every table of the warehouse; never throws for a problem (it is in `problems`). */
export async function validateWarehouse(
  wh: ValidatedWarehouse,
  opts: WarehouseValidationOptions = {},
): Promise<WarehouseValidation> {
  const reports = new Map<string, ValidationReport>();
  const problems: string[] = [];
  for (const { namespace, name } of opts.tables ?? (await listTables(wh.catalog))) {
    const key = `${namespace}.${name}`;
    // Loading first also lets a local store learn a copied table's original location.
    const table = await wh.catalog.loadTable({ namespace, name });
    const io = opts.io ?? warehouseIo(wh.store);
    const report = await validateTable({
      metadataJson: await io.read(table.metadataLocation),
      metadataLocation: table.metadataLocation,
      ...io,
      snapshots: opts.snapshots ?? 'all',
      knownDefects: opts.knownDefects?.[key] ?? [],
    });
    reports.set(key, report);
    for (const p of report.problems) problems.push(`${key}: ${formatProblem(p)}`);
  }
  return { reports, problems };
}

async function listTables(catalog: ValidatedWarehouse['catalog']): Promise<TableIdentifier[]> {
  const out: TableIdentifier[] = [];
  for (const namespace of await catalog.listNamespaces())
    for (const name of await catalog.listTables(namespace)) out.push({ namespace, name });
  return out;
}

/**
 * Fails the test with every problem of every table of the warehouse (and when it holds no table
 * at all, unless `allowEmpty`). Returns each table's report, by `namespace.table`.
 */
export async function expectWarehouseValid(
  wh: ValidatedWarehouse,
  opts: WarehouseValidationOptions & { readonly allowEmpty?: boolean } = {},
): Promise<Map<string, ValidationReport>> {
  const { reports, problems } = await validateWarehouse(wh, opts);
  expect(problems, 'Iceberg table validation problems').toEqual([]);
  if (!opts.allowEmpty) expect(reports.size, 'tables validated').toBeGreaterThan(0);
  return reports;
}
