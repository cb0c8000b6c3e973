import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Allow, IsOptional, IsString } from 'class-validator';
import { DIRECTIONS, MAX_ADDRESSES, MAX_DESCRIPTION_LENGTH, PROTOCOLS } from '../../domain/firewall-rule';
import { MAX_PUBLIC_KEY_LENGTH, MAX_SSH_KEY_NAME_LENGTH } from '../../domain/ssh-public-key';

/**
 * Bodies, queries and answers of /v1/ssh-keys, /v1/firewall-rules and /v1/servers/{id}/firewall.
 * Bodies pass their members through (@Allow): the domain validates them (ssh-public-key.ts,
 * firewall-rule.ts) and names the member in the 400, before any Idempotency-Key check.
 */

const EXAMPLE_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g x@y';
const single = (name: string) => `${name} must be given once, as a string`;

export class CreateSshKeyBody {
  @ApiProperty({ description: `1 to ${MAX_SSH_KEY_NAME_LENGTH} characters, not blank, without control characters; unique in the organization`, example: 'laptop' })
  @Allow()
  name: string;

  @ApiProperty({
    maxLength: MAX_PUBLIC_KEY_LENGTH,
    description:
      'One OpenSSH public key line, `<type> <base64>[ <comment>]`: ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ' +
      'ecdsa-sha2-nistp521, or ssh-rsa of 2048 bits or more. Stored trimmed with single spaces between fields.',
    example: EXAMPLE_KEY,
  })
  @Allow()
  public_key: string;
}

export class UpdateSshKeyBody {
  @ApiProperty({ description: `The new name: 1 to ${MAX_SSH_KEY_NAME_LENGTH} characters, not blank, without control characters`, example: 'work laptop' })
  @Allow()
  name: string;
}

export class ListSshKeysQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
  @ApiPropertyOptional({ description: 'Only the key with this fingerprint', example: 'SHA256:mKqU+0K8OhKmA8bBQi9Rz0Q5l7/g160hIP+rJYSTNj4' })
  @IsOptional() @IsString({ message: single('fingerprint') }) fingerprint?: string;
  @ApiPropertyOptional({ description: 'Only the key with this exact name', example: 'laptop' })
  @IsOptional() @IsString({ message: single('name') }) name?: string;
}

@ApiSchema({ name: 'SshKey', description: 'An SSH public key of the organization, injected into servers at their creation' })
export class SshKeyResponse {
  @ApiProperty({ example: 'ssh_4fTq9LmX2vR8tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ example: 'laptop' })
  name: string;

  @ApiProperty({ description: 'As `ssh-keygen -l` prints it: SHA256: and the unpadded base64 of the SHA-256 of the key blob', example: 'SHA256:mKqU+0K8OhKmA8bBQi9Rz0Q5l7/g160hIP+rJYSTNj4' })
  fingerprint: string;

  @ApiProperty({ description: 'The OpenSSH line as stored', example: EXAMPLE_KEY })
  public_key: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T10:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'SshKeyList', description: 'A page of SSH keys, newest first' })
export class SshKeyListResponse {
  @ApiProperty({ type: () => [SshKeyResponse] })
  ssh_keys: SshKeyResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}

const CIDRS = `1 to ${MAX_ADDRESSES} IPv4 or IPv6 addresses or CIDRs (a bare address is /32 or /128)`;

export class CreateFirewallRuleBody {
  @ApiProperty({ enum: DIRECTIONS, example: 'in' })
  @Allow()
  direction: string;

  @ApiProperty({ enum: PROTOCOLS, description: 'icmp: every ICMP type', example: 'tcp' })
  @Allow()
  protocol: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: '"N" or "N-M", 1 ≤ N ≤ M ≤ 65535, no leading zeros: required for tcp and udp, absent or null for icmp', example: '22' })
  @Allow()
  port?: string | null;

  @ApiPropertyOptional({ type: [String], nullable: true, description: `in rules (required): ${CIDRS}; out rules: absent, null or []`, example: ['203.0.113.0/24'] })
  @Allow()
  sources?: string[] | null;

  @ApiPropertyOptional({ type: [String], nullable: true, description: `out rules (required): ${CIDRS}; in rules: absent, null or []` })
  @Allow()
  destinations?: string[] | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'A live server of the organization; absent or null: every server, now and later', example: 'vm_demoweb1' })
  @Allow()
  server_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_DESCRIPTION_LENGTH, description: 'Free text; not part of what makes two rules the same', example: 'SSH from the office' })
  @Allow()
  description?: string | null;
}

