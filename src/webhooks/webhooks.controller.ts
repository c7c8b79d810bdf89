import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireScope } from '../auth/auth.decorators.js';
import { Scope } from '../auth/principal.js';
import { ParseIdPipe } from '../http/parse-id.pipe.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import { PublicUrls } from '../http/public-urls.js';
import { ApiIdParam, ApiProblems, RATE_LIMIT_HEADERS } from '../openapi/api-responses.js';
import { BEARER_SCHEME } from '../openapi/openapi.js';
import { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook-input.dto.js';
import {
  CreatedWebhookResource,
  RotatedSecretResource,
  toAttemptResource,
  toWebhookResource,
  WebhookAttemptResource,
  WebhookResource,
} from './webhook.resource.js';
import { MAX_ATTEMPTS_PAGE, WebhooksService } from './webhooks.service.js';

/** Webhook subscriptions (contract §9), for admins only. A secret is in the response that makes it and nowhere else. */
@ApiTags('webhooks')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 403, 429, 500, 503)
@Controller('webhooks')
@RequireScope(Scope.admin)
export class WebhooksController {
  constructor(
    private readonly webhooksService: WebhooksService,
    private readonly urls: PublicUrls,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Subscribe a URL to events; the signing secret is in this response only (admin)' })
  @ApiCreatedResponse({
    type: CreatedWebhookResource,
    headers: { ...RATE_LIMIT_HEADERS, Location: { schema: { type: 'string' } } },
  })
  @ApiProblems(400, 413, 415)
  async create(
    @Body() input: CreateWebhookDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CreatedWebhookResource> {
    const { webhook, secret } = await this.webhooksService.create(input);
    response.setHeader('Location', this.urls.to(`/webhooks/${webhook.id}`));
    response.setHeader('Cache-Control', 'no-store');
    return { ...toWebhookResource(webhook), secret };
  }

  @Get()
  @ApiOperation({ summary: 'List webhooks, never their secrets (admin)' })
  @ApiOkResponse({ type: [WebhookResource], headers: RATE_LIMIT_HEADERS })
  async list(): Promise<WebhookResource[]> {
    return (await this.webhooksService.list()).map(toWebhookResource);
  }

  @Get(':id')
  @ApiIdParam()
  @ApiOperation({ summary: 'Read one webhook (admin)' })
  @ApiOkResponse({ type: WebhookResource, headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<WebhookResource> {
    return toWebhookResource(await this.webhooksService.get(id));
  }

  @Patch(':id')
  @ApiIdParam()
  @ApiOperation({ summary: 'Change the URL, the events, the description, or enable/disable (admin)' })
  @ApiOkResponse({ type: WebhookResource, headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404, 413, 415)
  async update(@Param('id', ParseIdPipe) id: number, @Body() change: UpdateWebhookDto): Promise<WebhookResource> {
    return toWebhookResource(await this.webhooksService.update(id, change));
  }

  @Delete(':id')
  @ApiIdParam()
  @ApiOperation({ summary: 'Delete a webhook, its pending deliveries and its log (admin)' })
  @ApiNoContentResponse({ description: 'Deleted', headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(@Param('id', ParseIdPipe) id: number): Promise<void> {
    await this.webhooksService.remove(id);
  }

  @Post(':id/rotate-secret')
  @ApiIdParam()
  @ApiOperation({ summary: 'A new signing secret; the old one signs too for 24 hours (admin)' })
  @ApiOkResponse({ type: RotatedSecretResource, headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  @HttpCode(HttpStatus.OK)
  async rotateSecret(
    @Param('id', ParseIdPipe) id: number,
    @Res({ passthrough: true }) response: Response,
  ): Promise<RotatedSecretResource> {
    const { secret, previousSecretExpiresAt } = await this.webhooksService.rotateSecret(id);
    response.setHeader('Cache-Control', 'no-store');
    return { secret, previousSecretExpiresAt: previousSecretExpiresAt.toISOString() };
  }

  @Get(':id/deliveries')
  @ApiIdParam()
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: MAX_ATTEMPTS_PAGE, default: 20 },
  })
  @ApiQuery({
    name: 'before',
    required: false,
    description: 'An attempt id: the page of older attempts (from Link: rel="next")',
  })
  @ApiOperation({ summary: 'The delivery log: every attempt, newest first (admin)' })
  @ApiOkResponse({ type: [WebhookAttemptResource], headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  async deliveries(
    @Param('id', ParseIdPipe) id: number,
    @Query('limit') limitText: string | undefined,
    @Query('before') beforeText: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<WebhookAttemptResource[]> {
    const limit = positiveInteger(limitText, 'limit') ?? 20;
    const before = positiveInteger(beforeText, 'before');
    const page = await this.webhooksService.attemptsOf(id, Math.min(limit, MAX_ATTEMPTS_PAGE), before);
    if (page.length === Math.min(limit, MAX_ATTEMPTS_PAGE)) {
      const next = this.urls.to(`/webhooks/${id}/deliveries`, {
        limit: String(Math.min(limit, MAX_ATTEMPTS_PAGE)),
        before: String(page.at(-1)!.id),
      });
      response.setHeader('Link', `<${next}>; rel="next"`);
    }
    return page.map(toAttemptResource);
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @ApiIdParam()
  @ApiParam({ name: 'deliveryId', schema: { type: 'integer', minimum: 1 } })
  @ApiOperation({ summary: 'Deliver this event to this webhook again, now (admin)' })
  @ApiAcceptedResponse({ description: 'Due now; its attempt appears in the delivery log', headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 404)
  @HttpCode(HttpStatus.ACCEPTED)
  async redeliver(
    @Param('id', ParseIdPipe) id: number,
    @Param('deliveryId', ParseIdPipe) deliveryId: number,
  ): Promise<{ deliveryId: number; state: string }> {
    const delivery = await this.webhooksService.redeliver(id, deliveryId);
    return { deliveryId: delivery.id, state: delivery.state };
  }
}

/** A query parameter that must be a positive integer when given (1 to 15 digits, no sign). */
function positiveInteger(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[1-9]\d{0,14}$/.test(value)) {
    throw new ProblemException(ProblemTypes.validationFailed, `${name} must be a positive integer.`, {
      errors: [{ parameter: name, detail: `${name} must be a positive integer given once` }],
    });
  }
  return Number(value);
}
