import { scaled } from './deadlines';
import { apiToken } from './fixtures';

/**
 * Renews volumes vol_<suffix>v<from+1> … vol_<suffix>v<to> through the API at `baseUrl`(s),
 * `parallel` requests at a time; the status of each, in volume order.
 */
export async function renewVolumes(baseUrls: string[], suffix: string, from: number, to: number, parallel = 10): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = from; start < to; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, to - start) }, (_, j) => start + j);
    statuses.push(
      ...(await Promise.all(
        batch.map(async (i) => {
          const res = await fetch(`${baseUrls[i % baseUrls.length]}/v1/volumes/vol_${suffix}v${i + 1}/renew`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${apiToken(suffix, 'rw')}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ term_months: 1 }),
          }).catch(() => undefined);
          return res?.status ?? 0;
        }),
      )),
    );
  }
  return statuses;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it holds, or fails after `timeoutMs` (a quiet machine's figure, stretched by the load). */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  timeoutMs = scaled(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
