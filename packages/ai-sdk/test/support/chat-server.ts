// A chat server as an application writes one, on Node's `http`: `POST /api/chat` takes the
// last message (`receiveMessage`), streams a reply with one AI SDK version's wiring and
// saves it with the chat store's callback; `POST /api/chat/:id/stop` aborts the chat's
// generation. A client that goes away cancels the response stream, as the SDK's own
// `pipeUIMessageStreamToResponse` does.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline, Readable } from 'node:stream';
import { isSessionKitError } from '@sessionkit/core';
import type { ChatStore } from '../../src/index.js';
import type { ModelScript } from './model-script.js';
import type { SdkVersion, TestMessage } from './sdk.js';

export interface ChatServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Resolves once the reply of every chat request so far is saved (rejects when a save failed). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export async function startChatServer(options: {
  sdk: SdkVersion;
  chats: ChatStore<TestMessage>;
  script: ModelScript;
}): Promise<ChatServer> {
  const { sdk, chats, script } = options;
  const model = sdk.model(script);
  const generations = new Map<string, AbortController>();
  const saves: Promise<void>[] = [];

  const postChat = async (req: IncomingMessage, res: ServerResponse) => {
    const { id, message } = JSON.parse(await bodyOf(req)) as { id: string; message: TestMessage };
    const messages = await sdk.validate(await chats.receiveMessage(id, message));
    const generation = new AbortController();
    generations.set(id, generation);
    // The SDK calls the chat store's callback once per reply, when the stream ends or is
    // cancelled: `settled()` waits for that save, however late the SDK notices a client gone.
    let saved!: { resolve: () => void; reject: (e: unknown) => void };
    saves.push(new Promise<void>((resolve, reject) => (saved = { resolve, reject })));
    const response = await sdk
      .streamReply({
        model,
        messages,
        abortSignal: generation.signal,
        chats,
        chatId: id,
        saving: (save) => {
          save.then(saved.resolve, saved.reject);
          return save;
        },
      })
      .catch((e: unknown) => {
        saved.reject(e); // no stream, so no callback: settled() must not wait for one
        throw e;
      });
    send(res, response);
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const stop = /^\/api\/chat\/([^/]+)\/stop$/.exec(req.url ?? '');
    if (req.method === 'POST' && req.url === '/api/chat') await postChat(req, res);
    else if (req.method === 'POST' && stop !== null) {
      generations.get(stop[1] as string)?.abort();
      res.writeHead(204).end();
    } else res.writeHead(404).end();
  };

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      const status = isSessionKitError(e, 'conflict') ? 409 : 500;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    settled: async () => {
      while (saves.length > 0) await saves.shift();
    },
    close: async () => {
      script.resume();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends a web `Response` (the SDK's stream) on a Node response; a client that leaves cancels it. */
function send(res: ServerResponse, response: Response): void {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  pipeline(Readable.fromWeb(response.body as never), res, () => {});
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}
