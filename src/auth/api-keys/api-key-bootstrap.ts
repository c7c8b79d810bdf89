import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AUTH_CONFIG, type AuthConfig } from '../../config/config.module.js';
import { isUniqueViolation } from '../../database/database-errors.js';
import { StartupLock } from '../../database/startup-lock.js';
import { Scope } from '../principal.js';
import { ApiKeysService } from './api-keys.service.js';

/**
 * First run: BOOTSTRAP_API_KEY makes sure an admin key with that value exists (idempotent across
 * restarts and instances: the unique digest index settles races). Without it, without OAuth and with
 * no keys at all, one admin key is created and printed once, so a fresh install is usable; under the
 * start-up lock, so that of instances starting together only one finds no key and creates it.
 */
@Injectable()
export class ApiKeyBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('ApiKeys');

  constructor(
    private readonly apiKeysService: ApiKeysService,
    private readonly startupLock: StartupLock,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { bootstrapApiKey, oauth } = this.config;
    if (bootstrapApiKey !== null) return this.ensureBootstrapKey(bootstrapApiKey);
    if (oauth !== null || (await this.apiKeysService.count()) > 0) return;
    await this.startupLock.run(() => this.createFirstRunKey());
  }

  private async createFirstRunKey(): Promise<void> {
    // Counted again now that no other instance can be between its own count and insert.
    if ((await this.apiKeysService.count()) > 0) return;
    const { apiKey, token } = await this.apiKeysService.create({ name: 'initial-admin', scopes: [Scope.admin] });
    // Deliberately the console and not the log: this is the only time the token exists outside its owner.
    process.stdout.write(
      [
        '',
        '='.repeat(78),
        ` No API keys existed, so an admin key was created (id ${apiKey.id}). It is shown only this once:`,
        '',
        `   ${token}`,
        '',
        ` Use it as:  Authorization: Bearer ${token}`,
        ' Create narrower keys with POST /api-keys or npm run apikey -- create, then revoke this one.',
        '='.repeat(78),
        '',
        '',
      ].join('\n'),
    );
  }

  private async ensureBootstrapKey(token: string): Promise<void> {
    const existing = await this.apiKeysService.findByToken(token);
    if (existing) {
      if (existing.revokedAt !== null) {
        this.logger.warn(`BOOTSTRAP_API_KEY names API key ${existing.id}, which is revoked; it stays revoked.`);
      }
      return;
    }
    try {
      const { apiKey } = await this.apiKeysService.create({ name: 'bootstrap-admin', scopes: [Scope.admin], token });
      this.logger.log(`Created admin API key ${apiKey.id} from BOOTSTRAP_API_KEY.`);
    } catch (error) {
      // Another instance created it between our lookup and our insert.
      if (!isUniqueViolation(error)) throw error;
    }
  }
}
