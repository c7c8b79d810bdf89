import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsISO8601, IsOptional } from 'class-validator';
import { IsText } from '../../../common/validation/text-rules.js';
import { ALL_SCOPES } from '../../principal.js';

export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'ci pipeline' })
  @IsText({ minLength: 1, maxLength: 100, requireVisible: true, forbidden: 'control' })
  name: string;

  @ApiProperty({ type: [String], enum: ALL_SCOPES, example: ['posts:read'] })
  @IsArray({ message: 'scopes must be an array of scope names' })
  @ArrayMinSize(1, { message: 'scopes must name at least one scope' })
  @ArrayMaxSize(ALL_SCOPES.length, { message: `scopes may name at most ${ALL_SCOPES.length} scopes` })
  @IsIn(ALL_SCOPES, { each: true, message: `each scope must be one of ${ALL_SCOPES.join(', ')}` })
  scopes: string[];

  @ApiPropertyOptional({ format: 'date-time', description: 'Must be in the future; none: the key never expires' })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true }, { message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string;
}
