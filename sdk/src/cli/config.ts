import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** One service and the credential to use there. */
export interface Context {
  url: string;
  token: string;
  /** Sessions only: the organization to act on (X-Org-ID). */
  org?: string;
}

export interface Config {
  current?: string;
  contexts: Record<string, Context>;
}

/**
 * Where cds keeps its contexts: `$CDS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/cds`, else
 * `%APPDATA%\cds` on Windows, else `~/.config/cds`.
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CDS_CONFIG_DIR) return env.CDS_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'cds');
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'cds');
  return join(homedir(), '.config', 'cds');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const path = configPath(env);
  if (!existsSync(path)) return { contexts: {} };
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<Config>;
  return { current: parsed.current, contexts: parsed.contexts ?? {} };
}

/**
 * Writes the contexts (tokens in clear, as hcloud and doctl keep theirs): the directory 0700, the
 * file 0600, written to a temporary file and renamed so that a crash leaves the old file whole.
 */
export function writeConfig(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = configPath(env);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}
