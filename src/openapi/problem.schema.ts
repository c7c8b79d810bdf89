import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class FieldErrorSchema {
  @ApiPropertyOptional({ description: 'RFC 6901 JSON pointer to the body member, e.g. /title', example: '/title' })
  pointer?: string;

  @ApiPropertyOptional({ description: 'Name of the path, query or header parameter', example: 'limit' })
  parameter?: string;

  @ApiProperty({ example: 'title must be 1 to 200 characters long (it has 0)' })
  detail: string;
}

/** RFC 9457 problem details, as every 4xx and 5xx response carries them. */
export class ProblemSchema {
  @ApiProperty({
    description: 'Stable identifier of the kind of error; see docs/problems.md',
    example: 'urn:problem-type:posts-api:validation-failed',
  })
  type: string;

  @ApiProperty({ example: 'The request is not valid' })
  title: string;

  @ApiProperty({ example: 400 })
  status: number;

  @ApiProperty({ example: 'Invalid: /title.' })
  detail: string;

  @ApiProperty({ description: 'The request path', example: '/posts' })
  instance: string;

  @ApiProperty({ description: 'Also in the X-Request-Id header; quote it when reporting a problem' })
  requestId: string;

  @ApiPropertyOptional({
    type: [FieldErrorSchema],
    description: 'Validation problems only: one entry per broken field',
  })
  errors?: FieldErrorSchema[];
}
