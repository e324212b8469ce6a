/** Plain-text rendering for the CLI: aligned tables and schema trees. */
import type { Schema } from '../iceberg/schema.ts';
import { type IcebergType, type NestedField, primitiveToString } from '../iceberg/types.ts';

export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** One line per field: id, path (indented), type, required flag; `mark(field)` may tag lines. */
export function renderSchema(schema: Schema, mark?: (f: NestedField) => string | undefined): string {
  const lines: string[] = [];
  const visit = (fields: readonly NestedField[], depth: number) => {
    for (const f of fields) {
      const tag = mark?.(f);
      lines.push(
        `${String(f.id).padStart(4)}  ${'  '.repeat(depth)}${f.name}: ${shortType(f.type)}${f.required ? ' (required)' : ''}${tag ? `  ${tag}` : ''}`,
      );
      nested(f.type, depth + 1);
    }
  };
  const nested = (t: IcebergType, depth: number) => {
    if (t.kind === 'struct') visit(t.fields, depth);
    else if (t.kind === 'list') {
      lines.push(`${String(t.elementId).padStart(4)}  ${'  '.repeat(depth)}element: ${shortType(t.element)}`);
      nested(t.element, depth + 1);
    } else if (t.kind === 'map') {
      lines.push(`${String(t.keyId).padStart(4)}  ${'  '.repeat(depth)}key: ${shortType(t.key)}`);
      lines.push(`${String(t.valueId).padStart(4)}  ${'  '.repeat(depth)}value: ${shortType(t.value)}`);
      nested(t.value, depth + 1);
    }
  };
  visit(schema.fields, 0);
  return lines.join('\n');
}

function shortType(t: IcebergType): string {
  switch (t.kind) {
    case 'struct':
      return 'struct';
    case 'list':
      return 'list';
    case 'map':
      return 'map';
    default:
      return primitiveToString(t);
  }
}

export function formatTimestampMs(ms: bigint | number): string {
  return new Date(Number(ms)).toISOString();
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
