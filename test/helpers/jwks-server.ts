import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { closeAbruptly, listenOnLoopback } from './restartable-listener.js';

export type SigningAlgorithm = 'RS256' | 'ES256';

/** A key pair of the test issuer; `jwk` is the public half as the issuer publishes it. */
export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function createSigningKey(alg: SigningAlgorithm, kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

/**
 * The JWKS endpoint of a test authorization server, on loopback: GET /jwks answers the published
 * keys. It counts the requests it receives (to observe the service's cache), keys can be published
 * later (rotation), and it can be stopped, made slow or made to fail (outages).
 */
export class JwksServer {
  /** GET /jwks requests received, whether answered or not. */
  requests = 0;
  port = 0;
  /** How long GET /jwks waits before answering; longer than the service's fetch timeout is a hang. */
  delayMs = 0;
  /** The status GET /jwks answers with; anything but 200 comes with a plain-text body. */
  status = 200;

  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly keys = new Map<string, JWK>();

  constructor(keys: SigningKey[] = []) {
    for (const key of keys) this.publish(key);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/jwks`;
  }

  publish(key: SigningKey): void {
    this.keys.set(key.kid, key.jwk);
  }

  /** Listens (again) on the same port; does nothing when already listening. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url !== '/jwks') {
        response.writeHead(404).end();
        return;
      }
      this.requests++;
      const answer = () => {
        if (this.status !== 200) {
          response.writeHead(this.status, { 'content-type': 'text/plain' }).end('unavailable');
          return;
        }
        const body = JSON.stringify({ keys: [...this.keys.values()] });
        response.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(body);
      };
      if (this.delayMs === 0) return answer();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!response.destroyed) answer();
      }, this.delayMs);
      this.timers.add(timer);
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    // The same port every time, so the service's OAUTH_JWKS_URL stays valid across stop/start.
    this.port = await listenOnLoopback(server, this.port);
    this.server = server;
  }

  /** Refuses new connections and cuts the open ones, as an unreachable authorization server would. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await closeAbruptly(server, this.sockets);
  }
}
