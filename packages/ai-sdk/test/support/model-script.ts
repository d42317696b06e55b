// The model side of the tests: what the AI SDK's mock language models stream, step by step.
// A script holds the steps of the next model calls; a step can pause until the test lets it
// go on, so a test stops or disconnects a stream at a known point, never after a delay. A
// paused stream that is aborted fails as a provider's stream does when its fetch is aborted.

/** One part a mock model streams (`LanguageModelV3StreamPart` / `V4StreamPart`). */
export type StreamPart = { type: string } & Record<string, unknown>;

/** Where a step waits until the test calls `resume()` (or the call is aborted). */
export const PAUSE = Symbol('pause');

/** One model call's stream. */
export type Step = readonly (StreamPart | typeof PAUSE)[];

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A text block: its start, one delta per piece (a `PAUSE` piece pauses there), its end. */
export function text(id: string, ...pieces: (string | typeof PAUSE)[]): Step {
  return [
    { type: 'text-start', id },
    ...pieces.map((delta) => (delta === PAUSE ? PAUSE : { type: 'text-delta', id, delta })),
    { type: 'text-end', id },
  ];
}

/** A call of tool `toolName` with `input`. */
export function toolCall(toolCallId: string, toolName: string, input: unknown): StreamPart {
  return { type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) };
}

/** The end of a model call. */
export function finish(reason: 'stop' | 'tool-calls'): StreamPart {
  return { type: 'finish', finishReason: { unified: reason, raw: reason }, usage: USAGE };
}

/** What a mock model's `doStream` gets that the script looks at. */
interface CallOptions {
  prompt: unknown;
  abortSignal?: AbortSignal | undefined;
}

/** The steps of the next model calls, and what the model was sent. */
export class ModelScript {
  /** The prompt of every call, in order. */
  readonly prompts: unknown[] = [];
  readonly #steps: Step[] = [];
  readonly #paused = new Set<() => void>();
  #onPause: (() => void) | undefined;

  /** Queues the steps of the next calls, one step per call. */
  queue(...steps: Step[]): void {
    this.#steps.push(...steps);
  }

  /** How many queued steps no call has taken yet. */
  get pending(): number {
    return this.#steps.length;
  }

  /** Resolves when a stream reaches a `PAUSE` (or is paused already). */
  paused(): Promise<void> {
    if (this.#paused.size > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onPause = resolve;
    });
  }

  /** Lets every paused stream go on. */
  resume(): void {
    for (const go of [...this.#paused]) go();
  }

  /** The mock models' `doStream`: the next queued step as a stream. */
  readonly doStream = async (options: CallOptions) => {
    this.prompts.push(options.prompt);
    const step = this.#steps.shift();
    if (step === undefined) throw new Error('the model was called more often than scripted');
    return { stream: this.#streamOf(step, options.abortSignal) };
  };

  #streamOf(step: Step, signal: AbortSignal | undefined): ReadableStream<StreamPart> {
    const parts: (StreamPart | typeof PAUSE)[] = [{ type: 'stream-start', warnings: [] }, ...step];
    return new ReadableStream<StreamPart>({
      pull: async (controller) => {
        const part = parts.shift();
        if (part === undefined) return controller.close();
        if (part !== PAUSE) return controller.enqueue(part);
        await this.#pause(signal);
        if (signal?.aborted) controller.error(signal.reason);
      },
    });
  }

  #pause(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const go = () => {
        this.#paused.delete(go);
        signal?.removeEventListener('abort', go);
        resolve();
      };
      this.#paused.add(go);
      signal?.addEventListener('abort', go, { once: true });
      this.#onPause?.();
      this.#onPause = undefined;
    });
  }
}
