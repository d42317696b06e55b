// Connection strings of the local test services: the environment, else the repository's
// .env.example (one source of truth, as the packages' tests read it).
import { readFileSync } from 'node:fs';

/** `$name`, else its line in .env.example, else undefined. */
export function testSetting(name) {
  if (process.env[name]) return process.env[name];
  const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  return new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1];
}
