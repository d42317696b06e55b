// Bytes stored per message: a 200-turn conversation of ~1 KB messages, `MEMORY USAGE` of
// every key of the session against the JSON of its messages.

const KEY_NAMES = {
  meta: 'header hash',
  messages: 'messages',
  text: 'search texts',
  ledger: 'write ledger',
  ledgerPrevious: 'write ledger (previous)',
  operations: 'operation ids',
  operationOrder: 'operation id order',
};

const turnMessages = (t) => [
  { role: 'user', content: `question ${t}: ${'Why does the parser drop comments? '.repeat(28)}` },
  {
    role: 'assistant',
    content: `answer ${t}: ${'Because the lexer skips them early. '.repeat(28)}`,
  },
];

/** { jsonBytes, storedBytes, perKey: [[name, bytes]] } of a 200-turn session. */
export async function bytesFigures({ store, client, keys }) {
  const id = 'bytes';
  await store.create({ id, title: 'bytes per message' });
  let jsonBytes = 0;
  for (let t = 0; t < 200; t++) {
    const append = turnMessages(t);
    for (const m of append) jsonBytes += Buffer.byteLength(JSON.stringify(m));
    await store.commit(id, { append, increment: { turnCount: 1, tokenCount: 500 } });
  }
  const k = keys.session(id);
  const perKey = [];
  for (const [field, name] of Object.entries(KEY_NAMES)) {
    const bytes = Number((await client.call('MEMORY', 'USAGE', k[field], 'SAMPLES', '0')) ?? 0);
    if (bytes > 0) perKey.push([name, bytes]);
  }
  const storedBytes = perKey.reduce((sum, [, b]) => sum + b, 0);
  return { messages: 400, jsonBytes, storedBytes, perKey };
}
