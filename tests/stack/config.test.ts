// One source of configuration: every variable the code, the compose file or the nginx templates read
// is documented in .env.example, and every variable .env.example documents is read somewhere. The
// defaults are the code's (the config modules' tables, the edge's own configuration); .env.example,
// docker-compose.yml, the README, the docs and the help texts show the same values.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { USAGE as BACKUP_USAGE } from '../../stack/backup.ts';
import { configurationDefaults } from '../../scripts/docs/configuration.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { configFromEnv } from '../../config/config.ts';
import { STACK_DEFAULTS } from '../../config/settings.ts';
import { gatewayAddresses } from '../../stack/nginx-config.ts';
import { HELP as WRITER_HELP } from '../../writer/help.ts';
import { envExampleNames, namesReadByCode } from '../support/env-example.ts';

// Read from the environment but not configuration an operator sets: the process's own environment,
// variables the stack hands its children (edge/writer) from settings .env.example already names,
// and the benchmark's knobs (documented in docs/contributing.md).
const NOT_OPERATOR_SETTINGS = new Set(['PATH', 'HOME', 'NODE_ENV', 'TZ', 'CI', 'BENCH_SECONDS', 'BENCH_ROUNDS']);

/** `NAME (default X` or `NAME (X)` in prose, for the variables that have a default: [name, X]. */
function statedDefaults(text: string, defaults: Map<string, string>): [string, string][] {
  return [...text.matchAll(/\b([A-Z][A-Z0-9_]{3,})`?\s+\((?:default\s+)?([^\s,;)]+)/g)]
    .filter((m) => defaults.has(m[1]!)).map((m) => [m[1]!, m[2]!]);
}


describe('configuration', () => {
  const defaults = configurationDefaults();

  const documented = envExampleNames();

  it('documents in .env.example every variable the code reads', () => {
    const missing = [...namesReadByCode()].filter(([name]) => !documented.has(name) && !NOT_OPERATOR_SETTINGS.has(name));
    expect(missing.map(([name, file]) => `${name} (${file})`)).toEqual([]);
  });

  it('reads every variable .env.example documents', () => {
    const compose = readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
    const read = new Set([...namesReadByCode().keys(), ...[...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)]);
    expect([...documented].filter((name) => !read.has(name))).toEqual([]);
  });

  it('shows in .env.example, set or as an example, the default of every setting that has one (or leaves it empty)', () => {
    const text = readFileSync(path.join(ROOT_DIR, '.env.example'), 'utf8');
    const shown = parseEnv(text.replace(/^#\s*([A-Z][A-Z0-9_]*=)/gm, '$1'));
    const wrong = [...defaults].filter(([name, value]) => shown[name] !== undefined && shown[name] !== '' && shown[name] !== value)
      .map(([name, value]) => `${name}=${shown[name]} (the code's default: ${value})`);
    expect(wrong).toEqual([]);
    expect([...defaults.keys()].filter((name) => shown[name] === undefined), 'settings with a default that .env.example leaves out').toEqual([]);
  });

  it("falls back in docker-compose.yml (${NAME:-value}) on the code's default", () => {
    const compose = readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
    const fallbacks = [...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*):-([^}]+)\}/g)].filter((m) => defaults.has(m[1]!));
    expect(fallbacks.length).toBeGreaterThan(20);
    expect(fallbacks.filter((m) => m[2] !== defaults.get(m[1]!)).map((m) => `${m[0]} (the code's default: ${defaults.get(m[1]!)})`)).toEqual([]);
  });

  it('refuses what nginx would refuse, with a sentence naming the variable', () => {
    // limit_req takes no burst of 0 (https://nginx.org/en/docs/http/ngx_http_limit_req_module.html).
    expect(() => configFromEnv({ SITE_RATE_BURST: '0' }, [])).toThrow('SITE_RATE_BURST must be a whole number of at least 1, got "0".');
    // With HTTPS the gateways listen on unix sockets in the data directory, whose paths have a limit.
    const https = { SITE_URL: 'https://stats.example.test', API_URL: 'https://api.stats.example.test' };
    expect(gatewayAddresses(configFromEnv({ ...https, DATA_DIR: '/var/lib/public-stats' }, []))).toEqual({ site: 'unix:/var/lib/public-stats/nginx/site.sock', api: 'unix:/var/lib/public-stats/nginx/api.sock' });
    const deep = `/${'d'.repeat(100)}`;
    expect(() => gatewayAddresses(configFromEnv({ ...https, DATA_DIR: deep }, []))).toThrow(`The data directory ${deep} is too deep for the gateways' sockets`);
    expect(gatewayAddresses(configFromEnv({ DATA_DIR: deep }, []))).toEqual({ site: `http://127.0.0.1:${STACK_DEFAULTS.SITE_PORT}`, api: `http://127.0.0.1:${STACK_DEFAULTS.API_PORT}` });
  });

  it('states in the README, the docs and the help of the command lines the defaults the code applies', () => {
    const readme = readFileSync(path.join(ROOT_DIR, 'README.md'), 'utf8');
    const docs = readdirSync(path.join(ROOT_DIR, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'))
      .map((f) => readFileSync(path.join(ROOT_DIR, 'docs', f), 'utf8')).join('\n');
    const helps = [...Object.values(WRITER_HELP), BACKUP_USAGE].join('\n');
    for (const [where, text] of [['the README and the docs', `${readme}\n${docs}`], ['the help texts', helps]] as const) {
      const stated = statedDefaults(text, defaults);
      expect(stated.length, `${where} states no default at all: the pattern no longer finds them`).toBeGreaterThan(1);
      expect(stated.filter(([name, value]) => value !== defaults.get(name)).map(([name, value]) => `${where}: ${name} (${value}), the code's default is ${defaults.get(name)}`)).toEqual([]);
    }
    // The default addresses, in the README's table and the verifier's help.
    expect(readme).toContain(`| API host \`{api_url}\` | ${defaults.get('API_URL')} |`);
    expect(readme).toContain(`| site host \`{base_url}\` | ${defaults.get('SITE_URL')} |`);
    const verifyHelp = spawnSync(process.execPath, [path.join(ROOT_DIR, 'verify/cli.ts'), '--help'], { encoding: 'utf8' }).stdout;
    expect(verifyHelp).toContain(`(default ${defaults.get('SITE_URL')})`);
  });
});
