// The checkout this code runs from: its root, where its data lives by default, and the `.env` file
// read under the process environment.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import type { Env } from './settings.ts';

// This file lies one folder below the checkout's root.
export const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Whether every directory from the root down to `dir` lets other users through (mode o+x). */
export function traversableByOthers(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (d === path.dirname(d)) return true;
  }
}

/**
 * Where the stack keeps its data by default: `.data` in the checkout. Run as root, Postgres and
 * nginx drop to unprivileged users (`postgres`, `nobody`) that must reach it; when the checkout lies
 * in a directory they cannot pass (e.g. under /root, mode 0700), the data lives under
 * /var/lib/public-stats instead, in a directory named after the checkout, kept across restarts.
 */
export function defaultDataDir(root = ROOT_DIR, isRoot = process.getuid?.() === 0): string {
  if (!isRoot || traversableByOthers(root)) return path.join(root, '.data');
  const key = createHash('sha256').update(root).digest('hex').slice(0, 10);
  return path.join('/var/lib/public-stats', `${path.basename(root)}-${key}`);
}

/** The file of secrets and settings: ENV_FILE, else `.env` in the checkout. */
export const envFilePath = (): string => process.env.ENV_FILE || path.join(ROOT_DIR, '.env');

/** Reads the env file (if any) under the process environment, which wins. */
export function loadEnv(envFile = envFilePath()): Env {
  const fromFile = existsSync(envFile) ? parseEnv(readFileSync(envFile, 'utf8')) : {};
  return { ...fromFile, ...process.env };
}
