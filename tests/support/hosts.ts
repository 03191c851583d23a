// The shared stack's two hosts as the discovery tests ask them, and what counts as an absolute URL in
// the documents they read.
import { inject } from 'vitest';

export const site = () => inject('stack').siteUrl;
export const api = () => inject('stack').apiUrl;
export const isAbsoluteUrl = (value: unknown) => typeof value === 'string' && /^https?:\/\/[^\s#]+$/.test(value);
