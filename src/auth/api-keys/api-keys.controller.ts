import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ParseIdPipe } from '../../common/http/parse-id.pipe.js';
import { PublicUrls } from '../../common/http/public-urls.js';
import { ProblemException } from '../../common/problem/problem.exception.js';
import { ProblemTypes } from '../../common/problem/problem-types.js';
import { RequireScope } from '../auth.decorators.js';
import { Scope, type ScopeName } from '../principal.js';
import { toApiKeyResource, type ApiKeyResource } from './api-key.resource.js';
import { ApiKeysService } from './api-keys.service.js';
import { CreateApiKeyDto } from './dto/create-api-key.dto.js';

/** Key management, for admins only. The token is in the response to POST and nowhere else, ever. */
@Controller('api-keys')
@RequireScope(Scope.admin)
export class ApiKeysController {
  constructor(
    private readonly apiKeysService: ApiKeysService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  async list(): Promise<ApiKeyResource[]> {
    return (await this.apiKeysService.list()).map(toApiKeyResource);
  }

  @Get(':id')
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<ApiKeyResource> {
    const apiKey = await this.apiKeysService.findById(id);
    if (!apiKey) throw apiKeyNotFound(id);
    return toApiKeyResource(apiKey);
  }

  @Post()
  async create(
    @Body() input: CreateApiKeyDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ApiKeyResource & { token: string }> {
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new ProblemException(ProblemTypes.validationFailed, 'Invalid: /expiresAt.', {
        errors: [{ pointer: '/expiresAt', detail: 'expiresAt must be in the future' }],
      });
    }
    const { apiKey, token } = await this.apiKeysService.create({
      name: input.name,
      scopes: input.scopes as ScopeName[],
      expiresAt,
    });
    response.setHeader('Location', this.urls.to(`/api-keys/${apiKey.id}`));
    response.setHeader('Cache-Control', 'no-store');
    return { ...toApiKeyResource(apiKey), token };
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  async revoke(@Param('id', ParseIdPipe) id: number): Promise<void> {
    if (!(await this.apiKeysService.revoke(id))) throw apiKeyNotFound(id);
  }
}

function apiKeyNotFound(id: number): ProblemException {
  return new ProblemException(ProblemTypes.notFound, `API key ${id} does not exist or is revoked already.`);
}
