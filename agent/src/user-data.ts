import { load } from 'js-yaml';
import { invalidRequest } from './errors';

/** What the agent does with a server's user_data (docs/explanation/host-agent.md "User data"). */
export interface UserDataPlan {
  /** The script the first-boot unit runs once (null: none). */
  script: string | null;
  /** Debian packages the agent installs before the script runs. */
  packages: string[];
  /** Keys added to root's authorized_keys beside the server's SSH keys. */
  sshAuthorizedKeys: string[];
}

const PACKAGE = /^[a-z0-9][a-z0-9+.-]{0,99}(=[A-Za-z0-9.+:~-]{1,100})?$/;

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * user_data starting with `#!`: a script run once at first boot, as cloud-init does. Starting with
 * `#cloud-config`: this subset of cloud-config: `ssh_authorized_keys`, `packages` (Debian's),
 * `write_files` (path, content, optional encoding b64|base64, permissions, append) and `runcmd`
 * (strings run by sh, or argument lists); other members are ignored. Anything else: nothing runs.
 */
export function planUserData(userData: string | null): UserDataPlan {
  const none: UserDataPlan = { script: null, packages: [], sshAuthorizedKeys: [] };
  if (!userData) return none;
  if (userData.startsWith('#!')) return { ...none, script: userData };
  if (!/^#cloud-config[ \t]*\r?\n/.test(`${userData}\n`)) return none;
  let doc: unknown;
  try {
    doc = load(userData);
  } catch (err) {
    throw invalidRequest(`user_data is not valid cloud-config YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  const config = (doc ?? {}) as Record<string, unknown>;
  if (typeof config !== 'object' || Array.isArray(config)) throw invalidRequest('user_data cloud-config must be a mapping');
  const list = (name: string): unknown[] => {
    const v = config[name];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw invalidRequest(`user_data cloud-config ${name} must be a list`);
    return v;
  };
  const packages = list('packages').map((p) => {
    if (typeof p !== 'string' || !PACKAGE.test(p)) throw invalidRequest(`user_data cloud-config packages: ${String(p)} is not a Debian package name`);
    return p;
  });
  const keys = list('ssh_authorized_keys').map((k) => {
    if (typeof k !== 'string' || /[\r\n]/.test(k)) throw invalidRequest('user_data cloud-config ssh_authorized_keys must be one-line strings');
    return k.trim();
  });
  const lines: string[] = ['#!/bin/sh', '# Generated from the server\'s #cloud-config by the host agent.'];
  for (const f of list('write_files')) {
    const file = f as { path?: unknown; content?: unknown; encoding?: unknown; permissions?: unknown; append?: unknown };
    if (typeof file?.path !== 'string' || !file.path.startsWith('/') || file.path.split('/').includes('..')) {
      throw invalidRequest('user_data cloud-config write_files needs an absolute path for each file');
    }
    const content = file.content === undefined || file.content === null ? '' : String(file.content);
    const encoded = file.encoding === 'b64' || file.encoding === 'base64' ? content.replace(/\s+/g, '') : Buffer.from(content, 'utf8').toString('base64');
    const permissions = file.permissions === undefined ? '0644' : String(file.permissions);
    if (!/^0?[0-7]{3,4}$/.test(permissions)) throw invalidRequest(`user_data cloud-config write_files permissions must be octal, got ${permissions}`);
    lines.push(`mkdir -p "$(dirname ${quote(file.path)})"`);
    lines.push(`printf '%s' ${quote(encoded)} | base64 -d ${file.append === true ? '>>' : '>'} ${quote(file.path)}`);
    lines.push(`chmod ${permissions} ${quote(file.path)}`);
  }
  for (const c of list('runcmd')) {
    if (typeof c === 'string') lines.push(c);
    else if (Array.isArray(c) && c.every((a) => typeof a === 'string' || typeof a === 'number')) lines.push(c.map((a) => quote(String(a))).join(' '));
    else throw invalidRequest('user_data cloud-config runcmd entries must be strings or lists of strings');
  }
  const script = lines.length > 2 ? `${lines.join('\n')}\n` : null;
  return { script, packages, sshAuthorizedKeys: keys };
}
