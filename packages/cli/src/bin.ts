#!/usr/bin/env node
import { main } from './main.js';

// A reader that stops early (`sessionkit list --all | head`) closes the pipe: that is not
// an error of the command.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

// The exit code is set, not forced, so pending writes to stdout/stderr reach a pipe.
process.exitCode = await main();
