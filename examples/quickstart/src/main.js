// The sessionkit quickstart: one conversation's life on a store opened from a URL.
//
// Only STORE_URL names a backend: by default the file store in ./.sessions, which keeps
// everything across runs. Everything below uses the contracts every first-party adapter
// implements, so another backend (SESSIONKIT_STORE_URL=memory: or a postgres:// URL, with
// that adapter installed) is the only change.
import {
  autoTitle,
  detectCapabilities,
  isSessionKitError,
  newSession,
  openStore,
} from '@sessionkit/core';

const STORE_URL = process.env.SESSIONKIT_STORE_URL || 'file:./.sessions';

const step = (title) => console.log(`\n== ${title}`);
const show = (label, value) => console.log(`   ${label.padEnd(14)} ${value}`);
const quote = (text) => JSON.stringify(text);

const store = await openStore(STORE_URL);
try {
  step(`open ${STORE_URL}`);
  show('capabilities', detectCapabilities(store).join(', '));
  // Sessions of earlier runs are still there: the file store is durable.
  const earlier = await store.list({ limit: 1000, includeArchived: true });
  show('stored', `${earlier.length} session(s) from earlier runs`);
  const startedAt = new Date(Date.now() - 1);

  // 1. A new session: newSession() makes the id, store.create() stores it at revision 1.
  step('create a session');
  const session = await store.create(
    newSession({ folder: '/work/parser', model: 'gpt-5', provider: 'openai' }),
  );
  show('id', session.id);
  show('revision', session.revision);
  show('title', quote(session.title));

  // 2. Two turns. Each commit appends the turn's messages and updates counters in one
  //    atomic step; expectedRevision makes it fail with `conflict` if someone else wrote.
  step('commit two turns');
  const turn1 = await store.commit(session.id, {
    expectedRevision: session.revision,
    append: [
      { role: 'user', content: 'Why does the parser drop comments?' },
      { role: 'assistant', content: 'The lexer skips them before the parser sees them.' },
    ],
    increment: { turnCount: 1, tokenCount: 180, costUsd: 0.0021 },
  });
  show('turn 1', `revision ${turn1.revision}, ${turn1.messageCount} messages`);
  const turn2 = await store.commit(session.id, {
    expectedRevision: turn1.revision,
    append: [
      { role: 'user', content: 'Keep them as trivia tokens instead.' },
      { role: 'assistant', content: 'Done: comments are now attached to the next token.' },
    ],
    increment: { turnCount: 1, tokenCount: 240, costUsd: 0.0029 },
    patch: { status: 'waiting-for-user', metadata: { ticket: 'PARSE-42' } },
  });
  show('turn 2', `revision ${turn2.revision}, ${turn2.messageCount} messages`);

  // 3. A title from the first user message (only while the title is empty).
  step('auto-title');
  const titled = autoTitle(await store.load(session.id));
  await store.commit(session.id, { patch: { title: titled.title } });
  show('title', quote(titled.title));

  // 4. Branch at the end of turn 2. `atTurn` counts messages: the branch starts with the
  //    parent's first 4 messages. Merging back needs the parent to still end there.
  step('branch at the end of turn 2');
  const branch = await store.branch(session.id, turn2.messageCount);
  show('branch id', branch.id);
  show('parentId', branch.parentId);
  show('branchedAt', `${branch.branchedAtTurn} messages`);

  step('commit on the branch');
  const onBranch = await store.commit(branch.id, {
    append: [
      { role: 'user', content: 'Also keep blank lines as trivia.' },
      { role: 'assistant', content: 'Blank lines are kept too.' },
    ],
    increment: { turnCount: 1, tokenCount: 150, costUsd: 0.0018 },
  });
  show('branch', `revision ${onBranch.revision}, ${onBranch.messageCount} messages`);

  // 5. Merge fast-forwards the parent to the branch's history.
  step('merge the branch back');
  const merged = await store.merge(branch.id);
  show('parent', `revision ${merged.revision}, ${merged.messages.length} messages`);
  show('children', merged.children.join(', '));

  // 6. A second session in another folder.
  step('create a second session in another folder');
  const other = await store.create(
    newSession({ folder: '/work/website', title: 'Landing page copy' }),
  );
  await store.commit(other.id, {
    append: [{ role: 'user', content: 'Write a headline for the pricing page.' }],
    increment: { turnCount: 1 },
  });
  show('id', other.id);
  show('folder', other.folder);

  // 7. Listing returns summaries (no messages), newest first. `after` keeps this run's.
  step("list this run's sessions, newest first");
  for (const s of await store.list({ after: startedAt })) {
    const kind = s.parentId ? `branch of ${s.parentId}` : 'root';
    console.log(
      `   ${s.id}  ${s.folder.padEnd(13)} ${String(s.messageCount).padStart(2)} msgs  ${quote(s.title)} (${kind})`,
    );
  }

  step('list the /work/parser folder');
  for (const s of await store.list({ folder: '/work/parser', after: startedAt })) {
    console.log(`   ${s.id}  ${quote(s.title)}`);
  }

  // 8. Search: a case-insensitive substring of the title or of any message text.
  for (const query of ['trivia', 'PRICING', 'kubernetes']) {
    step(`search ${quote(query)}`);
    const hits = await store.list({ query, after: startedAt });
    if (hits.length === 0) console.log('   (no hits)');
    for (const s of hits) console.log(`   ${s.id}  ${quote(s.title)}  ${s.messageCount} msgs`);
  }

  // 9. An event in the session's append-only log, and runtime status kept apart from the
  //    transcript (commits never overwrite it).
  step('append an event');
  const event = await store.append(session.id, 'tool.run', { tool: 'pnpm test', exitCode: 0 });
  show('event', `#${event.sequence} ${event.type} at revision ${event.revision}`);

  step('save runtime status');
  await store.saveRuntimeStatus(session.id, { checks: { tests: 'passed', lint: 'passed' } });
  show('status', JSON.stringify(await store.loadRuntimeStatus(session.id)));

  // 10. Errors carry stable codes: branch on the code, never on the message.
  step('a stale write is refused');
  try {
    await store.commit(session.id, { expectedRevision: 1, append: [] });
  } catch (e) {
    if (!isSessionKitError(e, 'conflict')) throw e;
    show('error code', e.code);
    show('message', e.message);
  }

  step('the session at the end');
  const final = await store.load(session.id);
  show('title', quote(final.title));
  show('revision', final.revision);
  show('messages', final.messages.length);
  show('status', final.status);
  show('metadata', JSON.stringify(final.metadata));
} finally {
  await store.close();
}
