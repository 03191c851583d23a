// Small HTTP helpers shared by the routes: content negotiation, strong ETags, JSON errors.

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(accept: string | null | undefined): MediaRange[] {
  if (!accept) return [];
  return accept.split(',').flatMap((part) => {
    const [range, ...params] = part.trim().split(';');
    const [type, subtype] = (range ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype) return [];
    let q = 1;
    for (const param of params) {
      const [key, value] = param.trim().split('=');
      if (key?.trim().toLowerCase() === 'q') q = Number(value);
    }
    return Number.isFinite(q) ? [{ type, subtype, q }] : [];
  });
}

/**
 * The q-value `accept` gives `mediaType`, using the most specific matching range (RFC 9110
 * §12.5.1), and whether that range named the type explicitly (not via a wildcard).
 * No Accept header at all accepts everything.
 */
export function acceptQuality(accept: string | null | undefined, mediaType: string): { q: number; explicit: boolean } {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return { q: accept ? 0 : 1, explicit: false };
  const [type, subtype] = mediaType.split('/');
  const exact = ranges.find((r) => r.type === type && r.subtype === subtype);
  if (exact) return { q: exact.q, explicit: true };
  const partial = ranges.find((r) => r.type === type && r.subtype === '*') ?? ranges.find((r) => r.type === '*' && r.subtype === '*');
  return { q: partial?.q ?? 0, explicit: false };
}

/** Markdown when the client names text/markdown and likes it at least as much as HTML. */
export function prefersMarkdown(accept: string | null | undefined): boolean {
  const md = acceptQuality(accept, 'text/markdown');
  return md.explicit && md.q > 0 && md.q >= acceptQuality(accept, 'text/html').q;
}

/** A browser (it names text/html) rather than an API client or curl's bare * / *. */
export function prefersHtml(accept: string | null | undefined): boolean {
  const html = acceptQuality(accept, 'text/html');
  return html.explicit && html.q > 0 && html.q >= acceptQuality(accept, 'application/json').q;
}

/** A strong ETag from the exact bytes sent: identical content, identical tag, across restarts. */
export async function strongEtag(body: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body)));
  let binary = '';
  for (const byte of digest.subarray(0, 18)) binary += String.fromCharCode(byte);
  return `"${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_')}"`;
}

/** If-None-Match uses the weak comparison (RFC 9110 §13.1.2), so a W/ prefix still matches. */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
}

export const NO_STORE = { 'cache-control': 'no-store' } as const;

export function jsonError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(`${JSON.stringify({ message })}\n`, {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...NO_STORE, ...headers },
  });
}
