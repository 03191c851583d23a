// L2 request signing of the Polymarket CLOB (https://docs.polymarket.com/developers/CLOB/authentication): HMAC-SHA256 over
// timestamp + METHOD + path (no query string) + body, keyed by the base64(url) secret, output as
// url-safe base64 that keeps its '=' padding.
import { createHmac } from 'node:crypto';

export function signL2(secret: string, timestamp: number | string, method: string, requestPath: string, body?: string): string {
  const key = Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const message = `${timestamp}${method}${requestPath}${body ?? ''}`;
  return createHmac('sha256', key).update(message).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export interface L2Credentials { apiKey: string; secret: string; passphrase: string; address: string }

export function l2Headers(creds: L2Credentials, timestamp: number, method: string, requestPath: string, body?: string): Record<string, string> {
  return {
    POLY_ADDRESS: creds.address,
    POLY_API_KEY: creds.apiKey,
    POLY_PASSPHRASE: creds.passphrase,
    POLY_TIMESTAMP: String(timestamp),
    POLY_SIGNATURE: signL2(creds.secret, timestamp, method, requestPath, body),
  };
}
