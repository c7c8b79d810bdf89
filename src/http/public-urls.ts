import { Inject, Injectable } from '@nestjs/common';
import { HTTP_CONFIG, type HttpConfig } from '../config/config.module.js';

/**
 * URLs the service hands out (Location, Link). Root-relative unless PUBLIC_BASE_URL is set: the
 * Host header is client input, and building absolute URLs from it would let a client point them anywhere.
 */
@Injectable()
export class PublicUrls {
  private readonly base: string;

  constructor(@Inject(HTTP_CONFIG) config: HttpConfig) {
    this.base = (config.publicBaseUrl ?? '') + config.apiPrefix;
  }

  to(path: string, query?: Record<string, string | undefined>): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) search.append(name, value);
    const queryString = search.toString();
    return this.base + path + (queryString ? `?${queryString}` : '');
  }
}
