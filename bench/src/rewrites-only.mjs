#!/usr/bin/env node
// The rewrite figures alone (`node src/rewrites-only.mjs [backend …]`, default every
// backend that answers): popping one message of 10,000 by truncate and by replace, and a
// commit with an operationId against one without. `pnpm bench` runs them too.
import { BACKENDS } from './backends/index.mjs';
import { operationIdCost, popCost } from './rewrites.mjs';

const wanted = process.argv.slice(2);
for (const backend of BACKENDS) {
  if (wanted.length > 0 && !wanted.includes(backend.name)) continue;
  const available = await backend.available();
  if (available !== true) {
    console.log(`${backend.name}: skipped, ${available}`);
    continue;
  }
  try {
    for (const [what, run] of [
      ['pop one of 10000', (o) => popCost(o.store, 10000, 10, o.bytesWritten)],
      ['operationId', (o) => operationIdCost(o.store, 10, 200)],
    ]) {
      const opened = await backend.open();
      try {
        console.log(`${backend.name}: ${what}: ${JSON.stringify(await run(opened))}`);
      } finally {
        await opened.close();
      }
    }
  } finally {
    await backend.end?.();
  }
}
