/**
 * What a generated client gives an integrator: `Operation` is a union told apart by `type`, so
 * checking the type is enough for `result` to have that type's schema. No cast anywhere: this
 * file is type-checked with `--strict` by `npm run openapi:client`.
 */
import type {
  Operation, TemplateDeployResult, TemplateHealthResult, TemplateRemoveResult, TemplateUpdateResult, VmCreateResult, VmDeleteResult, VmRebootResult,
  VmRenewResult, VmStartResult, VmStopResult, VolumeActionResult, VolumeCreateResult, VolumeRenewResult, VmSuspendResult, VolumeSuspendResult,
  SnapshotCreateResult, SnapshotDeleteResult, SnapshotRenewResult, ImageCreateResult, ImageDeleteResult, ImageRenewResult,
  VolumeResizeResult, VmResizeResult, VmRebuildResult, IpReserveResult, IpAssignmentResult, IpRenewResult, IpReleaseResult,
  VmNetworkResult,
} from './generated/types.gen';

/** The purchase's outcome (volume id, size, paid term, charge) once a volume.create operation succeeded. */
export function purchaseResult(operation: Operation): VolumeCreateResult | null {
  return operation.type === 'volume.create' ? operation.result : null;
}

/** Any operation's outcome, each with its own type. */
export function describeResult(operation: Operation): string {
  switch (operation.type) {
    case 'volume.create': {
      const r: VolumeCreateResult | null = operation.result;
      return r ? `bought ${r.volume_id} (${r.size_gb} GB) until ${r.expires_at} for ${r.charged.amount} ${r.charged.currency}` : 'not bought yet';
    }
    case 'volume.renew': {
      const r: VolumeRenewResult | null = operation.result;
      return r ? `renewed ${r.volume_id} for ${r.term_months} months until ${r.expires_at}` : 'not renewed yet';
    }
    case 'volume.attach':
    case 'volume.detach':
    case 'volume.delete': {
      const r: VolumeActionResult | null = operation.result;
      return r ? `${r.volume_id} is ${r.status}` : 'not done yet';
    }
    case 'vm.create': {
      const r: VmCreateResult | null = operation.result;
      return r ? `bought ${r.server_id} (${r.ipv4}) until ${r.expires_at} for ${r.charged.amount} ${r.charged.currency}` : 'not bought yet';
    }
    case 'vm.renew': {
      const r: VmRenewResult | null = operation.result;
      return r ? `renewed ${r.server_id} for ${r.term_months} months until ${r.expires_at}` : 'not renewed yet';
    }
    case 'vm.start': {
      const r: VmStartResult | null = operation.result;
      return r ? `${r.server_id} is ${r.status}` : 'not started yet';
    }
    case 'vm.stop': {
      const r: VmStopResult | null = operation.result;
      return r ? `${r.server_id} is ${r.status}${r.forced ? ' (power cut)' : ''}` : 'not stopped yet';
    }
    case 'vm.reboot': {
      const r: VmRebootResult | null = operation.result;
      return r ? `${r.server_id} is ${r.status}${r.hard ? ' (reset)' : ''}` : 'not rebooted yet';
    }
    case 'vm.delete': {
      const r: VmDeleteResult | null = operation.result;
      return r ? `deleted ${r.server_id} at ${r.deleted_at}, keeping ${r.detached_volume_ids.length} disk(s)` : 'not deleted yet';
    }
    case 'snapshot.create': {
      const r: SnapshotCreateResult | null = operation.result;
      return r ? `took ${r.snapshot_id} (${r.size_gb} GB) until ${r.expires_at} for ${r.charged.amount} ${r.charged.currency}` : 'not taken yet';
    }
    case 'snapshot.renew': {
      const r: SnapshotRenewResult | null = operation.result;
      return r ? `renewed ${r.snapshot_id} for ${r.term_months} months until ${r.expires_at}` : 'not renewed yet';
    }
    case 'snapshot.delete': {
      const r: SnapshotDeleteResult | null = operation.result;
      return r ? `deleted ${r.snapshot_id} at ${r.deleted_at}` : 'not deleted yet';
    }
    case 'image.create': {
      const r: ImageCreateResult | null = operation.result;
      return r ? `imaged ${r.image_id} (${r.disk_gb} GB) until ${r.expires_at} for ${r.charged.amount} ${r.charged.currency}` : 'not imaged yet';
    }
    case 'image.renew': {
      const r: ImageRenewResult | null = operation.result;
      return r ? `renewed ${r.image_id} for ${r.term_months} months until ${r.expires_at}` : 'not renewed yet';
    }
    case 'image.delete': {
      const r: ImageDeleteResult | null = operation.result;
      return r ? `deleted ${r.image_id} at ${r.deleted_at}` : 'not deleted yet';
    }
    case 'vm.suspend': {
      const r: VmSuspendResult | null = operation.result;
      return r ? `${r.server_id} suspended at ${r.suspended_at}, released at ${r.release_at} unless renewed` : 'not suspended yet';
    }
    case 'volume.suspend': {
      const r: VolumeSuspendResult | null = operation.result;
      return r ? `${r.volume_id} suspended at ${r.suspended_at}, released at ${r.release_at} unless renewed` : 'not suspended yet';
    }
    case 'template.deploy': {
      const r: TemplateDeployResult | null = operation.result;
      return r ? `${r.template} ${r.version} is ${r.status} (${r.deployment_id})` : 'not deployed yet';
    }
    case 'template.update': {
      const r: TemplateUpdateResult | null = operation.result;
      return r ? `${r.deployment_id} is ${r.status} at ${r.version}` : 'not updated yet';
    }
    case 'template.health': {
      const r: TemplateHealthResult | null = operation.result;
      return r ? `${r.deployment_id} was ${r.health} at ${r.checked_at}` : 'not checked yet';
    }
    case 'template.remove': {
      const r: TemplateRemoveResult | null = operation.result;
      return r ? `${r.deployment_id} is ${r.status}` : 'not removed yet';
    }
    case 'volume.resize': {
      const r: VolumeResizeResult | null = operation.result;
      return r ? `${r.volume_id} grown to ${r.size_gb} GB for ${r.charged.amount} ${r.charged.currency}` : 'not resized yet';
    }
    case 'vm.resize': {
      const r: VmResizeResult | null = operation.result;
      return r ? `${r.server_id} is on ${r.plan} (${r.vcpus} vCPUs, ${r.memory_gb} GB) for ${r.charged.amount} ${r.charged.currency}` : 'not resized yet';
    }
    case 'vm.rebuild': {
      const r: VmRebuildResult | null = operation.result;
      return r ? `${r.server_id} reinstalled from ${r.image}, ${r.status}` : 'not rebuilt yet';
    }
    case 'ip.reserve': {
      const r: IpReserveResult | null = operation.result;
      return r ? `reserved ${r.ip} (${r.reserved_ip_id}) until ${r.expires_at} for ${r.charged.amount} ${r.charged.currency}` : 'not reserved yet';
    }
    case 'ip.assign':
    case 'ip.unassign': {
      const r: IpAssignmentResult | null = operation.result;
      return r ? `${r.ip} ${r.assigned ? 'assigned to' : 'unassigned from'} ${r.server_id}` : 'not moved yet';
    }
    case 'ip.renew': {
      const r: IpRenewResult | null = operation.result;
      return r ? `renewed ${r.reserved_ip_id} for ${r.term_months} months until ${r.expires_at}` : 'not renewed yet';
    }
    case 'ip.release': {
      const r: IpReleaseResult | null = operation.result;
      return r ? `released ${r.ip} at ${r.released_at}` : 'not released yet';
    }
    case 'vm.attach_network': {
      const r: VmNetworkResult | null = operation.result;
      return r ? `${r.server_id} joined ${r.network_id} at ${r.ip}` : 'not attached yet';
    }
    case 'vm.detach_network': {
      const r: VmNetworkResult | null = operation.result;
      return r ? `${r.server_id} left ${r.network_id}; ${r.ip} is free` : 'not detached yet';
    }
  }
}
