import net from 'node:net';

/** Child processes of the benchmark and chaos scripts: a free port, and an environment to pass on. */

/** A TCP port free on 127.0.0.1 at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * This process's environment without the settings that belong to the child alone (the
 * database, Redis, data dir, port, NODE_ENV and the script's own `scriptSettings`), plus `extra`.
 */
export function childEnv(extra: Record<string, string>, scriptSettings: string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'NODE_ENV', ...scriptSettings]) delete env[k];
  return { ...env, ...extra };
}
