/** A Ctrl-C handler for one long operation. */
export interface Interrupt {
  /** Aborted by the first SIGINT: core's helpers stop at their next safe point. */
  signal: AbortSignal;
  /** Removes the handler (call when the operation ends). */
  dispose(): void;
}

/**
 * Turns the first SIGINT into an abort of `signal`, so the operation stops between two
 * sessions and leaves the target consistent and resumable. A second SIGINT exits at once
 * with 130 (a session may then be half-copied; running the command again completes it).
 */
export function onInterrupt(label: string, err: NodeJS.WritableStream = process.stderr): Interrupt {
  const controller = new AbortController();
  const handler = () => {
    if (controller.signal.aborted) {
      err.write(`${label}: stopped immediately\n`);
      process.exit(130);
    }
    err.write(`\n${label}: stopping at the next safe point (Ctrl-C again to quit now)\n`);
    controller.abort();
  };
  process.on('SIGINT', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
    },
  };
}
