// What the chat store reads of an AI SDK `UIMessage`, and the mark it leaves on a stored
// reply that did not complete. Messages are otherwise stored exactly as the SDK made them.
import { errors } from './errors.js';

/**
 * The part of a `UIMessage` the chat store relies on. Every AI SDK `UIMessage` (6.x and
 * 7.x) has this shape, so a chat store can be typed with an application's own
 * `UIMessage<Metadata, DataParts, Tools>`.
 */
export interface UIMessageLike {
  id: string;
  role: 'system' | 'user' | 'assistant';
  parts: readonly unknown[];
  metadata?: unknown;
}

/**
 * Why a stored reply is partial: `aborted` (the stream was aborted, e.g. a stop button or
 * the request's abort signal), `failed` (the stream failed), `interrupted` (the stream ended
 * without finishing: the client disconnected and the response was cancelled).
 */
export type PartialReason = 'aborted' | 'failed' | 'interrupted';

/** The mark on a stored reply that did not complete: the message's `partial` property. */
export interface PartialReply {
  reason: PartialReason;
}

const PARTIAL_REASONS: readonly string[] = ['aborted', 'failed', 'interrupted'];

/**
 * The partial-reply mark of a loaded message (`{ reason }`), or `undefined` for a message
 * that completed or was never a reply. Pure; reads only the `partial` property, which the
 * SDK's own message schema ignores (`validateUIMessages` accepts and drops it).
 */
export function partialReply(message: unknown): PartialReply | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const mark = (message as { partial?: unknown }).partial;
  if (typeof mark !== 'object' || mark === null) return undefined;
  const reason = (mark as { reason?: unknown }).reason;
  return typeof reason === 'string' && PARTIAL_REASONS.includes(reason)
    ? { reason: reason as PartialReason }
    : undefined;
}

/**
 * A copy of `message` carrying the mark of `reason`, or without any mark when `reason` is
 * undefined (a continuation that completed a reply that had been cut short).
 */
export function withPartialMark<M extends UIMessageLike>(
  message: M,
  reason: PartialReason | undefined,
): M {
  const { partial: _previous, ...rest } = message as M & { partial?: unknown };
  return (reason === undefined ? rest : { ...rest, partial: { reason } }) as M;
}

/** True when the message holds something to keep (a part other than `step-start`). */
export function hasContent(message: UIMessageLike): boolean {
  return message.parts.some((part) => (part as { type?: unknown } | null)?.type !== 'step-start');
}

/** The `id` of a stored message, or `undefined` when it has none. */
export function idOf(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

/** True for a stored message whose role is `user`. */
export function isUserMessage(message: unknown): boolean {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { role?: unknown }).role === 'user'
  );
}

/**
 * Throws `invalid_argument` unless `message` is a `UIMessage`: an object with a string
 * `id`, a `role` of `system`, `user` or `assistant` (exactly `role` when given) and a
 * `parts` array. `what` names it in the message.
 */
export function assertUIMessage(
  message: unknown,
  what: string,
  role?: UIMessageLike['role'],
): asserts message is UIMessageLike {
  const problem = uiMessageProblem(message, role);
  if (problem !== undefined) throw errors.invalid(`${what} ${problem}`);
}

function uiMessageProblem(message: unknown, role: string | undefined): string | undefined {
  if (typeof message !== 'object' || message === null) return 'must be a UIMessage object';
  const m = message as Partial<Record<keyof UIMessageLike, unknown>>;
  if (typeof m.id !== 'string') return 'must have a string id';
  if (!Array.isArray(m.parts)) return 'must have a parts array';
  if (m.role !== 'system' && m.role !== 'user' && m.role !== 'assistant') {
    return 'must have the role "system", "user" or "assistant"';
  }
  if (role !== undefined && m.role !== role) return `must have the role "${role}", got "${m.role}"`;
  return undefined;
}
