import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The agent's records on disk, one JSON file each, written whole (a temporary file renamed over the
 * old one, so a SIGKILL leaves the old record or the new one, never half of one).
 */
export class JsonStore<T extends object> {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  get(id: string): T | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, `${id}.json`), 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  put(id: string, value: T): void {
    const file = join(this.dir, `${id}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(value));
    renameSync(`${file}.tmp`, file);
  }

  remove(id: string): void {
    rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  all(): T[] {
    return readdirSync(this.dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => this.get(f.slice(0, -5)))
      .filter((v): v is T => v !== undefined);
  }
}

/**
 * The call journal: the answer of each changing call that took effect, by (resource, step), so the
 * same call again answers as the first did and changes nothing twice.
 */
export class CallJournal {
  private readonly store: JsonStore<{ resource: string; step: string; action: string; answer: unknown; at: string }>;

  constructor(dir: string) {
    this.store = new JsonStore(dir);
  }

  private key(resource: string, step: string): string {
    return createHash('sha256').update(`${resource}\n${step}`).digest('hex');
  }

  find(resource: string, step: string): { action: string; answer: unknown } | undefined {
    return this.store.get(this.key(resource, step));
  }

  record(resource: string, step: string, action: string, answer: unknown): void {
    this.store.put(this.key(resource, step), { resource, step, action, answer, at: new Date().toISOString() });
  }
}

/** One call at a time per key (a resource, or "host" for what several resources share). */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(work);
    this.tails.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.tails.get(key) === mine) this.tails.delete(key);
    }
  }
}
