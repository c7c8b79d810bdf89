import { Inject, Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { match, type MatchFunction } from 'path-to-regexp';
import { HTTP_CONFIG, type HttpConfig } from '../config/config.module.js';

interface RouteEntry {
  matches: MatchFunction<object>;
  methods: Set<string>;
}

// Order in which methods are listed in an Allow header.
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Knows, for any path, which methods some controller serves there: the router only answers
 * "no route", and this turns that into 405 + Allow (RFC 9110 §15.5.6) when the path exists.
 * Built from Nest's own route metadata, so a new module's routes are covered without extra code.
 */
@Injectable()
export class RouteTable {
  private entries?: RouteEntry[];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(HTTP_CONFIG) private readonly config: HttpConfig,
  ) {}

  /** Methods served at `path` (HEAD with GET, OPTIONS always), or [] when no route has that path. */
  allowedMethods(path: string): string[] {
    const methods = new Set<string>();
    for (const entry of (this.entries ??= this.build())) {
      if (entry.matches(path)) entry.methods.forEach((method) => methods.add(method));
    }
    if (methods.size === 0) return [];
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return METHOD_ORDER.filter((method) => methods.has(method));
  }

  private build(): RouteEntry[] {
    const byPattern = new Map<string, Set<string>>();
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (!controller || !wrapper.instance) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const controllerPath of asArray(Reflect.getMetadata(PATH_METADATA, controller))) {
        for (const name of this.scanner.getAllMethodNames(prototype)) {
          const handler = prototype[name] as object;
          const routePaths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
          const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
          if (routePaths === undefined || requestMethod === undefined) continue;
          for (const routePath of asArray(routePaths)) {
            const pattern = joinPath(this.config.apiPrefix, controllerPath, routePath);
            const methods = byPattern.get(pattern) ?? new Set<string>();
            methods.add(RequestMethod[requestMethod]);
            byPattern.set(pattern, methods);
          }
        }
      }
    }
    return [...byPattern].map(([pattern, methods]) => ({
      matches: match(pattern, { decode: false, sensitive: true }),
      methods,
    }));
  }
}

function asArray(value: unknown): string[] {
  if (value === undefined) return [''];
  return Array.isArray(value) ? (value as string[]) : [value as string];
}

function joinPath(...segments: string[]): string {
  const joined = segments
    .flatMap((segment) => segment.split('/'))
    .filter((part) => part !== '')
    .join('/');
  return '/' + joined;
}
