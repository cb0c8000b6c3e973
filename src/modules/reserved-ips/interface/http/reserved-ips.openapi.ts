import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { RENEWAL_TERMS } from '../../../prepaid/domain/term';
import { BillingResponse } from '../../../prepaid/interface/http/prepaid.openapi';
import { OperationResponse } from '../../../operations/interface/http/operations.openapi';
import { PricePerMonthSchema } from '../../../options/interface/http/server-options.openapi';
import { RESERVED_IP_STATUSES } from '../../domain/reserved-ip';

@ApiSchema({ name: 'ReservedIpAutoRenew', description: 'Automatic renewal of a reserved address: when enabled, it is renewed from the wallet when its term ends' })
export class ReservedIpAutoRenewResponse {
  @ApiProperty({ example: false })
  enabled: boolean;

  @ApiProperty({ type: 'integer', enum: [...RENEWAL_TERMS, null], nullable: true, description: "The term each automatic renewal buys; null: the address's own term_months", example: null })
  term_months: number | null;
}

@ApiSchema({
  name: 'ReservedIp',
  description:
    "A reserved IPv4 address: one address of its region's pool, prepaid for a term at the region's reserved_ipv4_price_per_month, " +
    "assignable to one of the organization's servers in that region at a time (reachable beside the server's own ipv4) and kept when the server goes",
})
export class ReservedIpResponse {
  @ApiProperty({ example: 'rip_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ example: '203.0.113.4' })
  ip: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ type: String, nullable: true, description: 'The server it is assigned to (status assigned); null otherwise', example: 'vm_demoweb1' })
  server_id: string | null;

  @ApiProperty({ enum: RESERVED_IP_STATUSES, example: 'assigned' })
  status: string;

  @ApiProperty({ type: 'integer', enum: RENEWAL_TERMS, example: 1 })
  term_months: number;

  @ApiProperty({ type: () => BillingResponse })
  billing: BillingResponse;

  @ApiProperty({ type: () => PricePerMonthSchema, description: "The region's monthly price when it was reserved, frozen for its renewals" })
  price_per_month: PricePerMonthSchema;

  @ApiProperty({ format: 'date-time', description: 'End of the paid term (recomputed when the address is allocated)', example: '2026-12-23T10:00:00.000Z' })
  expires_at: string;

  @ApiProperty({ type: () => ReservedIpAutoRenewResponse })
  auto_renew: ReservedIpAutoRenewResponse;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { role: 'ingress' } })
  labels: Record<string, string>;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Set while suspended (its term ended)', example: null })
  suspended_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a suspended address is released unless renewed', example: null })
  release_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  released_at: string | null;

  @ApiProperty({ type: String, enum: ['customer', 'expired', 'purchase_failed', null], nullable: true, example: null })
  released_reason: string | null;
}

@ApiSchema({ name: 'ReservedIpList' })
export class ReservedIpListResponse {
  @ApiProperty({ type: () => [ReservedIpResponse], description: 'Newest first' })
  reserved_ips: ReservedIpResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

@ApiSchema({ name: 'ReservedIpAction', description: 'The action accepted: the reserved address as it is now, and the operation to poll (also in Location)' })
export class ReservedIpActionResponse {
  @ApiProperty({ type: () => ReservedIpResponse })
  reserved_ip: ReservedIpResponse;

  @ApiProperty({ type: () => OperationResponse })
  operation: OperationResponse;
}
