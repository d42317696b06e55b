#!/usr/bin/env node
// One step of a support conversation per run, on the store at SESSIONKIT_STORE_URL (default
// the file store in ./.threads), so each run is a restart:
//   node src/main.js ask "Where is order 1042?"      a turn on thread support-1042
//   node src/main.js branch "Cancel it instead"      the same thread again, from its first answer
//   node src/main.js threads                         the threads, newest first
// Then `sessionkit list --store <url> --folder langgraph` shows the same threads.
import { HumanMessage } from '@langchain/core/messages';
import { SessionKitSaver } from '@sessionkit/langgraph';
import { supportGraph } from './graph.js';

const url = process.env.SESSIONKIT_STORE_URL ?? 'file:./.threads';
const thread = { configurable: { thread_id: process.env.THREAD_ID ?? 'support-1042' } };
const [command, text] = process.argv.slice(2);

const checkpointer = await SessionKitSaver.fromUrl(url);
try {
  const graph = supportGraph(checkpointer);
  if (command === 'ask') {
    const state = await graph.invoke({ messages: [new HumanMessage(text)] }, thread);
    console.log(
      JSON.stringify({ answer: state.messages.at(-1).content, messages: state.messages.length }),
    );
  } else if (command === 'branch') {
    // The checkpoint right after the first answer, from the thread's history (newest first).
    let firstAnswer;
    for await (const snapshot of graph.getStateHistory(thread)) {
      if (snapshot.values.messages?.length === 2 && snapshot.next.length === 0)
        firstAnswer = snapshot;
    }
    const state = await graph.invoke({ messages: [new HumanMessage(text)] }, firstAnswer.config);
    console.log(
      JSON.stringify({ answer: state.messages.at(-1).content, messages: state.messages.length }),
    );
  } else if (command === 'threads') {
    const { threads } = await checkpointer.threads();
    console.log(
      JSON.stringify(threads.map((t) => ({ threadId: t.threadId, sessionId: t.sessionId }))),
    );
  } else {
    console.error('usage: main.js ask <text> | branch <text> | threads');
    process.exitCode = 2;
  }
} finally {
  await checkpointer.close();
}
