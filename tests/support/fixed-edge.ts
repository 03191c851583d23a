// The edge app the routing tests ask through app.request(), on fixed records (tests/support/records.ts):
// a config with a signing key of its own, the records readable or down, and the app over them.
import { generateKeyPairSync } from 'node:crypto';
import type { EdgeConfig } from '../../edge/config.ts';
import { appOf, type FixedRecords } from '../edge/fixed-app.ts';
import { fixedHealth, fixedHistory, fixedLog, fixedStats } from './records.ts';

export const cfg: EdgeConfig = {
  siteUrl: 'https://stats.example.org',
  apiUrl: 'https://api.example.org',
  apiUpstream: 'http://api.invalid',
  postgrestUpstream: 'http://postgrest.invalid:3000',
  anonKey: 'anon',
  httpSigPrivateKey: generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'),
  httpSigRetiredPublicKeys: [],
  statsTtlMs: 60_000,
  healthTtlMs: 60_000,
  upstreamTimeoutMs: 1000,
  warmPeriodMs: 0,
};

export const fixedUpstream: FixedRecords = {
  stats: async () => fixedStats(),
  history: async () => fixedHistory(),
  log: async () => fixedLog(),
  health: async () => ({ record: fixedHealth(), apiHostReachable: true }),
};
const failing = () => Promise.reject(new Error('the API host did not answer'));
export const downUpstream: FixedRecords = { stats: failing, history: failing, log: failing, health: async () => ({ record: { ...fixedHealth(), status: 'down', data: null, writer: null }, apiHostReachable: false }) };

export const appWith = (upstream: FixedRecords, fetch?: typeof globalThis.fetch) => appOf(cfg, upstream, { fetch });
export const app = appWith(fixedUpstream);
