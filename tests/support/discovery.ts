// Shared by the discovery tests: fetching as an agent would, the OpenAPI schemas as ajv validators,
// and Redocly lint.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createRequire } from 'node:module';

// CommonJS packages under NodeNext: the class and the plugin are the default export's `default`.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

/** Redocly's CLI (a development tool here): no telemetry or update check, the tests run offline. */
const REDOCLY_ENV = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } as const;
const redoclyCli = () => createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

export const SCANNER_UA = 'Mozilla/5.0 (compatible; AgentReadinessScanner/1.0; +https://isitagentready.com)';
export const TEST_UA = 'public-stats-discovery-tests/1.0 (+tests/discovery)';

export async function get(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('user-agent')) headers.set('user-agent', TEST_UA);
  return fetch(url, { ...init, headers, redirect: 'manual' });
}

export async function getJson(url: string): Promise<{ res: Response; body: any }> {
  const res = await get(url);
  const text = await res.text();
  return { res, body: JSON.parse(text) };
}

/** Media type without parameters, lower-cased. */
export function essence(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export type OpenApi = {
  openapi: string;
  info: { version: string; description: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, any>; securitySchemes: Record<string, any>; responses: Record<string, any> };
  [extension: `x-${string}`]: unknown;
};

/**
 * An ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) that knows the document's components, so a
 * response is validated against `#/components/schemas/<name>` exactly as the document states it.
 */
export function schemaValidator(openapi: OpenApi) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // The wrapper mirrors the document's layout so `#/components/schemas/…` references resolve as written.
  ajv.addKeyword('components');
  ajv.addSchema({ $id: 'openapi.json', components: { schemas: openapi.components.schemas } });
  return (name: string, value: unknown): string[] => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
    if (!validate) throw new Error(`No schema ${name}`);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  };
}

/** The schema a documented response names, following $ref to components/responses. */
export function responseSchemaName(openapi: OpenApi, pathKey: string, method: string, status: string): string {
  let response = openapi.paths[pathKey]?.[method]?.responses?.[status];
  if (!response) throw new Error(`${method.toUpperCase()} ${pathKey} documents no ${status} response`);
  if (response.$ref) response = openapi.components.responses[String(response.$ref).split('/').pop()!];
  const ref: string | undefined = response.content?.['application/json']?.schema?.$ref;
  if (!ref) throw new Error(`${method.toUpperCase()} ${pathKey} ${status} has no JSON schema reference`);
  return ref.split('/').pop()!;
}

export interface LintResult {
  errors: string[];
  warnings: string[];
}

/** `redocly lint` with its recommended rules (which include the structural `struct` validation). */
export async function redoclyLint(document: unknown): Promise<LintResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'redocly-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const { stdout } = await promisify(execFile)(process.execPath, [redoclyCli(), 'lint', file, '--format', 'json'], {
      env: { ...process.env, ...REDOCLY_ENV },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { problems: { severity: string; ruleId: string; message: string }[] };
    const describe = (p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`;
    return {
      errors: report.problems.filter((p) => p.severity === 'error').map(describe),
      warnings: report.problems.filter((p) => p.severity === 'warn').map(describe),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
