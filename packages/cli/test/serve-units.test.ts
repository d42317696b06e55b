// The viewer's pieces without a server: escaping, reading every message shape, the
// transcript's tool pairing and windows, access checks, cursors and image sniffing.

import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { externalLink, html, SafeHtml } from '../src/serve/html.js';
import { sniffImageType } from '../src/serve/message-routes.js';
import { imageOf, readMessage } from '../src/serve/messages.js';
import { requestStore } from '../src/serve/request-store.js';
import {
  allowedHostHeaders,
  bearerToken,
  contentSecurityPolicy,
  cookieValue,
  isLoopbackHost,
  tokenMatches,
} from '../src/serve/security.js';
import { cursorJustAbove } from '../src/serve/summaries.js';
import { transcriptHtml } from '../src/serve/transcript-html.js';
import { PNG_1X1 } from './helpers/serve-seed.js';

describe('html', () => {
  it('escapes every interpolated string, in text and in quoted attributes', () => {
    const title = '<script>alert(1)</script>';
    const attr = '" onerror="alert(1)';
    const out = html`<p title="${attr}">${title}</p>`.toString();
    expect(out).toBe(
      '<p title="&quot; onerror=&quot;alert(1)">&lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
  });

  it('passes nested html through once, joins arrays, renders nothing for null and booleans', () => {
    const items = ['a&b', html`<b>${'<i>'}</b>`];
    const out = html`<ul>${items.map((i) => html`<li>${i}</li>`)}${null}${false}${undefined}${0}</ul>`;
    expect(out.toString()).toBe('<ul><li>a&amp;b</li><li><b>&lt;i&gt;</b></li>0</ul>');
  });

  it('cannot be bypassed with a hand-made SafeHtml', () => {
    expect(() => new SafeHtml('<script>', Symbol('SafeHtml') as never)).toThrow(TypeError);
  });

  it('links only http(s) and mailto URLs from stored data', () => {
    expect(externalLink('javascript:alert(1)').toString()).toBe(
      '<span class="url">javascript:alert(1)</span>',
    );
    expect(externalLink('https://example.com/a?b=1&c=2').toString()).toContain(
      'href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noreferrer noopener"',
    );
  });
});

describe('readMessage', () => {
  it("reads core's Message: text, content parts and tool calls", () => {
    const m = readMessage({
      role: 'assistant',
      content: [{ type: 'text', text: 'Looking' }],
      toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.ts' } }],
    });
    expect(m.role).toBe('assistant');
    expect(m.blocks).toEqual([
      { kind: 'text', text: 'Looking' },
      {
        kind: 'tool-call',
        id: 'c1',
        name: 'read_file',
        input: { path: 'a.ts' },
        result: undefined,
      },
    ]);
    const tool = readMessage({ role: 'tool', toolCallId: 'c1', name: 'read_file', content: 'ok' });
    expect(tool.blocks).toEqual([
      {
        kind: 'tool-result',
        callId: 'c1',
        name: 'read_file',
        outcome: { output: [{ kind: 'text', text: 'ok' }], isError: false },
      },
    ]);
  });

  it('reads OpenAI chat messages: tool_calls with JSON-string arguments, tool_call_id', () => {
    const m = readMessage({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_9', type: 'function', function: { name: 'ls', arguments: '{"dir":"/"}' } },
      ],
    });
    expect(m.blocks).toEqual([
      { kind: 'tool-call', id: 'call_9', name: 'ls', input: { dir: '/' }, result: undefined },
    ]);
    const result = readMessage({ role: 'tool', tool_call_id: 'call_9', content: 'a\nb' });
    expect(result.blocks[0]).toMatchObject({ kind: 'tool-result', callId: 'call_9' });
    const image = readMessage({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }],
    });
    expect(image.blocks).toEqual([
      { kind: 'image', image: 0, source: { kind: 'url', url: 'https://example.com/cat.png' } },
    ]);
  });

  it('reads Anthropic content: thinking, tool_use, tool_result with an error, base64 images', () => {
    const m = readMessage({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm' },
        { type: 'tool_use', id: 'tu1', name: 'grep', input: { q: 'x' } },
      ],
    });
    expect(m.blocks.map((b) => b.kind)).toEqual(['reasoning', 'tool-call']);
    const stored = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'tu1', is_error: true, content: 'no such file' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1 } },
      ],
    };
    const u = readMessage(stored);
    expect(u.blocks[0]).toEqual({
      kind: 'tool-result',
      callId: 'tu1',
      name: undefined,
      outcome: { output: [{ kind: 'text', text: 'no such file' }], isError: true },
    });
    expect(imageOf(stored, 0)).toEqual({ kind: 'inline', base64: PNG_1X1, mediaType: 'image/png' });
  });

  it("reads the AI SDK's UIMessage parts: text, reasoning, tool parts with output, files", () => {
    const stored = {
      id: 'm1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: 'plan' },
        { type: 'text', text: 'Weather:' },
        {
          type: 'tool-weather',
          toolCallId: 't1',
          state: 'output-available',
          input: { city: 'Oslo' },
          output: { c: -3 },
        },
        { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${PNG_1X1}` },
        { type: 'source-url', url: 'https://example.com', title: 'Example' },
      ],
    };
    const m = readMessage(stored);
    expect(m.blocks.map((b) => b.kind)).toEqual([
      'reasoning',
      'text',
      'tool-call',
      'image',
      'link',
    ]);
    expect(m.blocks[2]).toEqual({
      kind: 'tool-call',
      id: 't1',
      name: 'weather',
      input: { city: 'Oslo' },
      result: { output: [{ kind: 'data', label: 'output', value: { c: -3 } }], isError: false },
    });
    expect(imageOf(stored, 0)).toEqual({ kind: 'inline', base64: PNG_1X1, mediaType: 'image/png' });
  });

  it("reads Mastra's stored messages (content.parts with tool invocations)", () => {
    const m = readMessage({
      id: 'x',
      role: 'assistant',
      createdAt: '2026-01-01T00:00:00Z',
      content: {
        format: 2,
        parts: [
          { type: 'text', text: 'Checking' },
          {
            type: 'tool-invocation',
            toolInvocation: {
              state: 'result',
              toolCallId: 'm1',
              toolName: 'search',
              args: { q: 'a' },
              result: 'found',
            },
          },
        ],
      },
    });
    expect(m.blocks).toEqual([
      { kind: 'text', text: 'Checking' },
      {
        kind: 'tool-call',
        id: 'm1',
        name: 'search',
        input: { q: 'a' },
        result: { output: [{ kind: 'text', text: 'found' }], isError: false },
      },
    ]);
  });

  it('reads Gemini parts and OpenAI Agents SDK items', () => {
    const g = readMessage({
      role: 'model',
      parts: [{ text: 'ok' }, { functionCall: { name: 'f', args: { a: 1 } } }],
    });
    expect(g.blocks.map((b) => b.kind)).toEqual(['text', 'tool-call']);
    const call = readMessage({
      type: 'function_call',
      callId: 'fc1',
      name: 'shell',
      arguments: '{"cmd":"ls"}',
    });
    expect(call).toEqual({
      role: 'assistant',
      name: 'shell',
      blocks: [
        { kind: 'tool-call', id: 'fc1', name: 'shell', input: { cmd: 'ls' }, result: undefined },
      ],
    });
    const out = readMessage({
      type: 'function_call_result',
      callId: 'fc1',
      output: { type: 'text', text: 'a.ts' },
    });
    expect(out.role).toBe('tool');
    expect(out.blocks[0]).toMatchObject({ kind: 'tool-result', callId: 'fc1' });
  });

  it('keeps values of unknown shape as JSON instead of dropping them', () => {
    expect(readMessage(42).blocks).toEqual([{ kind: 'data', label: 'message', value: 42 }]);
    expect(readMessage({ role: 'user', content: [{ type: 'audio', id: 'a' }] }).blocks).toEqual([
      { kind: 'data', label: 'audio', value: { type: 'audio', id: 'a' } },
    ]);
    expect(readMessage('plain').blocks).toEqual([{ kind: 'text', text: 'plain' }]);
  });
});

describe('transcriptHtml', () => {
  const base = { sessionId: 's1', remoteImages: false, branches: [], fragment: false };

  it('shows a tool call beside its result and leaves a pointer in the result message', () => {
    const out = transcriptHtml(
      {
        messages: [
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'ls', arguments: {} }] },
          { role: 'tool', toolCallId: 'c1', name: 'ls', content: 'a.ts\nb.ts' },
        ],
        offset: 10,
        messageCount: 12,
        revision: 3,
      },
      base,
    ).toString();
    const pair = out.slice(out.indexOf('id="call-10-c1"'), out.indexOf('result: message #11'));
    expect(pair).toContain('<div class="tool-result"><div class="tool-head">← result</div>');
    expect(pair).toContain('a.ts\nb.ts');
    expect(out).toContain('shown beside its call in <a href="#m10">message #11</a>');
    expect(out).toContain('Load 10 earlier messages');
    expect(out).not.toContain('Next ');
  });

  it('links to the next window when one follows, and marks where branches start', () => {
    const out = transcriptHtml(
      { messages: [{ role: 'user', content: 'hi' }], offset: 0, messageCount: 5, revision: 1 },
      {
        ...base,
        branches: [
          {
            id: 'b1',
            title: '<b>alt</b>',
            branchedAtTurn: 1,
            messageCount: 2,
          } as never,
        ],
      },
    ).toString();
    expect(out).toContain('href="/s/s1?offset=1&amp;limit=100">Next 4 messages');
    expect(out).toMatch(
      /<\/article><div class="branch-point">⎇ branch <a href="\/s\/b1">&lt;b&gt;alt/,
    );
  });

  it('folds long tool output and shows remote images as links unless allowed', () => {
    const long = 'line\n'.repeat(50);
    const messages = [
      { role: 'tool', toolCallId: 'x', content: long },
      {
        role: 'user',
        content: [{ type: 'image', mediaType: 'image/png', url: 'https://example.com/i.png' }],
      },
    ];
    const window = { messages, offset: 0, messageCount: 2, revision: 1 };
    const folded = transcriptHtml(window, base).toString();
    expect(folded).toContain('<details class="fold"><summary>line (51 lines, 250 chars)</summary>');
    expect(folded).not.toContain('<img');
    expect(folded).toContain('href="https://example.com/i.png"');
    const remote = transcriptHtml(window, { ...base, remoteImages: true }).toString();
    expect(remote).toContain('<img class="image" src="https://example.com/i.png"');
  });
});

describe('access pieces', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', 'app.localhost']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
    for (const h of ['0.0.0.0', '::', '192.168.1.5', 'example.com', '10.0.0.1']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });

  it('answers only its own loopback Host headers', () => {
    const hosts = allowedHostHeaders('127.0.0.1', 4477);
    expect(hosts.has('127.0.0.1:4477')).toBe(true);
    expect(hosts.has('localhost:4477')).toBe(true);
    expect(hosts.has('evil.example:4477')).toBe(false);
    expect(hosts.has('127.0.0.1:80')).toBe(false);
  });

  it('compares tokens whole, reads cookies and bearer headers', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abd', 'abc')).toBe(false);
    expect(tokenMatches('ab', 'abc')).toBe(false);
    expect(tokenMatches(undefined, 'abc')).toBe(false);
    expect(cookieValue('a=1; sessionkit_viewer_9=tok; b=2', 'sessionkit_viewer_9')).toBe('tok');
    expect(cookieValue('xsessionkit_viewer_9=tok', 'sessionkit_viewer_9')).toBeUndefined();
    expect(bearerToken('Bearer t0k')).toBe('t0k');
    expect(bearerToken('Basic t0k')).toBeUndefined();
  });

  it('has a strict policy: nothing by default, no inline script, no framing', () => {
    const csp = contentSecurityPolicy(false);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe|https:/);
    expect(contentSecurityPolicy(true)).toContain("img-src 'self' https: http:");
  });
});

describe('cursorJustAbove', () => {
  it('is above the id and below every larger id', () => {
    const ids = ['a', 'a-', 'a.b', 'a0', 'aa', 'b', 'Z'];
    for (const id of ids) {
      const c = cursorJustAbove(id);
      expect(c > id).toBe(true);
      for (const other of ids) if (other > id) expect(other > c, `${other} vs ${id}`).toBe(true);
    }
    const longest = `${'x'.repeat(127)}a`;
    expect(cursorJustAbove(longest)).toBe(`${'x'.repeat(127)}b`);
    expect(cursorJustAbove(longest)).toHaveLength(128);
  });
});

describe('sniffImageType', () => {
  it('recognises raster images by their bytes, never an SVG or HTML', () => {
    expect(sniffImageType(Buffer.from(PNG_1X1, 'base64'))).toBe('image/png');
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a....'))).toBe('image/gif');
    expect(
      sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>')),
    ).toBeUndefined();
    expect(sniffImageType(Buffer.from('<html><script>alert(1)</script>'))).toBeUndefined();
  });
});

describe('requestStore', () => {
  it('times read calls, refuses writes, and starts no call once the client has gone', async () => {
    const store = new MemoryStore();
    await store.create({ id: 'a', title: 'A' });
    const controller = new AbortController();
    const timing = { calls: 0, ms: 0 };
    const view = requestStore(store, controller.signal, timing);
    expect((await view.list()).map((s) => s.id)).toEqual(['a']);
    expect(timing.calls).toBe(1);
    expect(() => view.delete('a')).toThrow('the viewer is read-only: store.delete is not called');
    let listed = 0;
    const counting = new Proxy(store, {
      get(target, key, receiver) {
        if (key !== 'list') return Reflect.get(target, key, receiver);
        return () => {
          listed++;
          return Promise.resolve([]);
        };
      },
    });
    const gone = requestStore(counting, controller.signal, timing);
    controller.abort();
    await expect(gone.list()).rejects.toMatchObject({ name: 'AbortError' });
    expect(listed).toBe(0);
    expect((await store.load('a')).revision).toBe(1);
    await store.close();
  });
});
