// docker-compose.yml as Compose reads it (YAML merge keys resolved), for the tests that check it
// without a Docker engine.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT_DIR } from '../../config/checkout.ts';

export interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  profiles?: string[];
  entrypoint?: string[];
  user?: string;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
}

export const composeText = readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
export const compose = parseYaml(composeText, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
export const services = compose.services;
