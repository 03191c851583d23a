// Bytes, text and times as the verifier reads and prints them.
import { createHash } from 'node:crypto';
import { fail } from './failure.ts';

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
export const utf8 = new TextDecoder('utf-8', { fatal: true });
export const sha256 = (...parts: Uint8Array[]): Buffer => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
export const isoSeconds = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function parseJson(bytes: Buffer, what: string): unknown {
  try { return JSON.parse(utf8.decode(bytes)); } catch { return fail(`${what} is not UTF-8 JSON`); }
}
