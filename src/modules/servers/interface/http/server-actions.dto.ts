import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsBoolean, IsDefined, IsNotEmpty, IsString, Matches, ValidateIf } from 'class-validator';
import { Currency } from '../../../../shared/kernel/money/money';
import { TermMonths } from '../../../prepaid/domain/term';
import { CurrencyMember, RenewalCurrencyMember, TermMonthsMember } from '../../../prepaid/interface/http/term-members';
import { SERVER_NAME_PATTERN, SERVER_NAME_RULE } from '../../domain/server';
import { MAX_SSH_KEYS, MAX_USER_DATA_BYTES } from '../../domain/server-actions';
import { DeleteProtectionMember, LabelsMember } from '../../../prepaid/interface/http/label-members';
import { AutoRenewMember } from '../../../prepaid/interface/http/auto-renew-member';

/**
 * Body of POST /v1/servers (servers.md "Server and buying"). Unknown members are 400 naming them; the
 * checks that need the catalog, the SSH keys or the quote are the use case's (still 400s, before
 * the Idempotency-Key). class-validator runs a property's checks bottom-up: the type check sits below the value check.
 */
export class PurchaseServerBody {
  @ApiProperty({ description: `The hostname, unique among the organization's live servers: ${SERVER_NAME_RULE}`, example: 'web-2' })
  @Matches(SERVER_NAME_PATTERN, { message: `name must be ${SERVER_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${SERVER_NAME_RULE}` })
  @IsDefined({ message: 'name is required' })
  name: string;

  @ApiProperty({ description: 'A region selling servers (GET /v1/server-options)', example: 'id-jkt' })
  @IsNotEmpty({ message: 'region must not be empty' })
  @IsString({ message: 'region must be a string' })
  @IsDefined({ message: 'region is required' })
  region: string;

  @ApiProperty({ description: 'A plan sold in the region', example: 'cx1' })
  @IsNotEmpty({ message: 'plan must not be empty' })
  @IsString({ message: 'plan must be a string' })
  @IsDefined({ message: 'plan is required' })
  plan: string;

  @ApiProperty({ description: "An image id: the catalog's (GET /v1/server-options), or one of the organization's server images (img_…, GET /v1/images) in the region, no larger than the plan's boot disk (else 400 naming plan)", example: 'ubuntu-24.04' })
  @IsNotEmpty({ message: 'image must not be empty' })
  @IsString({ message: 'image must be a string' })
  @IsDefined({ message: 'image is required' })
  image: string;

  @TermMonthsMember("Months prepaid; one of the region's terms", 1)
  term_months: TermMonths;

  @CurrencyMember('The wallet balance that pays')
  currency: Currency;

  @ApiPropertyOptional({ description: 'A zone of the region. Default: the first available zone by id', example: 'id-jkt-a' })
  @IsNotEmpty({ message: 'zone must not be empty' })
  @IsString({ message: 'zone must be a string' })
  @ValidateIf((body: PurchaseServerBody) => body.zone !== undefined)
  zone?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_SSH_KEYS,
    description: `At most ${MAX_SSH_KEYS} distinct SSH key ids of the organization; their public keys are injected at creation`,
    example: ['ssh_4Lm9xQ2vR7tW1yZ3bN5cHd8K'],
  })
  // Checked by the use case (list, distinct, keys of the organization: 400 naming ssh_key_ids[i]).
  @Allow()
  @Transform(({ obj }: { obj: { ssh_key_ids?: unknown } }) => obj.ssh_key_ids)
  ssh_key_ids?: unknown;

  @ApiPropertyOptional({
    description: `Cloud-init user data: at most ${MAX_USER_DATA_BYTES} bytes of UTF-8, no NUL; "" means none. Never returned, logged or audited`,
    example: '#cloud-config\npackages: [nginx]\n',
  })
  @IsString({ message: `user_data must be a string of at most ${MAX_USER_DATA_BYTES} bytes` })
  @ValidateIf((body: PurchaseServerBody) => body.user_data !== undefined)
  user_data?: string;

  @LabelsMember((rules) => `${rules}. Default {}`, { env: 'prod' })
  labels?: Record<string, string>;

  @DeleteProtectionMember('While true, DELETE is refused. Default false', false)
  delete_protection?: boolean;

  @AutoRenewMember('Automatic renewal from the wallet before expires_at (term_months: a term the region sells). Default off')
  auto_renew?: unknown;

  @ApiPropertyOptional({ description: 'A server quote of POST /v1/quotes (at most 10 minutes old, unused): its price applies; every member it names must match', example: 'quo_4Lm9xQ2vR7tW1yZ3bN5cHd8K' })
  @IsNotEmpty({ message: 'quote_id must not be empty' })
  @IsString({ message: 'quote_id must be a string' })
  @ValidateIf((body: PurchaseServerBody) => body.quote_id !== undefined)
  quote_id?: string;
}

