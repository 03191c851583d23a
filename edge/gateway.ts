// How the edge reaches a gateway of its own node (EDGE_API_UPSTREAM, EDGE_SITE_GATEWAY): an http
// origin, or `unix:<path>`, the socket nginx listens on when the node's public listeners are HTTPS on
// the hosts' names and no plain loopback port is open. Node's fetch cannot dial a socket; undici's
// can, with an Agent whose connections go to it
// (https://github.com/nodejs/undici/blob/main/docs/docs/api/Client.md, `connect.socketPath`).
import { Agent, fetch as undiciFetch } from 'undici';

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
  const dispatcher = new Agent({ connect: { socketPath: address.slice(UNIX.length) } });
  // undici's fetch takes the web platform's arguments; only its own types differ from the global ones.
  const socketFetch = (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
  return { address, origin: 'http://localhost', fetch: socketFetch as typeof fetch };
}
