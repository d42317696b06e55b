import { once } from 'node:events';
import type { Command } from 'commander';
import { CliError, usageError } from '../runtime/cli-error.js';
import { storeUrlOf } from '../runtime/context.js';
import { EXIT } from '../runtime/exit-codes.js';
import { withStore } from '../runtime/open.js';
import { writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { createAccessToken, isLoopbackHost } from '../serve/security.js';
import { DEFAULT_VIEWER_PORT, startViewer, type Viewer } from '../serve/server.js';
import { integerIn } from './parsers.js';

interface ServeOptions {
  host: string;
  port: number;
  remoteImages?: boolean;
  requireToken?: boolean;
}

/** A listen error as one line saying what to do. */
function listenFailure(e: unknown, host: string, port: number): CliError {
  const code = (e as { code?: unknown }).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new CliError(
      `port ${port} on ${host} is in use — pick another with --port N (--port 0 picks a free one)`,
    );
  }
  if (code === 'EACCES')
    return new CliError(`cannot listen on ${where}: permission denied — use a port above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new CliError(
      `cannot listen on ${where}: ${host} is not an address of this machine`,
      EXIT.usage,
    );
  }
  return new CliError(
    `cannot listen on ${where}: ${e instanceof Error ? e.message : String(e)}`,
    EXIT.failure,
    { cause: e },
  );
}

/** What the command prints once the viewer listens. */
function startBanner(viewer: Viewer, display: string): string {
  const lines = [`sessionkit serve: ${display} (read-only) at ${viewer.url}`];
  if (viewer.token !== undefined) {
    const why = isLoopbackHost(viewer.host)
      ? 'requested with --require-token'
      : `listening on ${viewer.host}, reachable from other machines`;
    lines.push(
      `access token required (${why}); open this address once, then the browser keeps it in a cookie:`,
    );
  }
  lines.push(`open: ${viewer.openUrl}`, 'Ctrl-C stops the viewer.');
  return `${lines.join('\n')}\n`;
}

/** Resolves on the first SIGINT or SIGTERM (the normal way to stop a server). */
async function untilStopped(): Promise<void> {
  const stop = new AbortController();
  const handler = () => stop.abort();
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  try {
    await once(stop.signal, 'abort');
  } finally {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  }
}

/** `serve`: the read-only web viewer over any store. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('browse sessions in a read-only web viewer (this machine only by default)')
    .option(
      '--port <n>',
      'port to listen on (0 picks a free one)',
      integerIn(0, 65535),
      DEFAULT_VIEWER_PORT,
    )
    .option(
      '--host <host>',
      'address to listen on; any but loopback requires an access token',
      '127.0.0.1',
    )
    .option('--require-token', 'require the access token on loopback too (shared machines)')
    .option('--remote-images', 'show images from http(s) URLs in messages (default: links)')
    .addHelpText(
      'after',
      `
The viewer only reads: the session list (newest first, filters, search), each session's
transcript (last messages first, earlier ones on demand), metadata, state, runtime status,
events and branch tree. Every request but GET is refused; no page loads anything from
outside the process.

Examples:
  $ sessionkit serve
  $ sessionkit serve --store postgres://app@db:5432/app --port 8080
  $ sessionkit serve --store file:./sessions --port 0
  $ sessionkit serve --host 0.0.0.0        # other machines: prints a URL with an access token`,
    )
    .action((options: ServeOptions, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        if (options.host.trim() === '') throw usageError('--host must not be empty');
        const viewer = await startViewer({
          store,
          storeDisplay: display,
          host: options.host,
          port: options.port,
          remoteImages: options.remoteImages === true,
          token: options.requireToken ? createAccessToken() : undefined,
          onError: (line) => process.stderr.write(`sessionkit serve: ${line}\n`),
        }).catch((e: unknown) => {
          throw listenFailure(e, options.host, options.port);
        });
        await writeOut(startBanner(viewer, display));
        await untilStopped();
        await viewer.close();
      }),
    );
}
