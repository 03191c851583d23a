// Structured logging for the writer: JSON lines when stdout is not a terminal (collectors parse
// them), short readable lines on a terminal. Every line passes through redact(), because a
// wallet address, condition id, order id or credential must never reach a log.
import type { Level } from '../config/writer.ts';

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** Adds literal strings (credentials, addresses) that are masked wherever they appear. */
  addSecrets(...secrets: (string | undefined)[]): void;
}

// 0x-prefixed hex of 8+ digits covers addresses (40), condition/order ids and tx hashes (64).
const HEX_ID = /0x[0-9a-fA-F]{8,}/g;
// UUIDs are what CLOB API keys look like.
const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;

export function makeRedactor(): { redact(text: string): string; add(...s: (string | undefined)[]): void } {
  const secrets = new Set<string>();
  return {
    add(...list) {
      // Very short values would mask ordinary words; credentials are never that short.
      for (const s of list) if (s && s.length >= 6) secrets.add(s);
    },
    redact(text) {
      let out = text;
      for (const s of secrets) out = out.split(s).join('[redacted]');
      return out.replace(HEX_ID, '0x[redacted]').replace(UUID, '[redacted]');
    },
  };
}

export interface LoggerOptions {
  write?: (line: string) => void;
  json?: boolean;
  minLevel?: Level;
}

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(line + '\n'));
  const json = options.json ?? !process.stdout.isTTY;
  const min = ORDER[options.minLevel ?? 'info'];
  const redactor = makeRedactor();
  const emit = (level: Level, msg: string, fields: Fields = {}) => {
    if (ORDER[level] < min) return;
    let line: string;
    if (json) {
      line = JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }, (_key, value) =>
        value instanceof Error ? value.message : value);
    } else {
      const extra = Object.entries(fields)
        .map(([k, v]) => `${k}=${v instanceof Error ? v.message : typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      line = `${new Date().toISOString().slice(11, 19)} ${level.padEnd(5)} ${msg}${extra ? ' ' + extra : ''}`;
    }
    write(redactor.redact(line));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    addSecrets: (...s) => redactor.add(...s),
  };
}
