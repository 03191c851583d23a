// Node's request listener for the edge app: a POST the app may answer from what its MCP or A2A
// endpoint kept is read here and, when it is one, answered at once with exactly the app's answer,
// without the Fetch API Request and Response, the router and the middleware the app's way takes
// (several times the work of the answer itself). Every other request, and one nothing was kept for,
// goes to the app as it came, its body with it once read.
import type { IncomingMessage, RequestListener } from 'node:http';
import type { KeptAnswers } from './app.ts';

/**
 * The Host values @hono/node-server takes as they are; it checks any other with the URL parser and
 * may refuse it, so those requests go to the app.
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

/** Decodes as the Fetch API's Request.text() does: UTF-8, a leading BOM dropped, malformed bytes replaced. */
const utf8 = new TextDecoder();

/** `app` (the app's own listener) behind the answers `kept` gives without it. */
export function withKeptAnswers(kept: KeptAnswers, app: RequestListener): RequestListener {
  return (incoming, outgoing) => {
    const path = incoming.url ?? '';
    // As the Fetch API's Headers reads them: every occurrence, joined by ", ".
    const header = (name: string) => incoming.headersDistinct[name.toLowerCase()]?.join(', ') ?? null;
    if (!PLAIN_HOST.test(incoming.headers.host ?? '') || !kept.takes(incoming.method ?? '', path, header)) {
      app(incoming, outgoing);
      return;
    }
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A client gone before its body came: nothing is left to answer.
    incoming.on('error', () => outgoing.destroy());
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const toApp = () => {
        // @hono/node-server takes a body already read from here.
        (incoming as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
        app(incoming, outgoing);
      };
      kept.answer(path, header, utf8.decode(body)).then((answer) => {
        if (!answer) return toApp();
        // As @hono/node-server writes the answer the SDK made: its headers in their order, then its length.
        outgoing.writeHead(200, { ...Object.fromEntries(answer.headers), 'content-length': Buffer.byteLength(answer.body) });
        outgoing.end(answer.body);
      }, toApp);
    });
  };
}
