import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../auth/auth.decorators.js';
import { Scope, type Principal } from '../auth/principal.js';
import { PublicUrls } from '../http/public-urls.js';
import { ApiProblems, RATE_LIMIT_HEADERS } from '../openapi/api-responses.js';
import { BEARER_SCHEME } from '../openapi/openapi.js';
import { EventsQueryDto, toEventsQuery } from './dto/events-query.dto.js';
import { EventResource } from './event.resource.js';
import { EventsService } from './events.service.js';

@ApiTags('events')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 429, 500, 503)
@Controller('events')
export class EventsController {
  constructor(
    private readonly eventsService: EventsService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @RequireScope(Scope.eventsRead)
  @ApiOperation({
    summary: 'The change feed: events after a cursor, oldest first (scope events:read)',
    description:
      'Follow Link: rel="next" forever: it is always present, and the same position when nothing has happened. ' +
      'Never skips and never repeats an event, whatever the number of writers and instances.',
  })
  @ApiOkResponse({
    type: [EventResource],
    headers: {
      ...RATE_LIMIT_HEADERS,
      Link: { schema: { type: 'string' }, description: 'RFC 8288 rel="next": where to resume, always present' },
    },
  })
  @ApiProblems(400, 403, 410)
  async list(
    @Query() query: EventsQueryDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<EventResource[]> {
    const eventsQuery = toEventsQuery(query);
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    response.once('close', onClose);
    try {
      const page = await this.eventsService.page(eventsQuery, principal.id, abort.signal);
      const next = this.urls.to('/events', {
        after: String(page.next),
        limit: String(eventsQuery.limit),
        type: query.type,
        wait: query.wait,
      });
      response.setHeader('Link', `<${next}>; rel="next"`);
      return page.events;
    } finally {
      response.off('close', onClose);
    }
  }
}
