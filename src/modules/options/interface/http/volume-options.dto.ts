import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { VOLUME_TYPES, VolumeType } from '../../domain/catalog';

/** Query of GET /v1/volume-options. Unknown parameters are ignored. */
export class VolumeOptionsQuery {
  @ApiProperty({ description: 'A region id from GET /v1/regions', example: 'id-jkt' })
  @IsDefined({ message: 'region is required' })
  @IsString({ message: 'region must be a single string' })
  @IsNotEmpty({ message: 'region is required' })
  region: string;

  @ApiPropertyOptional({ enum: VOLUME_TYPES, default: 'premium', example: 'premium' })
  @IsOptional()
  @IsIn(VOLUME_TYPES, { message: 'type must be premium or ssd' })
  type?: VolumeType;
}
