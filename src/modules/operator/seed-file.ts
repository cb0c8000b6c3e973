import { Type } from 'class-transformer';
import {
  ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Length, Matches, Min,
  ValidateNested, ValidationError, validateSync,
} from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { invalidRequest } from '../../shared/kernel/errors/domain-error';
import { SCOPES } from '../auth/domain/principal';
import { firstValidationError, nulCharacterPath } from '../../shared/http/validation.pipe';
import { VOLUME_NAME_PATTERN, VOLUME_NAME_RULE } from '../volumes/domain/volume-attributes';
import { SERVER_NAME_PATTERN, SERVER_NAME_RULE } from '../servers/domain/server';
import { VARIABLE_NAME_PATTERN, VARIABLE_NAME_RULE } from '../templates/domain/template';

const ID = /^[A-Za-z0-9_.-]{1,100}$/;
const prefixed = (prefix: string) => new RegExp(`^${prefix}_[A-Za-z0-9_.-]{1,100}$`);

class SeedPrice {
  @IsString() USD: string;
  @IsString() IDR: string;
}

class SeedZone {
  @IsString() @Matches(ID, { message: 'id must be 1 to 100 of A-Z a-z 0-9 _ . -' }) id: string;
  @IsBoolean() available: boolean;
}

class SeedOffer {
  @IsIn(['premium', 'ssd']) type: 'premium' | 'ssd';
  @IsInt() @Min(1) min_gb: number;
  @IsInt() @Min(1) max_gb: number;
  @IsInt() @Min(1) step_gb: number;
  @IsArray() @ArrayMinSize(1) @IsIn([1, 3, 12], { each: true, message: 'terms must hold only 1, 3 or 12' }) terms: number[];
  @IsInt() @Min(0) per_server_limit: number;
  @IsObject() @ValidateNested() @Type(() => SeedPrice) price_per_gb_month: SeedPrice;
}

class SeedServerOfferPlan {
  @IsString() @Matches(ID, { message: 'plan must be 1 to 100 of A-Z a-z 0-9 _ . -' }) plan: string;
  @IsObject() @ValidateNested() @Type(() => SeedPrice) price_per_month: SeedPrice;
}

/** Optional: a region without it sells no servers. */
class SeedServerOffer {
  @IsInt() @Min(0) vcpu_capacity: number;
  @IsArray() @ArrayMinSize(1) @IsIn([1, 3, 12], { each: true, message: 'terms must hold only 1, 3 or 12' }) terms: number[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedServerOfferPlan) plans: SeedServerOfferPlan[];
}

class SeedServerPlan {
  @IsString() @Matches(ID, { message: 'id must be 1 to 100 of A-Z a-z 0-9 _ . -' }) id: string;
  @IsInt() @Min(1) vcpus: number;
  @IsInt() @Min(1) memory_gb: number;
  @IsInt() @Min(1) disk_gb: number;
}

class SeedImage {
  @IsString() @Matches(ID, { message: 'id must be 1 to 100 of A-Z a-z 0-9 _ . -' }) id: string;
  @IsString() @Length(1, 200) name: string;
  @IsIn(['system', 'app'], { message: 'type must be system or app' }) type: 'system' | 'app';
}

class SeedTemplateVariable {
  @IsString() @Matches(VARIABLE_NAME_PATTERN, { message: `name must be ${VARIABLE_NAME_RULE}` }) name: string;
  @IsString() @Length(0, 500) description: string;
  @IsBoolean() required: boolean;
  @IsBoolean() secret: boolean;
}

/** Read by the simulated compute provider only. */
class SeedTemplateSimulation {
  @IsOptional() @IsIn(['ok', 'fail'], { message: 'deploy must be ok or fail' }) deploy?: 'ok' | 'fail';
  @IsOptional() @IsIn(['healthy', 'unhealthy'], { message: 'health must be healthy or unhealthy' }) health?: 'healthy' | 'unhealthy';
}

class SeedTemplate {
  @IsString() @Matches(ID, { message: 'id must be 1 to 100 of A-Z a-z 0-9 _ . -' }) id: string;
  @IsString() @Length(1, 200) name: string;
  @IsArray() @ArrayMinSize(1) @IsString({ each: true }) @Length(1, 100, { each: true }) versions: string[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedTemplateVariable) variables: SeedTemplateVariable[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SeedTemplateSimulation) simulate?: SeedTemplateSimulation;
}

class SeedRegion {
  @IsString() @Matches(ID, { message: 'id must be 1 to 100 of A-Z a-z 0-9 _ . -' }) id: string;
  @IsString() @Length(1, 200) name: string;
  @IsInt() @Min(0) capacity_gb: number;
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedZone) zones: SeedZone[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedOffer) volume_offers: SeedOffer[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SeedServerOffer) server_offer?: SeedServerOffer;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SeedPrice) snapshot_price_per_gb_month?: SeedPrice;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SeedPrice) reserved_ipv4_price_per_month?: SeedPrice;
  /** CIDR blocks (reserved-ipv4-pool.ts); given with reserved_ipv4_price_per_month, or neither. */
  @IsOptional() @IsArray() @ArrayMinSize(1) @IsString({ each: true }) reserved_ipv4_pool?: string[];
  /** The region's IPv6 /48 (checked by the loader); absent: the next free one of 2001:db8::/32. */
  @IsOptional() @IsString() ipv6_prefix?: string;
}

