import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { msg, tempFolders } from './helpers.js';

const freshDir = tempFolders().storeDir;

describe('search', () => {
  it('matches within one message, never across two (also after appends)', async () => {
    const s = new FileStore({ dir: freshDir() });
    await s.create({ id: 'q', messages: [msg('Hello one'), msg('two')] });
    await s.commit('q', {
      append: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'three' },
            { type: 'text', text: 'four' },
          ],
        },
      ],
    });
    await s.commit('q', { append: [msg('five')] });
    const ids = async (query: string) => (await s.list({ query })).map((x) => x.id);
    expect(await ids('one\ntwo')).toEqual([]);
    expect(await ids('onetwo')).toEqual([]);
    expect(await ids('fourfive')).toEqual([]);
    expect(await ids('four\nfive')).toEqual([]);
    expect(await ids('three\nfour')).toEqual(['q']); // parts of one message
    expect(await ids('hello one')).toEqual(['q']);
    await s.close();
  });
});
