import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { Currency } from '../../../../shared/kernel/money/money';
import { TermMonths } from '../../../prepaid/domain/term';
import { AutoRenewMember } from '../../../prepaid/interface/http/auto-renew-member';
import { LabelsMember } from '../../../prepaid/interface/http/label-members';
import { CurrencyMember, RenewalCurrencyMember, TermMonthsMember } from '../../../prepaid/interface/http/term-members';
import { IMAGE_LIST_TYPES, IMAGE_NAME_PATTERN, IMAGE_NAME_RULE, ImageListType } from '../../domain/image';

/** Body of POST /v1/servers/{id}/images. Unknown members are 400 naming them. */
export class CreateImageBody {
  @ApiProperty({ description: IMAGE_NAME_RULE, example: 'web-golden' })
  @Matches(IMAGE_NAME_PATTERN, { message: `name must be ${IMAGE_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${IMAGE_NAME_RULE}` })
  @IsDefined({ message: 'name is required' })
  name: string;

  @TermMonthsMember('Months prepaid', 1)
  term_months: TermMonths;

  @CurrencyMember('The wallet balance that pays')
  currency: Currency;

  @LabelsMember((rules) => `${rules}. Default {}`, { role: 'web' })
  labels?: Record<string, string>;
}

/** Body of POST /v1/images/{id}/renew. */
export class RenewImageBody {
  @TermMonthsMember('Months to add', 3)
  term_months: TermMonths;

  @RenewalCurrencyMember('image')
  currency?: Currency;
}

/** Body of PATCH /v1/images/{id}: every member optional. */
export class UpdateImageBody {
  @ApiPropertyOptional({ description: IMAGE_NAME_RULE, example: 'web-golden-2' })
  @Matches(IMAGE_NAME_PATTERN, { message: `name must be ${IMAGE_NAME_RULE}` })
  @IsString({ message: `name must be a string: ${IMAGE_NAME_RULE}` })
  @ValidateIf((body: UpdateImageBody) => body.name !== undefined)
  name?: string;

  @LabelsMember((rules) => `Replaces the whole map ({} removes every label). ${rules}`, { role: 'web' })
  labels?: Record<string, string>;

  @AutoRenewMember('Turns automatic renewal on or off; term_months left out keeps the current one')
  auto_renew?: unknown;
}

const single = (name: string) => `${name} must be given once, as a string`;

/** Query of GET /v1/images. Unknown parameters are ignored. */
export class ListImagesQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size', example: 20 })
  @IsOptional() @IsString({ message: 'limit must be a whole number from 1 to 100' }) limit?: string;

  @ApiPropertyOptional({ description: 'The next_cursor of the previous page' })
  @IsOptional() @IsString({ message: 'cursor must be the next_cursor of a previous page' }) cursor?: string;

  @ApiPropertyOptional({ enum: IMAGE_LIST_TYPES, description: "Only images of this type: system and app are the catalog's, snapshot the organization's own" })
  @IsOptional()
  @IsIn(IMAGE_LIST_TYPES, { message: `type must be one of ${IMAGE_LIST_TYPES.join(', ')}` })
  @IsString({ message: single('type') })
  type?: ImageListType;
}