class SeedMember {
  @IsString() @Length(3, 254) email: string;
  /** Checked (8 to 200 characters) only for a user the seed creates: an existing user's password is ignored (seed-format.md). */
  @IsString() password: string;
  @IsIn(['owner', 'admin', 'developer', 'viewer']) role: 'owner' | 'admin' | 'developer' | 'viewer';
}

class SeedApiKey {
  @IsString() @Length(1, 100) name: string;
  @IsArray() @ArrayMinSize(1) @IsIn(SCOPES, { each: true, message: `scopes must hold only ${SCOPES.join(', ')}` }) scopes: string[];
  @IsOptional() @IsString() @Matches(/^cds_live_[A-Za-z0-9]{32,128}$/, { message: 'token must be cds_live_ followed by at least 32 letters or digits' }) token?: string;
}

export class SeedServer {
  @IsOptional() @IsString() @Matches(prefixed('vm'), { message: 'id must begin with vm_' }) id?: string;
  @IsString() @Matches(SERVER_NAME_PATTERN, { message: `name must be ${SERVER_NAME_RULE}` }) name: string;
  @IsString() region: string;
  @IsString() zone: string;
  /** terms.md: with `plan`, a bought server (`image`, `term_months` and `currency` then required). */
  @IsOptional() @IsString() plan?: string;
  @IsOptional() @IsString() image?: string;
  @IsOptional() @IsIn([1, 3, 12]) term_months?: 1 | 3 | 12;
  @IsOptional() @IsIn(['USD', 'IDR']) currency?: 'USD' | 'IDR';
  @IsOptional() @IsISO8601({ strict: true }) expires_at?: string;
  /** terms.md: `{enabled, term_months?}`, checked as a purchase's. */
  @IsOptional() @IsObject() auto_renew?: unknown;
}

class SeedVolume {
  @IsOptional() @IsString() @Matches(prefixed('vol'), { message: 'id must begin with vol_' }) id?: string;
  @IsString() @Matches(VOLUME_NAME_PATTERN, { message: `name must be ${VOLUME_NAME_RULE}` }) name: string;
  @IsIn(['premium', 'ssd']) type: 'premium' | 'ssd';
  @IsString() region: string;
  @IsString() zone: string;
  @IsInt() @Min(1) size_gb: number;
  @IsIn([1, 3, 12]) term_months: 1 | 3 | 12;
  @IsIn(['USD', 'IDR']) currency: 'USD' | 'IDR';
  @IsOptional() @IsString() server?: string;
  @IsOptional() @IsString() mount_path?: string;
  @IsOptional() @IsISO8601({ strict: true }) expires_at?: string;
  @IsOptional() @IsString() note?: string | null;
  /** terms.md: `{enabled, term_months?}`, checked as a purchase's. */
  @IsOptional() @IsObject() auto_renew?: unknown;
}

/** Opening balances: decimal strings, never JSON numbers (money is never a float). */
class SeedWallet {
  @IsOptional() @IsString({ message: 'USD must be a decimal string such as "100.00000"' }) USD?: string;
  @IsOptional() @IsString({ message: 'IDR must be a whole number of rupiah as a string such as "1500000"' }) IDR?: string;
}

class SeedOrganization {
  @IsOptional() @IsString() @Matches(prefixed('org'), { message: 'id must begin with org_' }) id?: string;
  @IsString() @Length(1, 200) name: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SeedWallet) wallet?: SeedWallet;
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedMember) members: SeedMember[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedApiKey) api_keys: SeedApiKey[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedServer) servers: SeedServer[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedVolume) volumes: SeedVolume[];
}

export class SeedFile {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => SeedServerPlan) server_plans?: SeedServerPlan[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => SeedImage) images?: SeedImage[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => SeedTemplate) templates?: SeedTemplate[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedRegion) regions: SeedRegion[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => SeedOrganization) organizations: SeedOrganization[];
}

export type { SeedOrganization, SeedRegion, SeedTemplate, SeedVolume };

/** Parses and checks a seed file (seed-format.md); the first problem names its path. */
export function parseSeedFile(text: string): SeedFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalidRequest('The seed file is not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidRequest('The seed file must hold a JSON object');
  const seed = plainToInstance(SeedFile, raw);
  const errors: ValidationError[] = validateSync(seed, { forbidUnknownValues: false });
  const first = firstValidationError(errors);
  if (first) throw invalidRequest(`Seed file: ${first.message}`, { field: first.field });
  // PostgreSQL text cannot hold NUL: refused here rather than failing the load with a database error.
  const nulAt = nulCharacterPath(raw);
  if (nulAt !== undefined) throw invalidRequest(`Seed file: ${nulAt} must not contain NUL (\\u0000) characters`, { field: nulAt });
  return seed;
}
