/**
 * Commit requirements (Iceberg REST spec `TableRequirement`; Java `UpdateRequirement.validate`).
 * A failed requirement means the table moved under us: the commit must be rebuilt on the fresh
 * metadata, so every failure is a retryable CommitConflict.
 */
import { ErrorKind, FloeError } from '../../errors.ts';
import type { TableMetadata } from '../table-metadata.ts';
import type { TableRequirement } from './updates.ts';

/**
 * Throws FloeError CommitConflict on the first requirement `base` does not meet. `base` is
 * undefined when the table does not exist (only `assert-create` can then hold).
 */
export function checkRequirements(
  base: TableMetadata | undefined,
  requirements: readonly TableRequirement[],
): void {
  for (const r of requirements) checkOne(base, r);
}

function checkOne(base: TableMetadata | undefined, r: TableRequirement): void {
  if (r.type === 'assert-create') {
    if (base !== undefined) throw conflict(r, `table ${base.location} already exists`);
    return;
  }
  if (base === undefined) throw conflict(r, 'table does not exist');
  const where = `table ${base.location}`;
  switch (r.type) {
    case 'assert-table-uuid':
      if (base['table-uuid'] !== r.uuid) {
        throw conflict(r, `${where}: table-uuid is ${base['table-uuid']}, expected ${r.uuid}`);
      }
      return;
    case 'assert-ref-snapshot-id': {
      const ref = base.refs[r.ref];
      const expected = r['snapshot-id'];
      if (expected === null) {
        if (ref !== undefined)
          throw conflict(r, `${where}: ref '${r.ref}' was created (snapshot ${ref['snapshot-id']})`);
      } else if (ref === undefined) {
        throw conflict(r, `${where}: ref '${r.ref}' is missing, expected snapshot ${expected}`);
      } else if (ref['snapshot-id'] !== expected) {
        throw conflict(
          r,
          `${where}: ref '${r.ref}' is at snapshot ${ref['snapshot-id']}, expected ${expected}`,
        );
      }
      return;
    }
    case 'assert-last-assigned-field-id':
      expectEqual(r, where, 'last-column-id', base['last-column-id'], r['last-assigned-field-id']);
      return;
    case 'assert-current-schema-id':
      expectEqual(r, where, 'current-schema-id', base['current-schema-id'], r['current-schema-id']);
      return;
    case 'assert-last-assigned-partition-id':
      expectEqual(r, where, 'last-partition-id', base['last-partition-id'], r['last-assigned-partition-id']);
      return;
    case 'assert-default-spec-id':
      expectEqual(r, where, 'default-spec-id', base['default-spec-id'], r['default-spec-id']);
      return;
    case 'assert-default-sort-order-id':
      expectEqual(
        r,
        where,
        'default-sort-order-id',
        base['default-sort-order-id'],
        r['default-sort-order-id'],
      );
      return;
    default: {
      const never: never = r;
      throw new FloeError(ErrorKind.DataInvalid, `unknown requirement ${JSON.stringify(never)}`);
    }
  }
}

function expectEqual(
  r: TableRequirement,
  where: string,
  key: string,
  actual: number,
  expected: number,
): void {
  if (actual !== expected) throw conflict(r, `${where}: ${key} is ${actual}, expected ${expected}`);
}

function conflict(r: TableRequirement, msg: string): FloeError {
  return new FloeError(ErrorKind.CommitConflict, `requirement ${r.type} failed: ${msg}`, {
    retryable: true,
    context: { requirement: r.type },
  });
}
