// When HTTPS turns on (both public URLs https:// DNS names), and the sentences that refuse a start
// whose public URLs cannot be served over HTTPS. Read from the configuration alone: no stack runs.
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../config/config.ts';
import { assertServableOrigins } from '../../config/origins.ts';
import { API_HOST, SITE_HOST } from '../support/https-stack.ts';

describe('the configuration', () => {
  const base = { SITE_PORT: '8080', API_PORT: '54321' };
  it('turns HTTPS on only when both public URLs are https:// DNS names', () => {
    expect(configFromEnv(base, []).tls).toBeUndefined();
    const on = configFromEnv({ ...base, SITE_URL: 'https://stats.example.test', API_URL: 'https://api.stats.example.test' }, []).tls!;
    expect(on).toMatchObject({ siteHost: SITE_HOST, apiHost: API_HOST, httpsPort: 443, httpPort: 80, acmeDirectoryUrl: 'https://acme-v02.api.letsencrypt.org/directory' });
  });

  it.each([
    [{ SITE_URL: 'https://stats.example.test' }, /SITE_URL .* and API_URL .* must both be https:\/\/ .* only one is https/],
    [{ SITE_URL: 'http://stats.example.test', API_URL: 'https://api.stats.example.test' }, /only one is https/],
    [{ SITE_URL: 'https://localhost', API_URL: 'https://api.stats.example.test' }, /SITE_URL is https:\/\/ but its host localhost is localhost/],
    [{ SITE_URL: 'https://stats.example.test', API_URL: 'https://127.0.0.1:8443' }, /API_URL is https:\/\/ but its host 127\.0\.0\.1 is an IP address/],
    [{ SITE_URL: 'https://stats.example.test', API_URL: 'https://[::1]' }, /an IP address/],
    [{ SITE_URL: 'https://stats.example.test', API_URL: 'https://stats.example.test:8443' }, /both name stats\.example\.test/],
    [{ SITE_URL: 'https://stats.example.test', API_URL: 'https://api.stats.example.test', TLS_CERT_FILE: '/x.pem' }, /TLS_CERT_FILE and TLS_KEY_FILE go together/],
  ])('refuses %o at start with a sentence', (urls, sentence) => {
    expect(() => assertServableOrigins(configFromEnv({ ...base, ...urls }, []))).toThrow(sentence);
  });
});
