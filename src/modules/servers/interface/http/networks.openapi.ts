import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Allow, IsNotEmpty, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { LABEL_KEY_RULE } from '../../../prepaid/domain/labels';
import { LabelsMember } from '../../../prepaid/interface/http/label-members';
import { NETWORK_NAME_PATTERN, NETWORK_NAME_RULE, Network } from '../../domain/network';

/** The Network of docs/reference/networks.md, every member present. */
export function presentNetwork(n: Network) {
  return {
    id: n.id,
    name: n.name,
    region: n.regionId,
    ip_range: n.ipRange,
    server_ids: [...n.serverIds],
    labels: { ...n.labels },
    created_at: n.createdAt.toISOString(),
  };
}

@ApiSchema({ name: 'Network', description: "A private IPv4 network of the organization in one region, joined by its servers there. Free" })
export class NetworkResponse {
  @ApiProperty({ example: 'net_demoprivate1' })
  id: string;

  @ApiProperty({ description: `${NETWORK_NAME_RULE}; unique among the organization's networks`, example: 'backend' })
  name: string;

  @ApiProperty({ example: 'id-jkt' })
  region: string;

  @ApiProperty({ description: 'An RFC 1918 IPv4 range of prefix /16 to /24', example: '10.10.0.0/16' })
  ip_range: string;

  @ApiProperty({ type: [String], description: 'The servers attached (being detached included), by id', example: ['vm_demoweb1'] })
  server_ids: string[];

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { env: 'prod' } })
  labels: Record<string, string>;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T00:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'NetworkList' })
export class NetworkListResponse {
  @ApiProperty({ type: () => [NetworkResponse], description: 'Networks passing the filters, newest first' })
  networks: NetworkResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  next_cursor: string | null;
}

export class CreateNetworkBody {
  @ApiProperty({ description: `${NETWORK_NAME_RULE}; unique among the organization's networks`, example: 'backend' })
  @Allow()
  name: string;

  @ApiProperty({ description: 'The region its servers are in', example: 'id-jkt' })
  @Allow()
  region: string;

  @ApiProperty({
    description: 'An IPv4 range inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16, prefix /16 to /24, given as its network address; it must not overlap another network of the organization in the region',
    example: '10.10.0.0/16',
  })
  @Allow()
  ip_range: string;

  @LabelsMember((rules) => rules, { env: 'prod' })
  labels?: Record<string, string>;
}

export class UpdateNetworkBody {
  @ApiPropertyOptional({ description: `New name: ${NETWORK_NAME_RULE}`, example: 'backend-2' })
  @Matches(NETWORK_NAME_PATTERN, { message: `name must be ${NETWORK_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${NETWORK_NAME_RULE}` })
  @ValidateIf((body: UpdateNetworkBody) => body.name !== undefined)
  name?: string;

  @LabelsMember((rules) => `Replaces the whole map ({} removes every label). ${rules}`, { env: 'prod' })
  labels?: Record<string, string>;
}

export class ListNetworksQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Page size', example: 50 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ description: 'Only networks in this region', example: 'id-jkt' })
  @IsOptional() @IsNotEmpty({ message: 'region must not be empty' }) @IsString({ message: 'region must be given once, as a string' }) region?: string;

  @ApiPropertyOptional({
    type: [String],
    description: `key=value (the value may be empty); repeat it for several labels, all of which must match. Keys: ${LABEL_KEY_RULE}`,
    example: ['env=prod'],
  })
  @IsOptional() @IsString({ each: true, message: 'label must be key=value' }) label?: string | string[];
}

export class AttachNetworkBody {
  @ApiProperty({ description: 'The network to join: of the organization, in the server\'s region', example: 'net_demoprivate1' })
  @IsNotEmpty({ message: 'network_id must be a network id' })
  @IsString({ message: 'network_id must be a network id' })
  network_id: string;

  @ApiPropertyOptional({
    description: "The server's address in the network: inside its range and free. Left out: the first free address after the range's first three",
    example: '10.10.0.5',
  })
  @IsOptional()
  @IsString({ message: 'ip must be one IPv4 address, e.g. 10.10.0.5' })
  ip?: string;
}

