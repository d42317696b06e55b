// Test support: an HTTP proxy in front of an S3 server that ignores conditional headers
// (s3rver 3.7.1), enforcing the conditional-write rules Amazon S3 documents:
//   - PutObject with `If-None-Match: *` writes only when the key does not exist, else
//     412 PreconditionFailed; any other If-None-Match value on a write is 501 NotImplemented.
//   - PutObject / DeleteObject with `If-Match: <etag>` write only when the key exists with
//     that ETag: an absent key is 404 NoSuchKey, another ETag is 412 PreconditionFailed.
//   - A conditional write on a key while another write on that key is in flight is
//     409 ConditionalRequestConflict ("retry the request").
// The check and the forwarded write run under one per-key lock, so the rules hold
// atomically for every request that goes through this proxy. Reads and listings pass
// through untouched.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running proxy: its port and counters, and `stop()`. */
export interface ConditionalWriteProxy {
  readonly port: number;
  /** How the proxy answered conditional writes, for tests. */
  readonly counts: { preconditionFailed: number; conflicts: number; forwarded: number };
  /** Writes in flight or queued on the key `/<bucket>/<key>`, for tests that race one. */
  writesInFlight(path: string): number;
  stop(): Promise<void>;
}

/** An S3 error response with the XML body S3 sends. */
function sendS3Error(res: http.ServerResponse, status: number, code: string, message: string) {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
    `<Message>${message}</Message><RequestId>proxy</RequestId></Error>`;
  res.writeHead(status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** `bucket/key` of a path-style request, or undefined for service/bucket-level requests. */
function objectPath(url: string): string | undefined {
  const path = url.split('?')[0] ?? '';
  const [bucket, ...rest] = path.replace(/^\//, '').split('/');
  if (!bucket || rest.length === 0 || rest.join('/') === '') return undefined;
  return decodeURIComponent(path);
}

/** The current ETag of an object on the upstream server, or undefined when absent. */
function upstreamEtag(upstreamPort: number, path: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: upstreamPort, method: 'HEAD', path: encodeURI(path) },
      (res) => {
        res.resume();
        if (res.statusCode === 404) resolve(undefined);
        else if (res.statusCode === 200) resolve(String(res.headers.etag ?? ''));
        else reject(new Error(`upstream HEAD ${path}: ${res.statusCode}`));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** What the upstream answered to a forwarded request. */
interface Forwarded {
  status: number;
  etag: string | undefined;
}

/** Forwards the request as it is (headers, body) and streams the answer back. */
function forward(
  upstreamPort: number,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<Forwarded> {
  return new Promise((resolve) => {
    const up = http.request(
      {
        host: '127.0.0.1',
        port: upstreamPort,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (upRes) => {
        const answer = {
          status: upRes.statusCode ?? 502,
          etag: typeof upRes.headers.etag === 'string' ? upRes.headers.etag : undefined,
        };
        res.writeHead(answer.status, upRes.headers);
        upRes.pipe(res);
        upRes.on('end', () => resolve(answer));
        upRes.on('error', () => resolve({ status: 502, etag: undefined }));
      },
    );
    up.on('error', () => {
      if (!res.headersSent) sendS3Error(res, 503, 'ServiceUnavailable', 'upstream unreachable');
      else res.destroy();
      resolve({ status: 503, etag: undefined });
    });
    req.pipe(up);
  });
}

const sameEtag = (a: string, b: string) => a.replace(/^W\//, '') === b.replace(/^W\//, '');

/**
 * Starts the proxy on `port` (default: a free loopback port) in front of the S3 server on `upstreamPort`
 * (path-style requests only, as the tests' clients send them).
 */
export async function startConditionalWriteProxy(
  upstreamPort: number,
  port = 0,
): Promise<ConditionalWriteProxy> {
  const counts = { preconditionFailed: 0, conflicts: 0, forwarded: 0 };
  /**
   * ETags of keys as the writes through this proxy left them (null: absent), so a
   * conditional write needs no HEAD upstream when the proxy saw the key's last write.
   * Cleared by any other kind of write (e.g. a multi-object delete).
   */
  const known = new Map<string, string | null>();
  /**
   * One request per key at a time: s3rver writes files in place, so a read overlapping a
   * write of the same key could see half an object, which S3 never shows.
   */
  const keyLocks = new Map<string, Promise<void>>();
  async function withKeyLock<T>(path: string, work: () => Promise<T>): Promise<T> {
    const previous = keyLocks.get(path) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => (release = resolve));
    const chained = previous.then(() => mine);
    keyLocks.set(path, chained);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (keyLocks.get(path) === chained) keyLocks.delete(path);
    }
  }
  const etagOf = async (path: string) => {
    if (known.has(path)) return known.get(path) ?? undefined;
    const etag = await upstreamEtag(upstreamPort, path);
    known.set(path, etag ?? null);
    return etag;
  };

  /** Writes in flight (or queued) per key: what makes a concurrent conditional write a 409. */
  const writers = new Map<string, number>();

  async function handleWrite(
    path: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<void> {
    const ifNoneMatch = req.headers['if-none-match'];
    const ifMatch = req.headers['if-match'];
    const conditional = ifNoneMatch !== undefined || ifMatch !== undefined;
    if (conditional && (writers.get(path) ?? 0) > 0) {
      counts.conflicts++;
      req.resume();
      return sendS3Error(
        res,
        409,
        'ConditionalRequestConflict',
        'A conflicting conditional operation is currently in progress against this resource. Please try again.',
      );
    }
    writers.set(path, (writers.get(path) ?? 0) + 1);
    try {
      // Unconditional writes queue behind the one in flight (last writer wins, as on S3).
      await withKeyLock(path, () => writeUnderLock(path, req, res, conditional));
    } finally {
      const left = (writers.get(path) ?? 1) - 1;
      if (left > 0) writers.set(path, left);
      else writers.delete(path);
    }
  }

  /** Checks the condition against the key's ETag and forwards the write. */
  async function writeUnderLock(
    path: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    conditional: boolean,
  ): Promise<void> {
    const ifNoneMatch = req.headers['if-none-match'];
    const ifMatch = req.headers['if-match'];
    try {
      if (conditional) {
        if (ifNoneMatch !== undefined && ifNoneMatch !== '*') {
          req.resume();
          return sendS3Error(res, 501, 'NotImplemented', 'If-None-Match only accepts *');
        }
        const etag = await etagOf(path);
        const failed =
          (ifNoneMatch === '*' && etag !== undefined) ||
          (typeof ifMatch === 'string' && etag !== undefined && !sameEtag(ifMatch, etag));
        if (typeof ifMatch === 'string' && etag === undefined) {
          req.resume();
          return sendS3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
        }
        if (failed) {
          counts.preconditionFailed++;
          req.resume();
          return sendS3Error(
            res,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
          );
        }
      }
      counts.forwarded++;
      known.delete(path);
      const answer = await forward(upstreamPort, req, res);
      if (answer.status === 200 && req.method === 'PUT' && answer.etag)
        known.set(path, answer.etag);
      if ((answer.status === 204 || answer.status === 200) && req.method === 'DELETE') {
        known.set(path, null);
      }
    } catch {
      req.resume();
      if (!res.headersSent) sendS3Error(res, 503, 'ServiceUnavailable', 'upstream unreachable');
    }
  }

  const server = http.createServer((req, res) => {
    const path = req.url === undefined ? undefined : objectPath(req.url);
    const isObjectWrite =
      path !== undefined &&
      (req.method === 'PUT' || req.method === 'DELETE') &&
      !/[?&]uploadId=|[?&]partNumber=/.test(req.url ?? '');
    if (isObjectWrite) void handleWrite(path, req, res);
    else if (path !== undefined && (req.method === 'GET' || req.method === 'HEAD')) {
      void withKeyLock(path, () => forward(upstreamPort, req, res));
    } else if (req.method === 'GET' || req.method === 'HEAD') void forward(upstreamPort, req, res);
    else {
      known.clear();
      void forward(upstreamPort, req, res).then(() => known.clear());
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    counts,
    writesInFlight: (path) => writers.get(path) ?? 0,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
