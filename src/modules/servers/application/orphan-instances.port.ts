/** The servers the orphan instance sweep may delete the instances of (CleanUpOrphanInstances). */
export abstract class OrphanInstanceServers {
  /** Of these server ids, those whose server is deleted (or does not exist) and has no unfinished operation naming it (vm_id). */
  abstract goneAmong(serverIds: readonly string[]): Promise<string[]>;
}
