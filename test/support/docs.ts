import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** README.md and every Markdown file under docs/, as paths relative to the repository root. */
export function markdownFiles(root: string): string[] {
  const out = ['README.md', 'CHANGELOG.md'].filter((f) => statSync(join(root, f), { throwIfNoEntry: false })?.isFile());
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Text outside fenced code blocks and inline code spans (links there are examples, not links). */
function prose(text: string): string {
  return text.replace(/^\s*```[\s\S]*?^\s*```/gm, '').replace(/`[^`\n]*`/g, '');
}

export interface DeadLink {
  file: string;
  link: string;
  reason: string;
}

/** Relative links (and #anchors into Markdown files) that lead nowhere; absolute URLs are not followed. */
export function deadLinks(root: string, files: string[]): DeadLink[] {
  const dead: DeadLink[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const link = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
        dead.push({ file, link, reason: 'points outside the repository' });
        continue;
      }
      const [path, anchor] = link.split('#');
      const target = path === '' ? join(root, file) : resolve(join(root, dirname(file)), decodeURIComponent(path));
      if (relative(root, target).startsWith('..')) {
        dead.push({ file, link, reason: 'points outside the repository' });
        continue;
      }
      const stat = statSync(target, { throwIfNoEntry: false });
      if (!stat) {
        dead.push({ file, link, reason: 'no such file' });
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
        dead.push({ file, link, reason: `no heading #${anchor}` });
      }
    }
  }
  return dead;
}

export interface TestedBlock {
  file: string;
  line: number;
  code: string;
}

/** The fenced blocks whose info string is `sh tested`, in order. */
export function testedBlocks(root: string, file: string): TestedBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: TestedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh tested\b/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    blocks.push({ file, line: start, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

interface OpenApiLike {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { examples?: Record<string, { value?: unknown }> }> }> }>>;
}

/** docs/reference/error-codes.md, rendered from the OpenAPI document: every code with the routes that answer it. */
export function renderErrorCodes(document: OpenApiLike): string {
  const byCode = new Map<string, Set<string>>();
  for (const [path, ops] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (method === 'head' || typeof op !== 'object' || !op.responses) continue;
      for (const [status, response] of Object.entries(op.responses)) {
        for (const media of Object.values(response.content ?? {})) {
          for (const example of Object.values(media.examples ?? {})) {
            const code = (example.value as { error?: { code?: string } } | undefined)?.error?.code;
            if (!code) continue;
            const key = `${status} \`${code}\``;
            if (!byCode.has(key)) byCode.set(key, new Set());
            byCode.get(key)!.add(`\`${method.toUpperCase()} ${path}\``);
          }
        }
      }
    }
  }
  const everyRoute = new Set(
    Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).filter((m) => m !== 'head' && m !== 'parameters').map((m) => `\`${m.toUpperCase()} ${path}\``)),
  );
  const rows = [...byCode.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, routes]) => `| ${key.replace(' ', ' | ')} | ${routes.size === everyRoute.size ? 'every route' : [...routes].sort().join(', ')} |`);
  return [
    '# Error codes by route',
    '',
    'Every error code, with the routes that declare it in the OpenAPI document. This page is generated',
    'from the document and checked by `test/e2e/docs.e2e-spec.ts`: after a route changes, regenerate it',
    'with `UPDATE_DOCS=1 npx jest test/e2e/docs.e2e-spec.ts`. Meanings: [API reference](api.md#errors).',
    'Any path no route matches answers 404 `not_found`, a known path with another method 405',
    '`method_not_allowed`.',
    '',
    '| HTTP | Code | Routes |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