/** Body of POST /v1/servers/{id}/stop: none, {} or {force}. */
export class StopServerBody {
  @ApiPropertyOptional({ description: 'true: cut the power at once; false (default): ACPI shutdown, the guest gets 120 s to halt', example: false })
  @IsBoolean({ message: 'force must be true or false' })
  @ValidateIf((body: StopServerBody) => body.force !== undefined)
  force?: boolean;
}

/** Body of POST /v1/servers/{id}/reboot: none, {} or {hard}. */
export class RebootServerBody {
  @ApiPropertyOptional({ description: 'true: a hard reset; false (default): an ACPI reboot', example: false })
  @IsBoolean({ message: 'hard must be true or false' })
  @ValidateIf((body: RebootServerBody) => body.hard !== undefined)
  hard?: boolean;
}

/** Body of POST /v1/servers/{id}/renew. */
export class RenewServerBody {
  @TermMonthsMember('Months to add', 3)
  term_months: TermMonths;

  @RenewalCurrencyMember('server')
  currency?: Currency;
}

/** Body of POST /v1/servers/{id}/resize. */
export class ResizeServerBody {
  @ApiProperty({ description: "A plan sold in the server's region whose disk_gb is at least the server's (boot disks do not shrink)", example: 'cx2' })
  @IsNotEmpty({ message: 'plan must not be empty' })
  @IsString({ message: 'plan must be a string' })
  @IsDefined({ message: 'plan is required' })
  plan: string;

  @ApiPropertyOptional({ description: 'true: answer 200 with the price only; nothing reserved or changed', example: false })
  @IsBoolean({ message: 'dry_run must be true or false' })
  @ValidateIf((body: ResizeServerBody) => body.dry_run !== undefined)
  dry_run?: boolean;
}

/** Body of POST /v1/servers/{id}/rebuild. */
export class RebuildServerBody {
  @ApiProperty({ description: "An image id sold in the region (GET /v1/server-options), or one of the organization's server images (img_…) in the server's region, no larger than its boot disk (else 400 naming plan): the boot disk is reinstalled from it and its data lost", example: 'ubuntu-24.04' })
  @IsNotEmpty({ message: 'image must not be empty' })
  @IsString({ message: 'image must be a string' })
  @IsDefined({ message: 'image is required' })
  image: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_SSH_KEYS,
    description: `At most ${MAX_SSH_KEYS} distinct SSH key ids of the organization, injected into the new system and recorded as the server's keys; absent: the server's keys that still exist`,
    example: ['ssh_4Lm9xQ2vR7tW1yZ3bN5cHd8K'],
  })
  // Checked by the use case (list, distinct, keys of the organization: 400 naming ssh_key_ids[i]).
  @Allow()
  @Transform(({ obj }: { obj: { ssh_key_ids?: unknown } }) => obj.ssh_key_ids)
  ssh_key_ids?: unknown;

  @ApiPropertyOptional({
    description: `Cloud-init user data for the new system: at most ${MAX_USER_DATA_BYTES} bytes of UTF-8, no NUL; "" means none. Never returned, logged, audited or kept past the rebuild`,
    example: '#cloud-config\npackages: [nginx]\n',
  })
  @IsString({ message: `user_data must be a string of at most ${MAX_USER_DATA_BYTES} bytes` })
  @ValidateIf((body: RebuildServerBody) => body.user_data !== undefined)
  user_data?: string;
}
