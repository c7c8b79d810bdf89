import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { APP_OPTIONS, createHttpAdapter } from '../app.setup.js';
import { createOpenApiDocument, serializeOpenApiDocument } from '../openapi/openapi.js';

/**
 * npm run openapi: writes openapi.json from the code. Preview mode builds the module graph without
 * instantiating anything, so no database or Redis is touched. The test suite fails when the
 * committed file and the code disagree.
 */
async function generate(path: string): Promise<void> {
  const app = await NestFactory.create(AppModule, createHttpAdapter(), {
    ...APP_OPTIONS,
    preview: true,
    logger: false,
  });
  writeFileSync(path, serializeOpenApiDocument(createOpenApiDocument(app)));
  await app.close();
  process.stdout.write(`Wrote ${path}\n`);
}

generate(process.argv[2] ?? 'openapi.json').catch((error: unknown) => {
  process.stderr.write(`openapi: ${(error as Error).message}\n`);
  process.exit(1);
});
