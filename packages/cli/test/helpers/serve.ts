// Running `sessionkit serve` as an operator does (the built binary, `--port 0`), and plain
// HTTP requests with full control of method and headers (fetch cannot set `Host`).
import { request as httpRequest } from 'node:http';
import { type CliRun, type RunOptions, startCli } from './run-cli.js';

/** A running `sessionkit serve` and what it printed. */
export interface ServeProcess {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** The address it printed to open (with `?token=` when one is required). */
  openUrl: string;
  /** Everything printed so far. */
  output(): { stdout: string; stderr: string };
  /** Stops it with SIGTERM and waits for the exit. */
  stop(): Promise<CliRun>;
}

/** Starts `sessionkit serve --port 0 args…` and resolves once it prints its address. */
export async function startServe(args: string[], options: RunOptions = {}): Promise<ServeProcess> {
  const run = startCli(['serve', '--port', '0', ...args], { timeoutMs: 600_000, ...options });
  const openUrl = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /^open: (\S+)$/m.exec(run.out.stdout);
      if (m?.[1]) resolve(m[1]);
    };
    run.child.stdout?.on('data', check);
    run.done.then(
      (r) => reject(new Error(`sessionkit serve exited with ${r.code}: ${r.stderr}`)),
      reject,
    );
    check();
  });
  const url = /^sessionkit serve: .* at (\S+)$/m.exec(run.out.stdout)?.[1] ?? openUrl;
  return {
    url,
    openUrl,
    output: () => ({ ...run.out }),
    stop: () => {
      run.child.kill('SIGTERM');
      return run.done;
    },
  };
}

/** An answer, body as text. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  bytes: Buffer;
}

/** One HTTP request (no redirects followed). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: bytes.toString('utf8'),
            bytes,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
