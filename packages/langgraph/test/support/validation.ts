// LangGraph's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation:
// validate(), all of it, plus deltaChannelHistoryTests) against SessionKitSaver on one
// backend, each checkpointer on a fresh store of its own.
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import type { FullStore } from '@sessionkit/core';
import { type BackendName, testBackend } from '@sessionkit/test-backends';
import { SessionKitSaver } from '../../src/index.js';

/** Runs the whole suite on `name` (a loud skip when its service is missing). */
export function validateOn(name: BackendName): void {
  const backend = testBackend(name);
  const stores = new Map<SessionKitSaver, FullStore<unknown>>();
  let available = true;
  const initializer = {
    checkpointerName: `SessionKitSaver on ${name}`,
    beforeAllTimeout: 120_000,
    async beforeAll() {
      available = await backend.available(`the LangGraph validation suite on ${name} did not run`);
      if (available) await backend.start();
    },
    async afterAll() {
      await backend.stop();
    },
    async createCheckpointer() {
      if (!available) throw new Error(`${name} is not available here`);
      const store = await backend.fresh();
      const saver = new SessionKitSaver(store);
      stores.set(saver, store);
      return saver;
    },
    async destroyCheckpointer(saver: SessionKitSaver) {
      const store = stores.get(saver);
      stores.delete(saver);
      if (store !== undefined) await backend.dispose(store);
    },
  };
  validate(initializer);
  deltaChannelHistoryTests(initializer);
}
