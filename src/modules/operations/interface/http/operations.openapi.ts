import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODES, NULL_SCHEMA, SchemaClass, nullableRef, unionSchema } from '../../../../shared/http/openapi';
import { CURRENCIES } from '../../../../shared/kernel/money/money';
import { OPERATION_STATUSES } from '../../domain/operation';

/** The Operation of interface.md 2.3, for the OpenAPI document (examples: a renewal of vol_demodata1 of seeds/demo.json). */

const STEP_STATUSES = ['pending', 'running', 'succeeded', 'failed'];

@ApiSchema({ name: 'OperationStep' })
export class OperationStepResponse {
  @ApiProperty({ description: 'volume.create: payment_reserved, creating_volume, attaching (with a server), ready; volume.attach: attaching, mounting; volume.detach: unmounting, detaching; volume.delete: unmounting, detaching (when attached), deleting; volume.renew: renewing; vm.create: payment_reserved, creating_instance, booting, ready; vm.start: powering_on, booting; vm.stop: shutting_down or (force) powering_off; vm.reboot: rebooting or (hard) resetting, booting; vm.renew: renewing; vm.delete: detaching_volumes (with disks), deleting_instance; template.deploy: installing, configuring, starting_app; template.update: stopping_app, installing, configuring, starting_app; template.health: checking; template.remove: stopping_app, uninstalling; vm.suspend: powering_off; volume.suspend: unmounting, detaching (when attached) or suspending; volume.resize: payment_reserved, resizing; vm.resize: payment_reserved, resizing; vm.rebuild: rebuilding, booting; snapshot.create: payment_reserved, snapshotting; snapshot.renew: renewing; snapshot.delete: deleting; image.create: payment_reserved, imaging; image.renew: renewing; image.delete: deleting; ip.reserve: payment_reserved, allocating, assigning (with a server); ip.assign: assigning; ip.unassign: unassigning; ip.renew: renewing; ip.release: unassigning (when assigned), releasing; vm.attach_network: attaching_network; vm.detach_network: detaching_network', example: 'renewing' })
  name: string;

  @ApiProperty({ enum: STEP_STATUSES, example: 'running' })
  status: string;
}

@ApiSchema({ name: 'OperationError', description: 'Why a failed operation failed; the reserved credit was released' })
export class OperationErrorResponse {
  @ApiProperty({ enum: ERROR_CODES, example: 'invalid_state' })
  code: string;

  @ApiProperty({ example: 'Volume vol_demodata1 was deleted before the renewal ran' })
  message: string;
}

@ApiSchema({ name: 'Charge', description: 'An amount charged from the wallet: USD with five decimals, IDR whole rupiah' })
export class ChargeResponse {
  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;

  @ApiProperty({ example: '6.00000' })
  amount: string;
}

/**
 * The result schema of a succeeded renewal (`type`, e.g. volume.renew), named `name`: the
 * resource's id under `idField`, then term_months, expires_at and charged (in that order).
 */
function renewResult(type: string, name: string, idField: string, idExample: string): SchemaClass {
  @ApiSchema({ name, description: `result of a succeeded ${type}` })
  class RenewResult {}
  const members: [string, Parameters<typeof ApiProperty>[0]][] = [
    [idField, { type: String, example: idExample }],
    ['term_months', { type: 'integer', enum: [1, 3, 12], example: 3 }],
    ['expires_at', { type: String, format: 'date-time', description: 'The new end of the paid term', example: '2027-03-21T00:00:00.000Z' }],
    ['charged', { type: () => ChargeResponse }],
  ];
  for (const [key, options] of members) ApiProperty(options)(RenewResult.prototype, key);
  return RenewResult;
}

export const VolumeRenewResultResponse = renewResult('volume.renew', 'VolumeRenewResult', 'volume_id', 'vol_demodata1');

