import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../auth/auth.decorators.js';
import { Scope, type Principal } from '../auth/principal.js';
import { PublicUrls } from '../http/public-urls.js';
import { ApiProblems, RATE_LIMIT_HEADERS } from '../openapi/api-responses.js';
import { BEARER_SCHEME } from '../openapi/openapi.js';
import { EventsQueryDto, toEventsQuery } from './dto/events-query.dto.js';
import { EventResource } from './event.resource.js';
import { EventStreamer } from './event-stream.js';
import { EventsService } from './events.service.js';

@ApiTags('events')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 429, 500, 503)
@Controller('events')
export class EventsController {
  constructor(
    private readonly eventsService: EventsService,
    private readonly streamer: EventStreamer,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @RequireScope(Scope.eventsRead)
  @ApiOperation({
    summary: 'The change feed: events after a cursor, oldest first (scope events:read)',
    description:
      'Follow Link: rel="next" forever: it is always present, and the same position when nothing has happened. ' +
      'Never skips and never repeats an event, whatever the number of writers and instances. ' +
      'With Accept: text/event-stream, the same events as server-sent events (id, event, data), live from the ' +
      'newest event or from Last-Event-ID / after, with a comment at least every 15 s.',
  })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Event streams: resume after this event (what an EventSource sends when it reconnects)',
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
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const eventsQuery = toEventsQuery(query);
    // The response is written here (no passthrough): a stream must not be answered again by Nest.
    if (request.accepts(['application/json', 'text/event-stream']) === 'text/event-stream') {
      const { after, types } = eventsQuery;
      return this.streamer.serve(request, response, { after, types, principalId: principal.id });
    }
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
      response.json(page.events);
    } finally {
      response.off('close', onClose);
    }
  }
}
