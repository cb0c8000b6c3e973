import { ApiExtraModels, ApiProperty, ApiSchema } from '@nestjs/swagger';
import { nullableRef } from '../../../../shared/http/openapi';
import { AutoRenewResponse, BillingResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { PricePerMonthSchema } from '../../../options/interface/http/server-options.openapi';
import { SERVER_STATUSES } from '../../domain/server';
import { OperationResponse } from '../../../operations/interface/http/operations.openapi';

/** Response bodies of the servers routes, for the OpenAPI document (examples: seeds/demo.json). */

@ApiSchema({ name: 'ServerReservedIp', description: "The server's reserved address (GET /v1/reserved-ips/{id}), reachable beside its own ipv4" })
export class ServerReservedIpResponse {
  @ApiProperty({ example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ example: '203.0.113.4' })
  ip: string;
}

@ApiSchema({ name: 'ServerPrivateNetwork', description: "A server's address in one of the organization's private networks" })
export class ServerPrivateNetworkResponse {
  @ApiProperty({ example: 'net_demoprivate1' })
  network_id: string;

  @ApiProperty({ description: "The server's private IPv4 address in the network's range", example: '10.10.0.4' })
  ip: string;
}

@ApiExtraModels(BillingResponse, PricePerMonthSchema, ServerReservedIpResponse)
@ApiSchema({ name: 'Server', description: 'A virtual private server. A seeded server shows null plan, specs, image, term, billing, price and expiry' })
export class ServerResponse {
  @ApiProperty({ example: 'vm_demoweb1' })
  id: string;

  @ApiProperty({ description: 'The hostname: 1 to 63 letters, digits, "." or "-", alphanumeric first and last; unique among the live servers of the organization', example: 'web-1' })
  name: string;

  @ApiProperty({ enum: SERVER_STATUSES, example: 'running' })
  status: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ example: 'id-jkt-a' })
  zone: string;

  @ApiProperty({ type: String, nullable: true, description: 'The plan bought; null for a seeded server', example: 'cx1' })
  plan: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Frozen at purchase', example: 1 })
  vcpus: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Frozen at purchase', example: 2 })
  memory_gb: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The boot disk, frozen at purchase', example: 40 })
  disk_gb: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'ubuntu-24.04' })
  image: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Null until the server is ready, and after deletion; kept through stop and start', example: '100.64.0.1' })
  ipv4: string | null;

  @ApiProperty({ ...nullableRef(ServerReservedIpResponse), description: 'Its reserved address (POST /v1/reserved-ips/{id}/assign), reachable beside ipv4; null when none' })
  reserved_ip: ServerReservedIpResponse | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The first address (::1) of the server's own /64, taken from its region's IPv6 prefix when the server is created; the whole /64 is routed to it. Free; null after deletion",
    example: '2001:db8:10:1::1',
  })
  ipv6: string | null;

  @ApiProperty({ type: () => [ServerPrivateNetworkResponse], description: 'The private networks it is attached to, with its address in each (at most 3)' })
  private_networks: ServerPrivateNetworkResponse[];

  @ApiProperty({ type: 'integer', nullable: true, description: 'The current term in months: 1, 3 or 12; null for a seeded server', example: 1 })
  term_months: number | null;

  @ApiProperty({ ...nullableRef(BillingResponse), description: 'What the current term cost' })
  billing: BillingResponse | null;

  @ApiProperty({ ...nullableRef(PricePerMonthSchema), description: 'The monthly price the server was bought at (renewals use it)' })
  price_per_month: PricePerMonthSchema | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2026-12-21T00:00:00.000Z' })
  expires_at: string | null;

  @ApiProperty({ type: () => AutoRenewResponse, description: 'Off, and never on, for a seeded server without a term' })
  auto_renew: AutoRenewResponse;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When its term ended and it was suspended; null unless suspended', example: null })
  suspended_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it is released (deleted) unless renewed: suspended_at + the retention; null unless suspended', example: null })
  release_at: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { env: 'prod' } })
  labels: Record<string, string>;

  @ApiProperty({ example: false })
  delete_protection: boolean;

  @ApiProperty({ type: [String], description: 'Its live volumes, by id', example: ['vol_demodata1'] })
  volume_ids: string[];

  @ApiProperty({
    type: [String],
    description: 'The SSH keys given at purchase, by id, in the order given (a key deleted since keeps its id here); empty when none were given',
    example: ['ssh_demokey1'],
  })
  ssh_key_ids: string[];

  @ApiProperty({ format: 'date-time', example: '2026-11-21T00:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  deleted_at: string | null;

  @ApiProperty({ type: String, enum: ['customer', 'expired', 'purchase_failed', null], nullable: true, description: 'Why it was deleted: its owner, its term ended unrenewed, its purchase failed; null while live', example: null })
  deleted_reason: string | null;
}

@ApiSchema({ name: 'ServerList' })
export class ServerListResponse {
  @ApiProperty({ type: () => [ServerResponse], description: 'Servers passing the filters (without status: not deleted), newest first' })
  servers: ServerResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

/** DELETE /v1/servers/{id}: the server as it is now (`deleting`) and the vm.delete operation to poll. */
@ApiSchema({ name: 'ServerDeletion', description: 'The deletion accepted: the server as it is now (deleting), and the vm.delete operation to poll (also in Location)' })
export class ServerDeletionResponse {
  @ApiProperty({ type: () => ServerResponse })
  server: ServerResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}

/** 202 of POST /v1/servers and of the server actions (start, stop, reboot, renew). */
@ApiSchema({ name: 'ServerAction', description: 'An accepted server action: the server as it is now and the operation to poll' })
export class ServerActionResponse {
  @ApiProperty({ type: () => ServerResponse })
  server: ServerResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}
