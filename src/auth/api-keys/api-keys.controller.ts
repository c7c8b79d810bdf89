import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ParseIdPipe } from '../../http/parse-id.pipe.js';
import { PublicUrls } from '../../http/public-urls.js';
import { parseDateTime } from '../../common/validation/date-time.js';
import { RequireScope } from '../auth.decorators.js';
import { Scope, type ScopeName } from '../principal.js';
import { ApiIdParam, ApiProblems, RATE_LIMIT_HEADERS } from '../../openapi/api-responses.js';
import { BEARER_SCHEME } from '../../openapi/openapi.js';
import { ApiKeyResource, CreatedApiKeyResource, toApiKeyResource } from './api-key.resource.js';
import { ApiKeysService } from './api-keys.service.js';
import { CreateApiKeyDto } from './dto/create-api-key.dto.js';

/** Key management, for admins only. The token is in the response to POST and nowhere else, ever. */
@ApiTags('api-keys')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 403, 429, 500, 503)
@Controller('api-keys')
@RequireScope(Scope.admin)
export class ApiKeysController {
  constructor(
    private readonly apiKeysService: ApiKeysService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List API keys, never their tokens (admin)' })
  @ApiOkResponse({ type: [ApiKeyResource], headers: RATE_LIMIT_HEADERS })
  async list(): Promise<ApiKeyResource[]> {
    return (await this.apiKeysService.list()).map(toApiKeyResource);
  }

  @Get(':id')
  @ApiIdParam()
  @ApiOperation({ summary: 'Read one API key (admin)' })
  @ApiOkResponse({ type: ApiKeyResource, headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<ApiKeyResource> {
    return toApiKeyResource(await this.apiKeysService.get(id));
  }

  @Post()
  @ApiOperation({ summary: 'Create an API key; its token is in this response only (admin)' })
  @ApiCreatedResponse({
    type: CreatedApiKeyResource,
    headers: { ...RATE_LIMIT_HEADERS, Location: { schema: { type: 'string' } } },
  })
  @ApiProblems(400, 413, 415)
  async create(
    @Body() input: CreateApiKeyDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CreatedApiKeyResource> {
    const { apiKey, token } = await this.apiKeysService.create({
      name: input.name,
      scopes: input.scopes as ScopeName[],
      expiresAt: input.expiresAt === undefined ? null : parseDateTime(input.expiresAt)!,
    });
    response.setHeader('Location', this.urls.to(`/api-keys/${apiKey.id}`));
    response.setHeader('Cache-Control', 'no-store');
    return { ...toApiKeyResource(apiKey), token };
  }

  @Delete(':id')
  @ApiIdParam()
  @ApiOperation({ summary: 'Revoke an API key; every instance refuses it within 5 seconds (admin)' })
  @ApiNoContentResponse({ description: 'Revoked', headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  @HttpCode(HttpStatus.NO_CONTENT)
  async revoke(@Param('id', ParseIdPipe) id: number): Promise<void> {
    await this.apiKeysService.revoke(id);
  }
}
