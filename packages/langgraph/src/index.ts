/**
 * `@sessionkit/langgraph`: a LangGraph.js checkpointer on any sessionkit store.
 *
 * ```ts
 * const checkpointer = await SessionKitSaver.fromUrl('file:./threads');
 * const graph = workflow.compile({ checkpointer });
 * ```
 */
export { sessionIdFor, type ThreadState } from './ids.js';
export {
  SessionKitSaver,
  type SessionKitSaverOptions,
  type SessionKitSaverUrlOptions,
} from './saver.js';
export type { ThreadInfo, ThreadPage } from './sessions.js';
