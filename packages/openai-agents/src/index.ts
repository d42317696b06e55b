/**
 * `@sessionkit/openai-agents`: the OpenAI Agents SDK's `Session` on any sessionkit store.
 *
 * ```ts
 * const session = await SessionKitSession.fromUrl('file:./sessions', { sessionId: 'chat-1' });
 * await run(agent, 'Hello', { session });
 * ```
 */
export type { SessionKitSessionOptions, SessionKitSessionUrlOptions } from './options.js';
export { SessionKitSession } from './session.js';
export type { HistoryStore, SessionFields } from './session-history.js';
