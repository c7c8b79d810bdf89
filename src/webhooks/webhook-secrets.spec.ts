import { describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { generateWebhookSecret, SecretBox } from './webhook-secrets.js';

describe('webhook secrets', () => {
  it('are whsec_ and 32 random bytes, usable by the standardwebhooks library', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(generateWebhookSecret()).not.toBe(secret);
    const signer = new StandardWebhook(secret);
    const headers = { 'webhook-id': '1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const signature = signer.sign('1', new Date(), '{"a":1}');
    expect(signer.verify('{"a":1}', { ...headers, 'webhook-signature': signature })).toEqual({ a: 1 });
  });

  it('are sealed so that only the same key opens them, and a tampered value is refused', () => {
    const box = new SecretBox('k'.repeat(40));
    const secret = generateWebhookSecret();
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(box.seal(secret)).not.toBe(sealed);
    expect(box.open(sealed)).toBe(secret);
    expect(new SecretBox('k'.repeat(40)).open(sealed)).toBe(secret);
    expect(() => new SecretBox('x'.repeat(40)).open(sealed)).toThrow();
    const [version, iv, tag, ciphertext] = sealed.split('.');
    const flipped = ciphertext.slice(0, -2) + (ciphertext.at(-2) === 'A' ? 'B' : 'A') + ciphertext.at(-1);
    expect(() => box.open([version, iv, tag, flipped].join('.'))).toThrow();
    expect(() => box.open('plain')).toThrow('not a sealed webhook secret');
  });
});
