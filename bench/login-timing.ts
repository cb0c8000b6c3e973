/**
 * Login failure timing: does POST /v1/auth/login take as long for an unknown email as for a
 * known email with a wrong password? (decisions.md: comparable timing, so the answer's duration
 * does not tell which emails have accounts.) Runs against a server that is already running.
 *
 *   npm run build
 *   RATE_LIMIT_PER_MINUTE=100000 PORT=3000 npm start        # in another shell
 *   BASE_URL=http://127.0.0.1:3000 ROUNDS=200 node dist/bench/login-timing.js
 *
 * It signs up one fresh user, then sends ROUNDS (default 200, at most 2000) rounds of three
 * logins, one after the other and interleaved so drift hits all three alike: known email +
 * wrong password, unknown email, known email + right password. Prints one JSON object with
 * latency percentiles in milliseconds per case and the difference of the medians. Figures,
 * not assertions.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { envInt, percentile, round3 } from './stats';

function summary(values: number[]): { p10: number; p50: number; p90: number; mean: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number => percentile(sorted, p);
  return { p10: round3(at(10)), p50: round3(at(50)), p90: round3(at(90)), mean: round3(sorted.reduce((a, b) => a + b, 0) / sorted.length) };
}

async function main(): Promise<void> {
  const base = new URL(process.env.BASE_URL || 'http://127.0.0.1:3000');
  if (base.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(base.hostname)) {
    throw new Error('BASE_URL must be http://127.0.0.1:<port> (this benchmark only talks to the local machine)');
  }
  const rounds = envInt('ROUNDS', 200, 2000);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  const post = (path: string, body: object): Promise<{ status: number; ms: number }> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const started = process.hrtime.bigint();
      const req = http.request(
        {
          host: '127.0.0.1',
          port: base.port || 80,
          path,
          method: 'POST',
          agent,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('request timed out after 10 s')));
      req.on('error', reject);
      req.end(payload);
    });

  const suffix = randomBytes(6).toString('hex');
  const email = `timing-${suffix}@bench.test`;
  const password = `bench password ${suffix}`;
  const signup = await post('/v1/auth/signup', { email, password, organization_name: 'Timing bench' });
  if (signup.status !== 201) throw new Error(`signup answered ${signup.status}; is the server running with a high RATE_LIMIT_PER_MINUTE?`);

  const cases = {
    known_email_wrong_password: { body: { email, password: 'not the password' }, expect: 401, ms: [] as number[] },
    unknown_email: { body: { email: `nobody-${suffix}@bench.test`, password: 'not the password' }, expect: 401, ms: [] as number[] },
    known_email_right_password: { body: { email, password }, expect: 200, ms: [] as number[] },
  };
  // Warm-up: JIT, connection, database caches.
  for (let i = 0; i < 5; i++) for (const c of Object.values(cases)) await post('/v1/auth/login', c.body);
  for (let i = 0; i < rounds; i++) {
    for (const [name, c] of Object.entries(cases)) {
      const r = await post('/v1/auth/login', c.body);
      if (r.status !== c.expect) throw new Error(`${name}: expected ${c.expect}, got ${r.status} (rate limit too low?)`);
      c.ms.push(r.ms);
    }
  }
  agent.destroy();
  const known = summary(cases.known_email_wrong_password.ms);
  const unknown = summary(cases.unknown_email.ms);
  process.stdout.write(
    JSON.stringify(
      {
        rounds,
        latency_ms: {
          known_email_wrong_password: known,
          unknown_email: unknown,
          known_email_right_password: summary(cases.known_email_right_password.ms),
        },
        median_difference_ms: round3(known.p50 - unknown.p50),
        median_difference_percent: round3(((known.p50 - unknown.p50) / unknown.p50) * 100),
      },
      null,
      2,
    ) + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
