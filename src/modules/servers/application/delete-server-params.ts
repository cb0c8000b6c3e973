import { ActorType } from '../../audit/application/audit-trail.port';
import { JsonObject } from '../../operations/domain/operation';
import { ServerStatus } from '../domain/server';
import { AttachedDisk } from './server-deletions.port';

/**
 * What DELETE /v1/servers/{id} stores in the vm.delete operation's `params` (never shown): the
 * status to give back when the deletion fails, who asked (the audit rows of the disks' detach
 * and of the firewall rules' removal name the deleter), and the disks on the server at
 * acceptance (`detaching_volumes` unmounts and detaches them; none can join while the server is
 * `deleting`).
 */
export interface DeleteServerParams {
  formerStatus: Extract<ServerStatus, 'running' | 'stopped' | 'suspended'>;
  actor: { type: ActorType; id: string | null; ip: string | null };
  disks: AttachedDisk[];
}

const fail = (params: JsonObject): never => {
  throw new Error(`vm.delete parameters are malformed: ${JSON.stringify(params)}`);
};

export const deleteServerParams = {
  write(p: DeleteServerParams): JsonObject {
    return {
      former_status: p.formerStatus,
      actor: { type: p.actor.type, id: p.actor.id, ip: p.actor.ip },
      disks: p.disks.map((d) => ({ volume_id: d.volumeId, mount_path: d.mountPath })),
    };
  },
  read(params: JsonObject): DeleteServerParams {
    const { former_status, actor, disks } = params as { former_status?: unknown; actor?: { type?: unknown; id?: unknown; ip?: unknown }; disks?: unknown };
    if (former_status !== 'running' && former_status !== 'stopped' && former_status !== 'suspended') return fail(params);
    if (!actor || typeof actor.type !== 'string' || !(actor.id === null || typeof actor.id === 'string') || !(actor.ip === null || typeof actor.ip === 'string')) return fail(params);
    if (!Array.isArray(disks)) return fail(params);
    return {
      formerStatus: former_status,
      actor: { type: actor.type as ActorType, id: actor.id, ip: actor.ip },
      disks: disks.map((d: { volume_id?: unknown; mount_path?: unknown }) => {
        if (typeof d?.volume_id !== 'string' || !(d.mount_path === null || typeof d.mount_path === 'string')) return fail(params);
        return { volumeId: d.volume_id, mountPath: d.mount_path };
      }),
    };
  },
};