export class ListFirewallRulesQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;
  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;
  @ApiPropertyOptional({ description: "Only this server's own rules (not the organization-wide ones)", example: 'vm_demoweb1' })
  @IsOptional() @IsString({ message: single('server_id') }) server_id?: string;
}

export class FirewallPacketQuery {
  @ApiPropertyOptional({ enum: DIRECTIONS, description: 'For a verdict: the packet comes in to the server or goes out of it' })
  @IsOptional() @IsString({ message: single('direction') }) direction?: string;
  @ApiPropertyOptional({ enum: PROTOCOLS, description: 'For a verdict' })
  @IsOptional() @IsString({ message: single('protocol') }) protocol?: string;
  @ApiPropertyOptional({ description: 'For a verdict: the remote address (the source of an inbound packet, the destination of an outbound one)', example: '203.0.113.9' })
  @IsOptional() @IsString({ message: single('address') }) address?: string;
  @ApiPropertyOptional({ description: 'For a verdict on tcp or udp: the port, 1 to 65535', example: '22' })
  @IsOptional() @IsString({ message: single('port') }) port?: string;
}

@ApiSchema({ name: 'FirewallRule', description: 'An allow rule, in canonical form (host bits cleared, RFC 5952 IPv6, addresses sorted and de-duplicated)' })
export class FirewallRuleResponse {
  @ApiProperty({ example: 'fwr_7hTq2LmX9vR4tW7yZ3bN5cHd' })
  id: string;

  @ApiProperty({ enum: DIRECTIONS, example: 'in' })
  direction: string;

  @ApiProperty({ enum: PROTOCOLS, example: 'tcp' })
  protocol: string;

  @ApiProperty({ type: String, nullable: true, description: '"N" or "N-M"; null for icmp', example: '22' })
  port: string | null;

  @ApiProperty({ type: [String], description: 'in rules: the allowed sources; out rules: []', example: ['10.0.0.0/8', '2001:db8::/32'] })
  sources: string[];

  @ApiProperty({ type: [String], description: 'out rules: the allowed destinations; in rules: []', example: [] })
  destinations: string[];

  @ApiProperty({ type: String, nullable: true, description: 'The server the rule applies to; null: every server of the organization', example: null })
  server_id: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'SSH from the office' })
  description: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T10:00:00.000Z' })
  created_at: string;
}

@ApiSchema({ name: 'FirewallRuleList', description: 'A page of firewall rules, oldest first' })
export class FirewallRuleListResponse {
  @ApiProperty({ type: () => [FirewallRuleResponse] })
  firewall_rules: FirewallRuleResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}

@ApiSchema({ name: 'FirewallVerdict', description: 'Whether the rules in force let the packet through' })
export class FirewallVerdictResponse {
  @ApiProperty({ example: true })
  allowed: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'The oldest rule that allows the packet; null when denied, or allowed by the outbound default', example: 'fwr_7hTq2LmX9vR4tW7yZ3bN5cHd' })
  rule_id: string | null;
}

@ApiSchema({ name: 'ServerFirewall', description: "The rules in force on a server (the organization-wide ones and its own, oldest first) and the defaults" })
export class ServerFirewallResponse {
  @ApiProperty({ example: 'vm_demoweb1' })
  server_id: string;

  @ApiProperty({ enum: ['deny'], description: 'Inbound is denied unless an in rule allows' })
  inbound_default: string;

  @ApiProperty({ enum: ['allow', 'deny'], description: 'allow while no out rule is in force; deny once one is (then only what out rules allow)' })
  outbound_default: string;

  @ApiProperty({ type: () => [FirewallRuleResponse] })
  rules: FirewallRuleResponse[];

  @ApiPropertyOptional({ type: () => FirewallVerdictResponse, description: 'Given direction, protocol, address and (tcp, udp) port' })
  verdict?: FirewallVerdictResponse;
}
