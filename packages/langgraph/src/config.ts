// What the saver reads from LangGraph's configs and options, and small helpers of its calls.
import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointRecord } from './records.js';
import type { SessionAddress } from './sessions.js';

/**
 * The thread and namespace of `config`; undefined without a thread id unless `required`,
 * when it throws `Error`. Throws `Error` for a namespace that is not a string.
 */
export function addressOf(
  config: RunnableConfig,
  call: string,
  required: boolean,
): SessionAddress | undefined {
  const configurable = config?.configurable;
  const threadId = configurable?.thread_id;
  if (threadId === undefined || threadId === null || threadId === '') {
    if (!required) return undefined;
    throw new Error(
      `[sessionkit/langgraph] ${call}: config.configurable.thread_id is required (graph.invoke(input, { configurable: { thread_id: "…" } }))`,
    );
  }
  const namespace = configurable?.checkpoint_ns ?? '';
  if (typeof namespace !== 'string')
    throw new Error(
      `[sessionkit/langgraph] ${call}: config.configurable.checkpoint_ns must be a string`,
    );
  return { threadId: String(threadId), namespace };
}

/** The checkpoint id of `config` (`checkpoint_id`, or LangGraph's older `thread_ts`). */
export function checkpointIdOf(config: RunnableConfig): string | undefined {
  const id = config.configurable?.checkpoint_id ?? config.configurable?.thread_ts;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** `record` when it exists and is before `before`. */
export async function* singleRecord(
  record: CheckpointRecord | undefined,
  before: string | undefined,
): AsyncGenerator<CheckpointRecord> {
  if (record !== undefined && (before === undefined || record.id < before)) yield record;
}

/** Whether two metadata values are equal as JSON. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
