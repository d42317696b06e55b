import { type Brancher, commitTurn, type Message, type Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectListedAsLoaded, msg } from './util.js';

const ids = async (store: Store, folder: string, query: string) =>
  (await store.list({ folder, query, includeArchived: true })).map((s) => s.id).sort();

/**
 * Search (DESIGN, `list`): a case-insensitive substring of the title or of ONE message's
 * text (string content and `text` parts), never across two messages, never tool
 * arguments, roles or JSON keys; results always agree with what `load` shows.
 */
export const searchSpec = defineSpec('search', 'Store', (t) => {
  t.test('query matches within one message and never across two', async (ctx) => {
    const folder = ctx.folder();
    const s = await createSession(ctx, {
      folder,
      title: 'Title End',
      messages: [msg('user', 'it ends with FOO'), msg('assistant', 'BAR starts this one')],
    });
    for (const hit of ['foo', 'bar starts', 'ends with foo', 'title end', 'TITLE']) {
      expect(await ids(ctx.store, folder, hit), `query "${hit}"`).toEqual([s.id]);
    }
    for (const miss of ['foobar', 'foo bar', 'foo\nbar', 'foo\n\nbar', 'endit', 'end it']) {
      expect(await ids(ctx.store, folder, miss), `query ${JSON.stringify(miss)}`).toEqual([]);
    }
  });

  t.test('query never matches across two commits or across title and text', async (ctx) => {
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder, title: 'alpha' });
    await commitTurn(ctx.store, s.id, { append: [msg('user', 'first half')] });
    await commitTurn(ctx.store, s.id, { append: [msg('user', 'second half')] });
    expect(await ids(ctx.store, folder, 'second half')).toEqual([s.id]);
    for (const miss of ['halfsecond', 'half\nsecond', 'half second', 'alphafirst', 'alpha first']) {
      expect(await ids(ctx.store, folder, miss), `query ${JSON.stringify(miss)}`).toEqual([]);
    }
  });

  t.test('query never matches tool arguments, roles, names or JSON keys', async (ctx) => {
    const folder = ctx.folder();
    const message = {
      role: 'assistant',
      content: 'plain words',
      name: 'speakername',
      toolCalls: [{ id: 'call1', name: 'grepper', arguments: { needle: 'zebra' } }],
      metadata: { secretkey: 'hidden value' },
    } as Message;
    const s = await createSession(ctx, { folder, messages: [message] });
    expect(await ids(ctx.store, folder, 'plain words')).toEqual([s.id]);
    for (const miss of [
      'zebra',
      'needle',
      'assistant',
      'grepper',
      'toolcalls',
      'content',
      'speakername',
      'hidden value',
      'role',
    ]) {
      expect(await ids(ctx.store, folder, miss), `query "${miss}"`).toEqual([]);
    }
  });

  t.test('query matches each text part and string messages', async (ctx) => {
    const folder = ctx.folder();
    const parts = await createSession(ctx, {
      folder,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Left Part' },
            { type: 'image', mediaType: 'image/png', url: 'https://example.invalid/ocelot.png' },
            { type: 'text', text: 'Right Part' },
          ],
        },
      ],
    });
    const bare = await createSession(ctx, { folder, messages: ['a bare string message' as never] });
    expect(await ids(ctx.store, folder, 'left part')).toEqual([parts.id]);
    expect(await ids(ctx.store, folder, 'right part')).toEqual([parts.id]);
    expect(await ids(ctx.store, folder, 'ocelot')).toEqual([]);
    expect(await ids(ctx.store, folder, 'bare string')).toEqual([bare.id]);
    expect(await ids(ctx.store, folder, 'part')).toEqual([parts.id]);
  });

  t.test(
    'query reads parts: parts[], content.parts[], typed content parts, OpenAI items',
    async (ctx) => {
      // The AI SDK's UIMessage (parts), Mastra's stored message (content.parts) and provider
      // content parts: the text of a part whose type is "text" or absent is searched; tool
      // calls, their inputs and outputs, reasoning and files are not.
      const folder = ctx.folder();
      const ui = await createSession(ctx, {
        folder,
        messages: [
          {
            id: 'm1',
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'hidden pangolin' },
              { type: 'text', text: 'Visible Okapi' },
              {
                type: 'tool-weather',
                toolCallId: 'c1',
                input: { city: 'quokka' },
                output: 'sunny axolotl',
              },
              { type: 'file', mediaType: 'text/plain', url: 'https://example.invalid/tapir.txt' },
            ],
          } as never,
        ],
      });
      const mastra = await createSession(ctx, {
        folder,
        messages: [
          {
            role: 'user',
            content: {
              format: 2,
              parts: [{ type: 'text', text: 'Mastra Capybara' }, { text: 'untyped Jerboa' }],
            },
          } as never,
        ],
      });
      const typed = await createSession(ctx, {
        folder,
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'typed Civet' },
              { type: 'reasoning', text: 'thinking Dingo' },
              { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup', input: { q: 'Gharial' } },
            ],
          } as never,
        ],
      });
      const openai = await createSession(ctx, {
        folder,
        messages: [
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'asked Margay' }],
          },
          {
            type: 'message',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'answered Fossa', annotations: [] }],
          },
          { type: 'function_call', name: 'lookup', arguments: '{"q":"Saiga"}', callId: 'c3' },
        ] as never,
      });
      expect(await ids(ctx.store, folder, 'margay')).toEqual([openai.id]);
      expect(await ids(ctx.store, folder, 'fossa')).toEqual([openai.id]);
      expect(await ids(ctx.store, folder, 'saiga')).toEqual([]);
      expect(await ids(ctx.store, folder, 'okapi')).toEqual([ui.id]);
      expect(await ids(ctx.store, folder, 'capybara')).toEqual([mastra.id]);
      expect(await ids(ctx.store, folder, 'jerboa')).toEqual([mastra.id]);
      expect(await ids(ctx.store, folder, 'civet')).toEqual([typed.id]);
      for (const miss of [
        'pangolin',
        'quokka',
        'axolotl',
        'tapir',
        'dingo',
        'gharial',
        'weather',
      ]) {
        expect(await ids(ctx.store, folder, miss), `query "${miss}"`).toEqual([]);
      }
    },
  );

  t.test('a lone surrogate in a message is searched as U+FFFD', async (ctx) => {
    // Every backend searches well-formed text: what a UTF-8 round trip would make of it.
    const folder = ctx.folder();
    const s = await createSession(ctx, {
      folder,
      messages: [{ role: 'user', content: 'broken\uD800pair' }],
    });
    expect(await ids(ctx.store, folder, 'broken\uFFFDpair')).toEqual([s.id]);
    expect(await ids(ctx.store, folder, 'pair')).toEqual([s.id]);
    expect((await ctx.store.load(s.id)).messages[0]!.content).toBe('broken\uD800pair');
  });

  t.test('a NUL in a message is never matched, not even as U+FFFD', async (ctx) => {
    // A query cannot hold NUL (invalid_argument), so no match spans one: a backend that
    // cannot store NUL in its search text must not turn it into a character a query can hold.
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder, messages: [msg('user', 'nul\u0000here')] });
    expect(await ids(ctx.store, folder, 'nul')).toEqual([s.id]);
    expect(await ids(ctx.store, folder, 'here')).toEqual([s.id]);
    for (const miss of ['nul\uFFFDhere', '\uFFFD', 'nulhere', 'nul here', 'nulAhere']) {
      expect(await ids(ctx.store, folder, miss), `query ${JSON.stringify(miss)}`).toEqual([]);
    }
  });

  t.test('case folds beyond ASCII, in titles and in messages', async (ctx) => {
    const folder = ctx.folder();
    const title = await createSession(ctx, { folder, title: 'ÄRGER im Büro' });
    const text = await createSession(ctx, { folder, messages: [msg('user', 'ΣΟΦΙΑ and ÉCOLE')] });
    expect(await ids(ctx.store, folder, 'ärger')).toEqual([title.id]);
    expect(await ids(ctx.store, folder, 'BÜRO')).toEqual([title.id]);
    expect(await ids(ctx.store, folder, 'école')).toEqual([text.id]);
    expect(await ids(ctx.store, folder, 'ÉCOLE')).toEqual([text.id]);
    expect(await ids(ctx.store, folder, 'σοφια')).toEqual([text.id]);
  });

  t.test('query never matches folder, status, model, provider, mode or metadata', async (ctx) => {
    const folder = `${ctx.folder()}/zebra`;
    await createSession(ctx, {
      folder,
      status: 'waiting',
      model: 'gnu-1',
      provider: 'yak-co',
      mode: 'plan-mode',
      metadata: { tag: 'okapi', llama: 'x' },
    });
    for (const miss of ['zebra', 'waiting', 'gnu', 'yak', 'plan-mode', 'okapi', 'llama']) {
      expect(await ids(ctx.store, folder, miss), `query "${miss}"`).toEqual([]);
    }
  });

  t.test('folder and status filters match exactly, case included', async (ctx) => {
    const base = ctx.folder();
    const upper = await createSession(ctx, { folder: `${base}/Work`, status: 'Done' });
    const lower = await createSession(ctx, { folder: `${base}/work`, status: 'done' });
    const listed = async (o: { folder?: string; status?: string }) =>
      (await ctx.store.list(o)).map((x) => x.id);
    expect(await listed({ folder: `${base}/Work` })).toEqual([upper.id]);
    expect(await listed({ folder: `${base}/work` })).toEqual([lower.id]);
    expect(await listed({ folder: `${base}/work`, status: 'Done' })).toEqual([]);
    expect(await listed({ folder: `${base}/Work`, status: 'Done' })).toEqual([upper.id]);
  });

  t.test('search follows save, replace, merge and clone', async (ctx) => {
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder, messages: [msg('user', 'original walrus')] });
    const loaded = await ctx.store.load(s.id);
    await ctx.store.save({ ...loaded, messages: [msg('user', 'saved narwhal')] });
    expect(await ids(ctx.store, folder, 'walrus')).toEqual([]);
    expect(await ids(ctx.store, folder, 'narwhal')).toEqual([s.id]);
    await commitTurn(ctx.store, s.id, { replace: [msg('user', 'replaced dugong')] });
    expect(await ids(ctx.store, folder, 'narwhal')).toEqual([]);
    expect(await ids(ctx.store, folder, 'dugong')).toEqual([s.id]);
    await expectListedAsLoaded(ctx.store, s.id);
    const b = ctx.store as Store & Partial<Brancher>;
    if (typeof b.branch !== 'function' || typeof b.merge !== 'function' || !b.clone) return;
    const child = await b.branch(s.id, 1);
    await commitTurn(ctx.store, child.id, { append: [msg('assistant', 'branch manatee')] });
    expect(await ids(ctx.store, folder, 'manatee')).toEqual([child.id]);
    await b.merge(child.id);
    expect(await ids(ctx.store, folder, 'manatee')).toEqual([child.id, s.id].sort());
    const copy = await b.clone(s.id);
    expect(await ids(ctx.store, folder, 'dugong')).toEqual([child.id, copy.id, s.id].sort());
    for (const id of [s.id, child.id, copy.id]) await expectListedAsLoaded(ctx.store, id);
  });

  t.test('filters apply before paging, exactly, on a mixed store', async (ctx) => {
    const base = ctx.folder();
    const other = `${base}x`;
    const at = (n: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, n));
    const made: { id: string; folder: string; status: string; archived: boolean; u: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const folder = i % 3 === 0 ? other : base;
      const status = i % 2 ? 'open' : 'done';
      const archived = i % 4 === 1;
      const s = await createSession(ctx, {
        folder,
        status,
        title: i % 5 === 0 ? 'needle here' : 'plain',
        // createdAt runs backwards while updatedAt runs forwards.
        createdAt: at(100 - i),
        updatedAt: at(200 + i),
        ...(archived ? { archivedAt: at(300) } : {}),
      });
      made.push({ id: s.id, folder, status, archived, u: 200 + i });
    }
    const newestFirst = (xs: typeof made) => xs.sort((a, b) => b.u - a.u).map((x) => x.id);
    const inBase = made.filter((x) => x.folder === base && !x.archived);
    // folder is exact, not a prefix.
    expect((await ctx.store.list({ folder: base })).map((s) => s.id)).toEqual(
      newestFirst([...inBase]),
    );
    // status + limit/offset after the filters.
    const open = newestFirst(inBase.filter((x) => x.status === 'open'));
    expect(
      (await ctx.store.list({ folder: base, status: 'open', limit: 2, offset: 1 })).map(
        (s) => s.id,
      ),
    ).toEqual(open.slice(1, 3));
    // after compares updatedAt (createdAt is older than every `after` here).
    const after = at(205);
    expect((await ctx.store.list({ folder: base, after })).map((s) => s.id)).toEqual(
      newestFirst(inBase.filter((x) => x.u > 205)),
    );
    // query + includeArchived + oldestFirst.
    const needles = made.filter((_, i) => i % 5 === 0 && made[i]!.folder === base);
    expect(
      (
        await ctx.store.list({
          folder: base,
          query: 'NEEDLE',
          includeArchived: true,
          oldestFirst: true,
        })
      ).map((s) => s.id),
    ).toEqual(newestFirst([...needles]).reverse());
  });

  t.test('keyset paging takes the last summary of a page as startAfter', async (ctx) => {
    const folder = ctx.folder();
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      const s = await createSession(ctx, {
        folder,
        updatedAt: new Date(Date.UTC(2024, 1, 1, 0, i % 3)),
      });
      made.push(s.id);
    }
    for (const oldestFirst of [false, true]) {
      const seen: string[] = [];
      let page = await ctx.store.list({ folder, limit: 3, oldestFirst });
      while (page.length > 0) {
        seen.push(...page.map((s) => s.id));
        page = await ctx.store.list({
          folder,
          limit: 3,
          oldestFirst,
          startAfter: page[page.length - 1]!,
        });
      }
      expect(seen).toHaveLength(7);
      expect([...seen].sort()).toEqual([...made].sort());
      const again = await ctx.store.list({ folder, limit: 7, oldestFirst });
      expect(seen).toEqual(again.map((s) => s.id));
    }
  });
});
