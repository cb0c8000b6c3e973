import { existsSync } from 'node:fs';

/**
 * Reads `.env` of the working directory, if there is one, into process.env with Node's own loader
 * (process.loadEnvFile): a variable already set in the environment wins over the file.
 */
export function loadDotEnv(path = '.env'): boolean {
  if (!existsSync(path)) return false;
  process.loadEnvFile(path);
  return true;
}
