import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, ValidateIf } from 'class-validator';
import { IsDateTime } from '../../../common/validation/date-time.js';
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
  // Absent means no expiry; null is not absent (IsOptional would let it through as "never expires").
  @ValidateIf((dto: CreateApiKeyDto) => dto.expiresAt !== undefined)
  // RFC 3339 only: class-validator's IsISO8601 also passes week dates and the basic format, which
  // Date cannot read (they were stored as an Invalid Date).
  @IsDateTime()
  expiresAt?: string;
}
