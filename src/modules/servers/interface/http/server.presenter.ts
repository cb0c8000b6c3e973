/** The Server of servers.md (domain/server-json.ts: the executors' events use it too). */
export { presentServer } from '../../domain/server-json';
