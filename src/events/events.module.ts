import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PublicUrls } from '../http/public-urls.js';
import { EventRecord } from './event-record.entity.js';
import { EventSequencer } from './event-sequencer.js';
import { EventStreamer } from './event-stream.js';
import { EventsController } from './events.controller.js';
import { EventsRepository } from './events.repository.js';
import { EventsRetention } from './events-retention.js';
import { EventsService } from './events.service.js';
import { FeedReaders } from './feed-readers.js';
import { FeedSignal } from './feed-signal.js';

/**
 * Contract §9: the durable change log (an outbox written in the transaction of each change), its
 * sequencer, the feed (GET /events) and the retention sweep. Writers use EventsService.append().
 */
@Module({
  imports: [TypeOrmModule.forFeature([EventRecord])],
  controllers: [EventsController],
  providers: [
    EventsService,
    EventsRepository,
    EventSequencer,
    EventStreamer,
    FeedSignal,
    FeedReaders,
    EventsRetention,
    PublicUrls,
  ],
  exports: [EventsService, FeedReaders],
})
export class EventsModule {}
