// The share card as PNG, rendered from its SVG by resvg (@resvg/resvg-js, a registry package with
// prebuilt binaries) with the DejaVu Sans files of the dejavu-fonts-ttf package, so the image looks
// the same on every machine and needs no system fonts. Node only: edge/serve.ts hands it to the app.
import { Resvg } from '@resvg/resvg-js';
import { createRequire } from 'node:module';
import path from 'node:path';
import { SHARE_IMAGE_FONT } from './page/share-image.ts';

const FONT_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

export function renderSharePng(svg: string): Uint8Array {
  const resvg = new Resvg(svg, {
    font: { loadSystemFonts: false, fontFiles: ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((f) => path.join(FONT_DIR, f)), defaultFontFamily: SHARE_IMAGE_FONT },
  });
  return resvg.render().asPng();
}
