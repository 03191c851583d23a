// The key directory answers signed, as its draft asks
// (https://datatracker.ietf.org/doc/draft-meunier-http-message-signatures-directory/); its key is
// imported on first use.
import { Hono } from 'hono';
import { KEY_DIRECTORY_CACHE_CONTROL, KEY_DIRECTORY_MEDIA_TYPE } from '../../contract/documents.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import type { EdgeConfig } from '../config.ts';
import { getRoute } from '../routing.ts';
import { createKeyDirectory, type KeyDirectory } from '../signing.ts';

export function createKeyDirectoryApp(cfg: Pick<EdgeConfig, 'siteUrl' | 'httpSigPrivateKey' | 'httpSigRetiredPublicKeys'>): Hono {
  const app = new Hono();
  let keyDirectory: Promise<KeyDirectory> | undefined;
  getRoute(app, SITE_PATHS.SIG_DIRECTORY, async (c) => {
    keyDirectory ??= createKeyDirectory(cfg.httpSigPrivateKey, cfg.siteUrl + SITE_PATHS.SIG_DIRECTORY, cfg.httpSigRetiredPublicKeys);
    const directory = await keyDirectory;
    const signature = await directory.signatureHeaders();
    return new Response(c.req.method === 'HEAD' ? null : directory.body, {
      headers: { 'content-type': KEY_DIRECTORY_MEDIA_TYPE, 'cache-control': KEY_DIRECTORY_CACHE_CONTROL, ...signature },
    });
  });
  return app;
}
