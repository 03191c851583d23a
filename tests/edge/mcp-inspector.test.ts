// The official MCP Inspector's CLI (@modelcontextprotocol/inspector) against the live /mcp, as an
// outside client meets it: tools/list, tools/call, resources/list and resources/read all succeed and
// say what the server says.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SITE_PATHS } from '../../contract/paths.ts';

const INSPECTOR = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')), 'clients', 'launcher', 'build', 'index.js');
// The Inspector keeps a catalog of servers; a throwaway one keeps the tests off the home directory.
const home = mkdtempSync(path.join(tmpdir(), 'mcp-inspector-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function inspector(...args: string[]): Promise<any> {
  const { stdout } = await promisify(execFile)(process.execPath, [INSPECTOR, '--cli', `${inject('stack').siteUrl}${SITE_PATHS.MCP}`, ...args], {
    env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') },
    timeout: 60_000,
  });
  return JSON.parse(stdout);
}

describe('MCP Inspector CLI', () => {
  it('tools/list: the three read-only tools with their output schemas', async () => {
    const { tools } = await inspector('--method', 'tools/list');
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(['get_health', 'get_history', 'get_stats']);
    for (const tool of tools) expect(tool.outputSchema?.type).toBe('object');
  }, 60_000);

  it('tools/call get_stats: a text summary and the structured record', async () => {
    const result = await inspector('--method', 'tools/call', '--tool-name', 'get_stats');
    expect(result.isError ?? false).toBe(false);
    expect(result.content[0].text).toMatch(/^Public Stats Service/);
    expect(result.structuredContent).toHaveProperty('updated_at');
  }, 60_000);

  it('resources/list and resources/read: the latest record as JSON', async () => {
    const { resources } = await inspector('--method', 'resources/list');
    expect(resources.map((r: { uri: string }) => r.uri)).toEqual(['stats://latest']);
    const { contents } = await inspector('--method', 'resources/read', '--uri', 'stats://latest');
    expect(contents[0].mimeType).toBe('application/json');
    expect(JSON.parse(contents[0].text)).toHaveProperty('daily');
  }, 60_000);
});
