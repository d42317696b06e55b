// Listing figures: `list` of 20 of SESSIONS sessions, without a filter and with a folder,
// status or parent filter that one session in ten matches; search over the same sessions.

/** Folder, status and parent of session number `n` (each filter value: 1 in 10). */
function shapeOf(n) {
  return {
    folder: `f${n % 10}`,
    status: n % 10 === 3 ? 'review' : 'active',
    parentId: n % 10 === 7 ? 'p-root' : undefined,
  };
}

/** Median and mean time (ms) of `n` calls of `fn` (the median is what a call costs on a machine that other jobs share; the mean also carries their pauses). */
async function timed(fn, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / n;
  return { median: times[Math.floor(n / 2)], mean };
}

export async function listFigures({ store, sessions }) {
  const started = Date.now();
  await store.create({ id: 'p-root', title: 'the parent' });
  const body = (n) => [
    { role: 'user', content: `question ${n}: where is the lexer?` },
    { role: 'assistant', content: `answer ${n}: in src/lexer.ts` },
  ];
  for (let i = 0; i < sessions; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, sessions - i) }, (_, j) => {
        const n = i + j;
        return store.create({
          id: `s${String(n).padStart(6, '0')}`,
          title: `session ${n}`,
          messages: body(n === Math.floor(sessions / 2) ? 1e6 : n),
          ...shapeOf(n),
        });
      }),
    );
  }
  const fillSeconds = (Date.now() - started) / 1000;
  // One listing first, so the figures do not carry the scripts' first load on each node.
  await store.list({ limit: 20 });
  const page = (opts) => timed(() => store.list({ limit: 20, ...opts }), 40);
  const figures = {
    sessions,
    fillSeconds,
    list20: await page({}),
    folder20: await page({ folder: 'f3' }),
    status20: await page({ status: 'review' }),
    parent20: await page({ parentId: 'p-root' }),
  };
  const hits = await store.list({ query: 'QUESTION 1000000' });
  figures.hits = hits.map((s) => s.id);
  figures.searchMs = (await timed(() => store.list({ query: 'question 1000000' }), 1)).mean;
  return figures;
}
