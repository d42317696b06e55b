// Stored values (format/records.ts, session/commit.ts): keys, number ranges and nesting depth.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { codeOf, tempFolders } from './helpers.js';

const freshDir = tempFolders().storeDir;

describe('value limits', () => {
  it('__proto__, constructor and prototype keys round-trip as own keys', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    const odd = JSON.parse('{"__proto__":{"x":1},"constructor":"c","prototype":[1]}');
    const meta = JSON.parse('{"__proto__":"m","constructor":"k"}');
    await s.create({
      id: 'p',
      messages: [{ role: 'user', content: 'hi', ...odd } as Message],
      state: odd,
      metadata: meta,
    });
    await s.commit('p', {
      patch: { metadata: JSON.parse('{"__proto__":"patched","prototype":"p"}') },
      append: [{ role: 'user', content: 'x', ...odd } as Message],
    });
    await s.append('p', 'ev', odd);
    await s.saveRuntimeStatus('p', odd);
    await s.close();
    const t = new FileStore({ dir });
    const loaded = await t.load('p');
    const own = (o: unknown, k: string) => Object.hasOwn(o as object, k);
    for (const m of loaded.messages) {
      expect(own(m, '__proto__')).toBe(true);
      expect(JSON.stringify(m)).toContain('"__proto__":{"x":1}');
    }
    expect(own(loaded.state, '__proto__')).toBe(true);
    expect(JSON.stringify(loaded.state)).toBe(JSON.stringify(odd));
    expect(loaded.metadata).toEqual(
      JSON.parse('{"__proto__":"patched","constructor":"k","prototype":"p"}'),
    );
    expect(own(loaded.metadata, '__proto__')).toBe(true);
    const [listed] = await t.list({ limit: 1 });
    expect(own(listed!.metadata, '__proto__')).toBe(true);
    const [event] = await t.events('p');
    expect(JSON.stringify(event!.payload)).toBe(JSON.stringify(odd));
    expect(JSON.stringify(await t.loadRuntimeStatus('p'))).toBe(JSON.stringify(odd));
    const window = await t.loadMessages('p', { last: 1 });
    expect(own(window[0], '__proto__')).toBe(true);
    await t.close();
  });

  it('an increment whose result leaves the range is invalid_argument, nothing written', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    await s.create({ id: 'c', tokenCount: Number.MAX_SAFE_INTEGER, costUsd: 1.7e308 });
    const logBytes = () =>
      readdirSync(join(dir, 'sessions', 'c'))
        .filter((n) => n.startsWith('log-'))
        .reduce((a, n) => a + readFileSync(join(dir, 'sessions', 'c', n)).length, 0);
    expect(
      await codeOf(s.commit('c', { increment: { tokenCount: Number.MAX_SAFE_INTEGER } })),
    ).toBe('invalid_argument');
    expect(await codeOf(s.commit('c', { increment: { costUsd: 1.7e308 } }))).toBe(
      'invalid_argument',
    );
    expect(logBytes()).toBe(0);
    const after = await new FileStore({ dir }).load('c');
    expect(after.revision).toBe(1);
    expect(after.tokenCount).toBe(Number.MAX_SAFE_INTEGER);
    expect(after.costUsd).toBe(1.7e308);
    // -0 is stored as 0; costUsd round-trips exactly.
    await s.commit('c', { patch: { tokenCount: -0, costUsd: 0.1 + 0.2 } });
    const z = await new FileStore({ dir }).load('c');
    expect(Object.is(z.tokenCount, 0)).toBe(true);
    expect(z.costUsd).toBe(0.1 + 0.2);
    await s.close();
  });

  it('state nested 513 deep is refused before any I/O; 512 round-trips everywhere', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    const nest = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v as never;
    };
    expect(await codeOf(s.create({ id: 'deep', state: nest(513) }))).toBe('invalid_argument');
    expect(existsSync(join(dir, 'sessions', 'deep'))).toBe(false);
    await s.create({ id: 'ok', state: nest(512), messages: [nest(511)] });
    await s.commit('ok', { append: [nest(511)], patch: { state: nest(512) } });
    expect(JSON.stringify((await s.load('ok')).state)).toBe(JSON.stringify(nest(512)));
    expect((await s.list()).map((x) => x.id)).toEqual(['ok']);
    expect((await s.repair()).skippedCorrupt).toEqual([]);
    expect(await s.loadMessages('ok', { last: 1 })).toEqual([nest(511)]);
    await s.close();
  });
});
