// The gateways' nginx templates answer for the parts behind them while those are down, so they hold
// copies of the contract's "down" health record and 503 messages (envsubst renders the templates, so
// they cannot import them). Each copy is read from its template here and held to the contract; the
// live gateways give the same bytes in tests/health-contract.test.ts and tests/edge/health-down.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { downHealth, edgeDownHealth } from '../../contract/records.ts';
import { GATEWAY_UNAVAILABLE } from '../../contract/texts/rules.ts';

const TEMPLATES = path.resolve(import.meta.dirname, '../../site/nginx/templates');

/**
 * A named location's `return` status and body, with nginx's escapes in quoted strings undone (\" \'
 * \\ and \n \r \t, as ngx_conf_read_token reads them:
 * https://github.com/nginx/nginx/blob/master/src/core/ngx_conf_file.c).
 */
function namedReturn(template: string, location: string): { status: number; body: string; block: string } {
  const text = readFileSync(path.join(TEMPLATES, template), 'utf8');
  // The block ends at the brace that closes a line of its own: the bodies hold braces too.
  const block = new RegExp(`location ${location} \\{([\\s\\S]*?)\\n\\s*\\}\\n`).exec(text)?.[1];
  if (!block) throw new Error(`${template} has no location ${location}`);
  const match = /return (\d{3}) '((?:[^'\\]|\\.)*)';/.exec(block);
  if (!match) throw new Error(`location ${location} in ${template} returns no quoted body`);
  const escapes: Record<string, string> = { n: '\n', r: '\r', t: '\t' };
  return { status: Number(match[1]), body: match[2]!.replace(/\\(.)/g, (_, c: string) => escapes[c] ?? c), block };
}

const jsonLine = (value: unknown) => `${JSON.stringify(value)}\n`;

describe("the gateways' copies of the contract", () => {
  it('the API host says the "down" health record, checked now, while PostgREST does not answer', () => {
    const { status, body } = namedReturn('api.conf.template', '@health_down');
    expect(status).toBe(200);
    expect(body).toBe(jsonLine(downHealth('$now_utc')));
  });

  it('the site host says it with api_host_reachable null while the edge does not answer', () => {
    const { status, body } = namedReturn('site.conf.template', '@health_edge_down');
    expect(status).toBe(200);
    expect(body).toBe(jsonLine(edgeDownHealth('$site_now_utc')));
  });

  it("each host's 503 is the contract's sentence, with Retry-After", () => {
    for (const [template, location, message] of [
      ['api.conf.template', '@stats_unavailable', GATEWAY_UNAVAILABLE.api],
      ['site.conf.template', '@edge_unavailable', GATEWAY_UNAVAILABLE.site],
    ] as const) {
      const { status, body, block } = namedReturn(template, location);
      expect(status).toBe(503);
      expect(body).toBe(jsonLine({ message }));
      expect(block).toMatch(/add_header Retry-After "30" always;/);
    }
  });
});
