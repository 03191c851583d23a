// The signer's state file (LOG_SIGNER_STATE) is durable when committed() returns: the new file's bytes
// are synced, it is renamed over the old one, and then the directory holding it is synced, which is
// what puts the rename itself on disk. The file system calls are watched as LogSigner makes them.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../writer/log.ts';
import { LogSigner } from '../../writer/log-signer.ts';

const calls = vi.hoisted(() => [] as string[]);

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const opened = new Map<number, string>();
  return {
    ...fs,
    openSync: (file: string, ...rest: [string, number]) => {
      const fd = fs.openSync(file, ...rest);
      opened.set(fd, String(file));
      calls.push(`open ${String(file)}`);
      return fd;
    },
    fsyncSync: (fd: number) => {
      calls.push(`fsync ${opened.get(fd)}`);
      fs.fsyncSync(fd);
    },
    renameSync: (from: string, to: string) => {
      calls.push(`rename ${String(from)} ${String(to)}`);
      fs.renameSync(from, to);
    },
  };
});

const dir = mkdtempSync(path.join(tmpdir(), 'signer-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the signer\'s state file', () => {
  it('is synced, renamed into place, and its directory synced after the rename', async () => {
    const key = generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url');
    const file = path.join(dir, 'log-signer.json');
    const signer = await LogSigner.create(key, { siteUrl: 'https://example.org', logOrigin: undefined }, file, createLogger({ json: true, write: () => {} }));
    for (const size of [3, 5]) {
      calls.length = 0;
      signer.committed({ origin: 'example.org/log', size, root: `root-${size}`, note: '' });
      expect(calls.filter((c) => c.includes(dir))).toEqual([
        `open ${file}.tmp`, `fsync ${file}.tmp`, `rename ${file}.tmp ${file}`, `open ${dir}`, `fsync ${dir}`,
      ]);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'example.org/log': { size, root: `root-${size}` } });
    }
  });
});
