// POST /a2a and the agent card through the site host: the A2A SDK client (protocol 1.0) from the
// card URL, and raw protocol-0.3 JSON-RPC as the service promises it (message/send).
import { Role, type Message } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { describe, expect, inject, it } from 'vitest';

const { siteUrl } = inject('stack');

const rpc = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${siteUrl}/a2a`, { method: 'POST', headers, body });

const send03 = (text: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } } });

function userMessage(text: string): Message {
  return {
    messageId: crypto.randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  };
}

describe('the agent card', () => {
  it('without A2A-Version is the 0.3 hybrid card, with non-empty supportedInterfaces', async () => {
    const res = await fetch(`${siteUrl}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toMatch(/A2A-Version/i);
    const card = await res.json();
    expect(card).toMatchObject({ name: 'Public Stats Service', url: `${siteUrl}/a2a`, protocolVersion: '0.3.0', preferredTransport: 'JSONRPC' });
    expect(card.version).toMatch(/alpha/);
    expect(card.supportedInterfaces).toEqual(expect.arrayContaining([
      expect.objectContaining({ url: `${siteUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
      expect.objectContaining({ url: `${siteUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }),
    ]));
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(['stats', 'history', 'health']);
    expect(card.capabilities.streaming).toBe(false);
  });

  it('with A2A-Version: 1.0 is the 1.0 card', async () => {
    const card = await (await fetch(`${siteUrl}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json();
    expect(card.url).toBeUndefined();
    expect(card.supportedInterfaces.length).toBeGreaterThan(0);
    expect(card.skills[0]).toMatchObject({ id: 'stats', name: expect.any(String), description: expect.any(String) });
  });
});

describe('A2A with the SDK client (protocol 1.0)', () => {
  it('sends a message and gets one Message with a text part and the stats as a data part', async () => {
    const client = await new ClientFactory().createFromUrl(siteUrl);
    const reply = await client.sendMessage({ tenant: '', message: userMessage('latest stats please'), configuration: undefined, metadata: undefined });
    const message = reply as Message;
    expect(message.role).toBe(Role.ROLE_AGENT);
    expect(message.parts).toHaveLength(2);
    const [text, data] = message.parts;
    expect(text!.content?.$case).toBe('text');
    expect(data!.content?.$case).toBe('data');
    const rest = await (await fetch(`${siteUrl}/api/stats`)).json();
    expect(data!.content?.value).toEqual(rest);
  });

  it('answers a health question with the health record', async () => {
    const client = await new ClientFactory().createFromUrl(siteUrl);
    const reply = (await client.sendMessage({ tenant: '', message: userMessage('Is the data fresh? health check'), configuration: undefined, metadata: undefined })) as Message;
    const data = reply.parts.find((p) => p.content?.$case === 'data')!.content!.value as Record<string, unknown>;
    expect(data).toMatchObject({ status: 'degraded', api_host_reachable: true });
  });
});

describe('A2A raw JSON-RPC', () => {
  it('0.3 message/send (no A2A-Version header) returns a Message, not a Task', async () => {
    const res = await rpc(send03('latest stats'));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.id).toBe(1);
    expect(body.result.kind).toBe('message');
    expect(body.result.role).toBe('agent');
    expect(body.result.parts.map((p: { kind: string }) => p.kind)).toEqual(['text', 'data']);
    expect(body.result.parts[0].text).toMatch(/not profit/);
    expect(body.result.parts[1].data.attribution.name).toBe('Public Stats Service');
  });

  it('stores no task however many messages it answers (ListTasks, protocol 1.0)', async () => {
    for (let i = 0; i < 5; i++) expect((await rpc(send03('stats'))).status).toBe(200);
    const body = await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ListTasks', params: {} }), { 'content-type': 'application/json', 'a2a-version': '1.0' })).json();
    expect(body.result).toMatchObject({ tasks: [], totalSize: 0 });
  });

  it('an unknown method gets -32601', async () => {
    const body = await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tasks/frobnicate', params: {} }))).json();
    expect(body).toMatchObject({ id: 5, error: { code: -32601 } });
  });

  it('malformed JSON gets -32700', async () => {
    const body = await (await rpc('{"jsonrpc": "2.0", "id": ')).json();
    expect(body).toMatchObject({ id: null, error: { code: -32700 } });
  });

  it('a wrong content type gets -32005', async () => {
    const body = await (await rpc(send03('stats'), { 'content-type': 'text/plain' })).json();
    expect(body.error.code).toBe(-32005);
  });

  it('a 1.0 method without the version header, and an unsupported version, get protocol errors', async () => {
    const noHeader = await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: {} }))).json();
    expect(noHeader.error.code).toBe(-32601);
    const badVersion = await (await rpc(send03('stats'), { 'content-type': 'application/json', 'a2a-version': '2.0' })).json();
    expect(badVersion.error.code).toBe(-32009);
  });
});
