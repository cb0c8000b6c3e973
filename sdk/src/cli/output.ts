/** How a command's result is printed: `-o table` (people), `-o json` or `-o yaml` (programs). */
export type Format = 'table' | 'json' | 'yaml';
export const FORMATS: readonly Format[] = ['table', 'json', 'yaml'];

/** A column of a table: its header and how to read it from an item. */
export interface Column {
  header: string;
  value: (item: Record<string, unknown>) => unknown;
}

/** What a command gives back: the data printed as JSON or YAML, and how to show it as a table. */
export interface Result {
  data: unknown;
  /** Table mode: one row per item of `rows` (a list), or one line per column for `data` (an object). */
  columns?: Column[];
  rows?: Record<string, unknown>[];
  /** Table mode: the item shown a line per column (the resource of an action's answer). */
  item?: Record<string, unknown>;
  /** Table mode: a line instead of a table (a deletion, a context saved). */
  message?: string;
  /** The exit code when not 0 (an operation waited for that failed). */
  exitCode?: number;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length ? value.map(cell).join(',') : '-';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length ? entries.map(([k, v]) => `${k}=${cell(v)}`).join(',') : '-';
  }
  return String(value);
}

export function table(columns: Column[], rows: Record<string, unknown>[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('   ').trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n');
}

function yamlScalar(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const s = String(value);
  // Plain when YAML reads it back as the same string; quoted (JSON is valid YAML) otherwise.
  const plain = /^[A-Za-z_/][\w./@+-]*( [\w./@+-]+)*$/.test(s) && !/^(true|false|null|yes|no|on|off|~)$/i.test(s);
  return plain ? s : JSON.stringify(s);
}

/** YAML 1.2 of JSON data (block style; strings quoted wherever a plain scalar would read otherwise). */
export function yaml(value: unknown, indent = 0): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return value
      .map((item) => {
        const inner = yaml(item, indent + 2);
        return item !== null && typeof item === 'object' && (Array.isArray(item) ? item.length : Object.keys(item).length)
          ? `${pad}- ${inner.trimStart()}`
          : `${pad}- ${inner}`;
      })
      .join('\n');
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return '{}';
    return entries
      .map(([k, v]) => {
        const key = yamlScalar(k);
        if (v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length : Object.keys(v).length)) return `${pad}${key}:\n${yaml(v, indent + 2)}`;
        return `${pad}${key}: ${yaml(v, indent + 2)}`;
      })
      .join('\n');
  }
  return yamlScalar(value);
}

export function render(result: Result, format: Format): string {
  if (format === 'json') return JSON.stringify(result.data, null, 2);
  if (format === 'yaml') return yaml(result.data);
  if (result.message !== undefined) return result.message;
  if (result.rows && result.columns) return table(result.columns, result.rows);
  if (result.columns && result.item) {
    const item = result.item;
    const width = Math.max(...result.columns.map((c) => c.header.length));
    return result.columns.map((c) => `${`${c.header}:`.padEnd(width + 1)}  ${cell(c.value(item))}`).join('\n');
  }
  return yaml(result.data);
}