@ApiSchema({ name: 'SnapshotCreateResult', description: 'result of a succeeded snapshot.create' })
export class SnapshotCreateResultResponse {
  @ApiProperty({ example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  snapshot_id: string;

  @ApiProperty({ type: 'integer', description: "The snapshot's size: its disk's at the time", example: 100 })
  size_gb: number;

  @ApiProperty({ format: 'date-time', description: 'The end of the paid term: the success time + term_months', example: '2027-11-23T10:00:12.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ChargeResponse })
  charged: ChargeResponse;
}

export const SnapshotRenewResultResponse = renewResult('snapshot.renew', 'SnapshotRenewResult', 'snapshot_id', 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd');

@ApiSchema({ name: 'SnapshotDeleteResult', description: 'result of a succeeded snapshot.delete' })
export class SnapshotDeleteResultResponse {
  @ApiProperty({ example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  snapshot_id: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:05:00.000Z' })
  deleted_at: string;
}

@ApiSchema({ name: 'ImageCreateResult', description: 'result of a succeeded image.create' })
export class ImageCreateResultResponse {
  @ApiProperty({ example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  image_id: string;

  @ApiProperty({ type: 'integer', description: "The image's size: its server's boot disk at the time", example: 40 })
  disk_gb: number;

  @ApiProperty({ format: 'date-time', description: 'The end of the paid term: the success time + term_months', example: '2027-11-23T10:00:12.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ChargeResponse })
  charged: ChargeResponse;
}

export const ImageRenewResultResponse = renewResult('image.renew', 'ImageRenewResult', 'image_id', 'img_8fKq2LmX9vR4tW7yZ3bN5cHd');

@ApiSchema({ name: 'ImageDeleteResult', description: 'result of a succeeded image.delete' })
export class ImageDeleteResultResponse {
  @ApiProperty({ example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  image_id: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:05:00.000Z' })
  deleted_at: string;
}

@ApiSchema({ name: 'IpReserveResult', description: 'result of a succeeded ip.reserve' })
export class IpReserveResultResponse {
  @ApiProperty({ example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  reserved_ip_id: string;

  @ApiProperty({ example: '203.0.113.4' })
  ip: string;

  @ApiProperty({ type: String, nullable: true, description: 'The server it was assigned to at once; null when none was named', example: null })
  server_id: string | null;

  @ApiProperty({ format: 'date-time', description: 'The end of the paid term: the allocation time + term_months', example: '2026-12-23T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ChargeResponse })
  charged: ChargeResponse;
}

@ApiSchema({ name: 'IpAssignmentResult', description: 'result of a succeeded ip.assign (assigned true) or ip.unassign (assigned false; server_id the server it left)' })
export class IpAssignmentResultResponse {
  @ApiProperty({ example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  reserved_ip_id: string;

  @ApiProperty({ example: '203.0.113.4' })
  ip: string;

  @ApiProperty({ example: 'vm_demoweb1' })
  server_id: string;

  @ApiProperty({ example: true })
  assigned: boolean;
}

export const IpRenewResultResponse = renewResult('ip.renew', 'IpRenewResult', 'reserved_ip_id', 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd');

@ApiSchema({ name: 'IpReleaseResult', description: 'result of a succeeded ip.release: the address back in its region\'s pool (handed out again after IP_COOLDOWN_S)' })
export class IpReleaseResultResponse {
  @ApiProperty({ example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  reserved_ip_id: string;

  @ApiProperty({ example: '203.0.113.4' })
  ip: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:05:00.000Z' })
  released_at: string;
}

@ApiSchema({ name: 'VolumeCreateResult', description: 'result of a succeeded volume.create (a purchase)' })
export class VolumeCreateResultResponse {
  @ApiProperty({ example: 'vol_demodata1' })
  volume_id: string;

  @ApiProperty({ type: 'integer', example: 100 })
  size_gb: number;

  @ApiProperty({ format: 'date-time', description: 'The end of the paid term: the success time + term_months', example: '2027-11-23T10:00:12.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ChargeResponse })
  charged: ChargeResponse;
}

@ApiSchema({ name: 'VolumeActionResult', description: 'result of a succeeded volume.attach, volume.detach or volume.delete: the status the volume reached' })
export class VolumeActionResultResponse {
  @ApiProperty({ example: 'vol_demodata1' })
  volume_id: string;

  @ApiProperty({ enum: ['attached', 'available', 'deleted'], description: 'attached (attach), available (detach), deleted (delete)', example: 'attached' })
  status: string;
}

// Results of the server operations (servers.md "The compute provider and the operations").

@ApiSchema({ name: 'VmCreateResult', description: 'result of a succeeded vm.create (a server purchase)' })
export class VmCreateResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ description: 'The public IPv4 address the server got', example: '100.64.0.7' })
  ipv4: string;

  @ApiProperty({ format: 'date-time', description: 'The end of the paid term: the success time + term_months', example: '2027-11-23T10:00:12.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ChargeResponse })
  charged: ChargeResponse;
}

export const VmRenewResultResponse = renewResult('vm.renew', 'VmRenewResult', 'server_id', 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd');

@ApiSchema({ name: 'VmSuspendResult', description: 'result of a succeeded vm.suspend (the term ended): the instance is off' })
export class VmSuspendResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-21T00:00:03.000Z' })
  suspended_at: string;

  @ApiProperty({ format: 'date-time', description: 'When the server is released unless renewed', example: '2026-12-28T00:00:03.000Z' })
  release_at: string;

  @ApiProperty({ enum: ['running', 'stopped'], description: 'Whether it ran when its term ended (a renewal powers it on again if it did)', example: 'running' })
  power_before: string;
}

@ApiSchema({ name: 'VolumeSuspendResult', description: 'result of a succeeded volume.suspend (the term ended): the disk is detached from every server' })
export class VolumeSuspendResultResponse {
  @ApiProperty({ example: 'vol_demodata1' })
  volume_id: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-21T00:00:03.000Z' })
  suspended_at: string;

  @ApiProperty({ format: 'date-time', description: 'When the volume is released unless renewed', example: '2026-12-28T00:00:03.000Z' })
  release_at: string;

  @ApiProperty({ type: String, nullable: true, description: 'The server its suspension detached it from; null when it was available', example: 'vm_demoweb1' })
  previous_server_id: string | null;
}

@ApiSchema({ name: 'VmStartResult', description: 'result of a succeeded vm.start' })
export class VmStartResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ enum: ['running'], example: 'running' })
  status: string;
}

@ApiSchema({ name: 'VmStopResult', description: 'result of a succeeded vm.stop' })
export class VmStopResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ enum: ['stopped'], example: 'stopped' })
  status: string;

  @ApiProperty({ description: 'true: the power was cut (force); false: the guest halted after an ACPI shutdown', example: false })
  forced: boolean;
}

@ApiSchema({ name: 'VmRebootResult', description: 'result of a succeeded vm.reboot' })
export class VmRebootResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ enum: ['running'], example: 'running' })
  status: string;

  @ApiProperty({ description: 'true: a hard reset; false: an ACPI reboot', example: false })
  hard: boolean;
}

@ApiSchema({ name: 'VmDeleteResult', description: 'result of a succeeded vm.delete: the disks detached (kept, available) and when the server was deleted' })
export class VmDeleteResultResponse {
  @ApiProperty({ example: 'vm_demoweb1' })
  server_id: string;

  @ApiProperty({ type: [String], description: 'The disks the deletion detached (left available with their data and term), by id; [] when none', example: ['vol_demodata1'] })
  detached_volume_ids: string[];

  @ApiProperty({ format: 'date-time', example: '2026-11-27T10:00:05.000Z' })
  deleted_at: string;
}

@ApiSchema({ name: 'TemplateDeployResult', description: 'result of a succeeded template.deploy' })
export class TemplateDeployResultResponse {
  @ApiProperty({ example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  deployment_id: string;

  @ApiProperty({ example: 'wordpress' })
  template: string;

  @ApiProperty({ example: '6.6' })
  version: string;

  @ApiProperty({ enum: ['active'], example: 'active' })
  status: string;
}

@ApiSchema({ name: 'TemplateUpdateResult', description: 'result of a succeeded template.update' })
export class TemplateUpdateResultResponse {
  @ApiProperty({ example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  deployment_id: string;

  @ApiProperty({ example: '6.6' })
  version: string;

  @ApiProperty({ enum: ['active'], example: 'active' })
  status: string;
}

@ApiSchema({ name: 'TemplateHealthResult', description: 'result of a succeeded template.health' })
export class TemplateHealthResultResponse {
  @ApiProperty({ example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  deployment_id: string;

  @ApiProperty({ enum: ['healthy', 'unhealthy'], example: 'healthy' })
  health: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:03.000Z' })
  checked_at: string;
}

@ApiSchema({ name: 'TemplateRemoveResult', description: 'result of a succeeded template.remove' })
export class TemplateRemoveResultResponse {
  @ApiProperty({ example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  deployment_id: string;

  @ApiProperty({ enum: ['removed'], example: 'removed' })
  status: string;
}

@ApiSchema({ name: 'VolumeResizeResult', description: 'result of a succeeded volume.resize: the new size and what it was charged for the rest of the term' })
export class VolumeResizeResultResponse {
  @ApiProperty({ example: 'vol_demodata1' })
  volume_id: string;

  @ApiProperty({ type: 'integer', description: 'The size the disk was grown to', example: 200 })
  size_gb: number;

  @ApiProperty({ type: () => ChargeResponse })
  charged: ChargeResponse;
}

@ApiSchema({ name: 'VmResizeResult', description: "result of a succeeded vm.resize: the server's new plan and what it was charged for the rest of the term" })
export class VmResizeResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ example: 'cx2' })
  plan: string;

  @ApiProperty({ type: 'integer', example: 2 })
  vcpus: number;

  @ApiProperty({ type: 'integer', example: 4 })
  memory_gb: number;

  @ApiProperty({ type: 'integer', example: 80 })
  disk_gb: number;

  @ApiProperty({ type: () => ChargeResponse, description: 'Zero when the new plan costs no more than the price the server was bought at (nothing is refunded)' })
  charged: ChargeResponse;
}

@ApiSchema({ name: 'VmNetworkResult', description: "result of a succeeded vm.attach_network (the server attached at `ip`) or vm.detach_network (the address `ip` it had is free)" })
export class VmNetworkResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ example: 'net_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  network_id: string;

  @ApiProperty({ example: '10.10.0.3' })
  ip: string;
}

@ApiSchema({ name: 'VmRebuildResult', description: 'result of a succeeded vm.rebuild: the boot disk reinstalled from the image, the server running' })
export class VmRebuildResultResponse {
  @ApiProperty({ example: 'vm_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  server_id: string;

  @ApiProperty({ example: 'debian-12' })
  image: string;

  @ApiProperty({ enum: ['running'], example: 'running' })
  status: string;
}

/**
 * The operation types the service creates, each with the schema of its `result`: the enum of
 * Operation.type and the oneOf of Operation.result are made from this list. A new operation
 * type is one more entry (its result must be told apart from the others' by its required members).
 */
export const OPERATION_RESULTS: { type: string; result: SchemaClass }[] = [
  { type: 'volume.create', result: VolumeCreateResultResponse },
  { type: 'volume.attach', result: VolumeActionResultResponse },
  { type: 'volume.detach', result: VolumeActionResultResponse },
  { type: 'volume.delete', result: VolumeActionResultResponse },
  { type: 'volume.renew', result: VolumeRenewResultResponse },
  { type: 'vm.create', result: VmCreateResultResponse },
  { type: 'vm.start', result: VmStartResultResponse },
  { type: 'vm.stop', result: VmStopResultResponse },
  { type: 'vm.reboot', result: VmRebootResultResponse },
  { type: 'vm.renew', result: VmRenewResultResponse },
  { type: 'vm.delete', result: VmDeleteResultResponse },
  { type: 'vm.suspend', result: VmSuspendResultResponse },
  { type: 'volume.suspend', result: VolumeSuspendResultResponse },
  { type: 'snapshot.create', result: SnapshotCreateResultResponse },
  { type: 'snapshot.renew', result: SnapshotRenewResultResponse },
  { type: 'snapshot.delete', result: SnapshotDeleteResultResponse },
  { type: 'image.create', result: ImageCreateResultResponse },
  { type: 'image.renew', result: ImageRenewResultResponse },
  { type: 'image.delete', result: ImageDeleteResultResponse },
  { type: 'template.deploy', result: TemplateDeployResultResponse },
  { type: 'template.update', result: TemplateUpdateResultResponse },
  { type: 'template.health', result: TemplateHealthResultResponse },
  { type: 'template.remove', result: TemplateRemoveResultResponse },
  { type: 'volume.resize', result: VolumeResizeResultResponse },
  { type: 'vm.resize', result: VmResizeResultResponse },
  { type: 'vm.rebuild', result: VmRebuildResultResponse },
  { type: 'ip.reserve', result: IpReserveResultResponse },
  { type: 'ip.assign', result: IpAssignmentResultResponse },
  { type: 'ip.unassign', result: IpAssignmentResultResponse },
  { type: 'ip.renew', result: IpRenewResultResponse },
  { type: 'ip.release', result: IpReleaseResultResponse },
  { type: 'vm.attach_network', result: VmNetworkResultResponse },
  { type: 'vm.detach_network', result: VmNetworkResultResponse },
];
const RESULT_SCHEMAS = [...new Set(OPERATION_RESULTS.map((r) => r.result))];

@ApiExtraModels(...RESULT_SCHEMAS, OperationErrorResponse)
@ApiSchema({ name: 'Operation', description: 'Progress and outcome of an action that takes time; poll it until succeeded or failed' })
export class OperationResponse {
  @ApiProperty({ example: 'op_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ enum: OPERATION_RESULTS.map((r) => r.type), example: 'volume.renew' })
  type: string;

  @ApiProperty({ enum: OPERATION_STATUSES, example: 'pending' })
  status: string;

  @ApiProperty({ type: String, nullable: true, description: 'The server concerned (for a disk: the one it was attached to); null when none', example: 'vm_demoweb1' })
  vm_id: string | null;

  @ApiPropertyOptional({ description: 'Present on volume.* operations', example: 'vol_demodata1' })
  volume_id?: string;

  @ApiPropertyOptional({ description: 'Present on template.* operations', example: 'dep_4kQ9sLmX2vR7tW1yZ8bN3cHd' })
  deployment_id?: string;

  @ApiPropertyOptional({ description: 'Present on snapshot.* operations', example: 'snap_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  snapshot_id?: string;

  @ApiPropertyOptional({ description: 'Present on image.* operations', example: 'img_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  image_id?: string;

  @ApiPropertyOptional({ description: 'Present on ip.* operations', example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  reserved_ip_id?: string;

  @ApiProperty({ type: () => [OperationStepResponse], example: [{ name: 'renewing', status: 'running' }] })
  steps: OperationStepResponse[];

  @ApiProperty({
    oneOf: [...RESULT_SCHEMAS.map((r) => ({ $ref: getSchemaPath(r) })), NULL_SCHEMA],
    description: 'Outcome once succeeded, by type (volume.create: VolumeCreateResult; volume.attach, volume.detach, volume.delete: VolumeActionResult; volume.renew: VolumeRenewResult; vm.create: VmCreateResult; vm.start: VmStartResult; vm.stop: VmStopResult; vm.reboot: VmRebootResult; vm.renew: VmRenewResult; vm.delete: VmDeleteResult; vm.suspend: VmSuspendResult; volume.suspend: VolumeSuspendResult; template.*: Template<Type>Result; volume.resize: VolumeResizeResult; vm.resize: VmResizeResult; vm.rebuild: VmRebuildResult; snapshot.create: SnapshotCreateResult; snapshot.renew: SnapshotRenewResult; snapshot.delete: SnapshotDeleteResult; image.create: ImageCreateResult; image.renew: ImageRenewResult; image.delete: ImageDeleteResult; ip.reserve: IpReserveResult; ip.assign, ip.unassign: IpAssignmentResult; ip.renew: IpRenewResult; ip.release: IpReleaseResult; vm.attach_network, vm.detach_network: VmNetworkResult); null until then and when failed',
    example: null,
  })
  result: Record<string, unknown> | null;

  @ApiProperty({ ...nullableRef(OperationErrorResponse), description: 'Set when failed; null otherwise', example: null })
  error: OperationErrorResponse | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Null until the operation ends', example: null })
  finished_at: string | null;
}

/** `volume.create` -> VolumeCreateOperation. */
const variantName = (type: string): string => `${type.split(/[._]/).map((w) => w[0].toUpperCase() + w.slice(1)).join('')}Operation`;

/** The Operation of one type: `type` fixed to it, `result` that type's result (or null). */
function operationVariant(type: string, result: SchemaClass): SchemaClass {
  @ApiSchema({ name: variantName(type), description: `An operation of type ${type}` })
  class OperationVariant extends OperationResponse {
    @ApiProperty({ enum: [type], example: type })
    declare type: string;

    @ApiProperty({ ...nullableRef(result), description: 'Outcome once succeeded; null until then and when failed', example: null })
    declare result: Record<string, unknown> | null;
  }
  return OperationVariant;
}

/** One schema per operation type; `Operation` is their union, told apart by `type`. */
export const OPERATION_VARIANTS = OPERATION_RESULTS.map((r) => operationVariant(r.type, r.result));
unionSchema(
  'Operation',
  'Progress and outcome of an action that takes time; poll it until succeeded or failed. One schema per `type`, whose `result` is that type\'s.',
  OPERATION_VARIANTS,
);

@ApiExtraModels(...OPERATION_VARIANTS)
@ApiSchema({ name: 'OperationList' })
export class OperationListResponse {
  @ApiProperty({ type: () => [OperationResponse], description: 'Newest first' })
  operations: OperationResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

