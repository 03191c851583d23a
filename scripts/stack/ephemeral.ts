// A private, throw-away stack for tests and the benchmark: fresh secrets, free ports, a temporary data directory.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configFromEnv, type Env } from '../lib/config.ts';
import { completeSecrets } from '../lib/keys.ts';
import { freePort } from '../lib/processes.ts';
import { startStack, type Stack } from './stack.ts';

export interface TestStack extends Stack {
  /** Everything the stack logged, for failure reports. */
  logs: string[];
  /** Stops the stack and deletes its data directory. */
  destroy(): Promise<void>;
}

export async function startTestStack(options: { seedDemo?: boolean; env?: Env } = {}): Promise<TestStack> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'public-stats-'));
  chmodSync(dataDir, 0o755);
  const secrets = await completeSecrets({});
  // No cache warming unless asked for: a test that changes the data reads it at once, from caches
  // that only its own requests filled.
  const env: Env = { ...secrets, DATA_DIR: dataDir, NGINX_WORKERS: '1', EDGE_WARM_SECONDS: '0', ...options.env };
  for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT']) {
    env[name] ??= String(await freePort());
  }
  const cfg = configFromEnv(env);
  const logs: string[] = [];
  const stack = await startStack(cfg, { log: (line) => logs.push(line), seedDemo: options.seedDemo ?? false }).catch((error: Error) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${error.message}\n${logs.join('\n')}`);
  });
  return Object.assign(stack, {
    logs,
    async destroy() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
