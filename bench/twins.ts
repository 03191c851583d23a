// The reference each path is compared with: a bare nginx serving, as a static file, the very bytes that
// path sends (its body as it goes on the wire, compressed where the path's answer is), on the same
// machine. A path and its twin are measured one right after the other, so a change in the machine's
// speed between them is small.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findNginx } from '../stack/nginx.ts';
import { freePort, startChild, waitUntil, type Child } from '../stack/processes.ts';

export interface Answer {
  body: Buffer;
  contentType: string;
  contentEncoding?: string;
  headers: Record<string, string>;
}

/** The answer to a GET exactly as sent: no content coding undone. */
export function rawAnswer(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`));
        const flat = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
        resolve({ body: Buffer.concat(chunks), contentType: flat['content-type'] ?? 'application/octet-stream', contentEncoding: flat['content-encoding'], headers: flat });
      });
    }).on('error', reject);
  });
}

export interface Twins {
  /** The URL that serves `answer`'s bytes as a static file, with `extraHeaders` if given. */
  url(name: string): string;
  child: Child;
  dir: string;
}

/**
 * One nginx (two workers, as the stack's) serving each answer at /<name>, as a static site is usually
 * served (sendfile on, as in Debian's stock nginx.conf); `directives` are added to an answer's location.
 */
export async function startTwins(answers: Record<string, Answer & { extraHeaders?: Record<string, string>; directives?: string }>): Promise<Twins> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-twins-'));
  mkdirSync(path.join(dir, 'html'));
  const port = await freePort();
  const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const locations = Object.entries(answers).map(([name, answer]) => {
    writeFileSync(path.join(dir, 'html', name), answer.body);
    const headers = { ...(answer.contentEncoding ? { 'Content-Encoding': answer.contentEncoding } : {}), ...answer.extraHeaders };
    return `    location = /${name} { types { } default_type ${quoted(answer.contentType)};${Object.entries(headers).map(([k, v]) => ` add_header ${k} ${quoted(v)};`).join('')} ${answer.directives ?? ''} }`;
  });
  writeFileSync(path.join(dir, 'nginx.conf'), `
worker_processes 2; pid ${dir}/nginx.pid; error_log stderr warn; daemon off;
events { worker_connections 4096; }
http {
  access_log off; sendfile on; keepalive_requests 100000; open_file_cache max=64;
  client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp; uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;
  server {
    listen 127.0.0.1:${port}; root ${dir}/html;
${locations.join('\n')}
  }
}`);
  execFileSync('chmod', ['-R', 'a+rwX', dir]);
  const child = startChild('static-nginx', findNginx(), ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { log: () => {} });
  const url = (name: string) => {
    if (!(name in answers)) throw new Error(`no static twin named ${name}`);
    return `http://127.0.0.1:${port}/${name}`;
  };
  await waitUntil('static nginx', async () => (await fetch(url(Object.keys(answers)[0]!))).ok, 10_000, child);
  return { url, child, dir };
}
