// A record as served: its exact JSON body and strong ETag, made once per upstream answer, and what
// is made from it, made again only when the record changes.
import { strongEtag } from './http.ts';

export interface Prepared<T> {
  value: T;
  /** The exact JSON body served for it. */
  body: string;
  etag: string;
}

export async function prepare<T>(value: T): Promise<Prepared<T>> {
  const body = `${JSON.stringify(value)}\n`;
  return { value, body, etag: await strongEtag(body) };
}

/**
 * What is made from one prepared record, made again only when that record changes (its ETag). A
 * making that failed is not kept: the next caller tries again.
 */
export function madeFrom<T, R>(make: (source: Prepared<T>) => Promise<R>): (source: Prepared<T>) => Promise<R> {
  let last: { etag: string; made: Promise<R> } | undefined;
  return (source) => {
    if (last?.etag !== source.etag) {
      const made = make(source);
      made.catch(() => { if (last?.made === made) last = undefined; });
      last = { etag: source.etag, made };
    }
    return last.made;
  };
}
