// Every backend by name, each made anew on request.
import type { BackendName, TestBackend } from './backend.js';
import { FileBackend, MemoryBackend } from './embedded.js';
import { PostgresBackend } from './postgres.js';
import { RedisBackend } from './redis.js';
import { S3Backend } from './s3.js';

/** Every backend, in the order tests usually list them. */
export const BACKEND_NAMES: readonly BackendName[] = [
  'memory',
  'file',
  'postgres',
  'redis',
  'redis-cluster',
  's3',
];

/** A new backend object of that name (each has its own servers and stores). */
export function testBackend(name: BackendName): TestBackend {
  switch (name) {
    case 'memory':
      return new MemoryBackend();
    case 'file':
      return new FileBackend();
    case 'postgres':
      return new PostgresBackend();
    case 'redis':
      return new RedisBackend(false);
    case 'redis-cluster':
      return new RedisBackend(true);
    case 's3':
      return new S3Backend();
  }
}
