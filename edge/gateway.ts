// How the edge reaches a gateway of its own node (EDGE_API_UPSTREAM, EDGE_SITE_GATEWAY): an http
// origin, or `unix:<path>`, the socket nginx listens on when the node's public listeners are HTTPS on
// the hosts' names and no plain loopback port is open. Node's fetch cannot dial a socket; undici's
// can, with an Agent whose connections go to it
// (https://github.com/nodejs/undici/blob/main/docs/docs/api/Client.md, `connect.socketPath`).
import type { Agent, fetch as UndiciFetch } from 'undici';

export interface Gateway {
  /** Where it is, as configured: for messages. */
  address: string;
  /** The origin requests name; on a socket, any name reaches the one server that listens there. */
  origin: string;
  fetch: typeof fetch;
}

const UNIX = 'unix:';

export const isSocketAddress = (address: string) => address.startsWith(UNIX);

/** The gateway at `address`; `fetchImpl` reaches an http origin. */
export function gatewayAt(address: string, fetchImpl: typeof fetch = fetch): Gateway {
  if (!isSocketAddress(address)) return { address, origin: new URL(address).origin, fetch: fetchImpl };
  const socketPath = address.slice(UNIX.length);
  // Loaded when first used: an edge whose gateways listen on ports never holds undici.
  let client: Promise<{ fetch: typeof UndiciFetch; dispatcher: Agent }> | undefined;
  const socketFetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    client ??= import('undici').then((undici) => ({ fetch: undici.fetch, dispatcher: new undici.Agent({ connect: { socketPath } }) }));
    const { fetch: undiciFetch, dispatcher } = await client;
    // undici's fetch takes the web platform's arguments; only its own types differ from the global ones.
    return undiciFetch(input as Parameters<typeof UndiciFetch>[0], { ...(init as Parameters<typeof UndiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
  };
  return { address, origin: 'http://localhost', fetch: socketFetch as typeof fetch };
}
