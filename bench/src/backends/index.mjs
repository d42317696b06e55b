// The backends `pnpm bench` knows, in the order the page shows them.
import file from './file.mjs';
import memory from './memory.mjs';
import postgres from './postgres.mjs';
import redis from './redis.mjs';
import s3 from './s3.mjs';

export const BACKENDS = [memory, file, postgres, redis, s3];
