// One shared stack (empty database) for the whole test run; files that stop parts of a stack start their own.
import type { TestProject } from 'vitest/node';
import { buildRuntime } from '../../stack/runtime-build.ts';
import { startTestStack } from './stack.ts';

export interface SharedStack {
  apiUrl: string;
  siteUrl: string;
  anonKey: string;
  jwtSecret: string;
  adminUrl: string;
  writerUrl: string;
  postgrestUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: SharedStack;
  }
}

export default async function setup(project: TestProject) {
  // The stacks run the edge's bundle, as `npm start` does, made from the sources under test.
  await buildRuntime();
  const stack = await startTestStack();
  const { cfg } = stack;
  project.provide('stack', {
    apiUrl: cfg.apiUrl,
    siteUrl: cfg.siteUrl,
    anonKey: cfg.ANON_KEY,
    jwtSecret: cfg.JWT_SECRET,
    adminUrl: stack.db.adminUrl,
    writerUrl: stack.db.urlFor('stats_writer'),
    postgrestUrl: `http://${cfg.bindHost}:${cfg.postgrestPort}`,
  });
  return () => stack.destroy();
}
