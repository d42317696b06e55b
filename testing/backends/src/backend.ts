// The shape every backend of this package has.
import type { FullStore } from '@sessionkit/core';

/** The backends a test can run on. */
export type BackendName = 'memory' | 'file' | 'postgres' | 'redis' | 'redis-cluster' | 's3';

/**
 * One backend for tests: `start()` brings up what it needs (a server started by the test
 * run, a connection), `fresh()` gives a new store over empty data of its own (a schema, a
 * key prefix, a folder), `peer()` a second store instance over that data, `dispose()`
 * closes that store and its peers and removes its data, `stop()` ends what `start()`
 * started. `start` and `stop` are idempotent; `fresh` starts when needed.
 */
export interface TestBackend {
  readonly name: BackendName;
  /**
   * Whether the backend can run here. A missing service (PostgreSQL or Redis not answering,
   * redis-server not installed) is a warning and `false` locally, and throws under
   * `CI=true` with the command that starts it. `what` names what is skipped, for the warning.
   */
  available(what: string): Promise<boolean>;
  start(): Promise<void>;
  fresh(): Promise<FullStore<unknown>>;
  /**
   * Another store instance over the data of `store` (a `fresh()` one), as a second process
   * would open it: its own connection or client where the backend has one. Closed by
   * `dispose(store)`.
   */
  peer(store: FullStore<unknown>): Promise<FullStore<unknown>>;
  dispose(store: FullStore<unknown>): Promise<void>;
  stop(): Promise<void>;
}

/** A backend whose servers start on first use and stop once. */
export abstract class LazyBackend implements TestBackend {
  abstract readonly name: BackendName;
  #started: Promise<void> | undefined;
  readonly #peers = new Map<FullStore<unknown>, FullStore<unknown>[]>();

  async available(_what: string): Promise<boolean> {
    return true;
  }

  start(): Promise<void> {
    this.#started ??= this.startOnce().catch((e: unknown) => {
      this.#started = undefined;
      throw e;
    });
    return this.#started;
  }

  async stop(): Promise<void> {
    if (this.#started === undefined) return;
    const started = this.#started;
    this.#started = undefined;
    await started.catch(() => {});
    await this.stopOnce();
  }

  async fresh(): Promise<FullStore<unknown>> {
    await this.start();
    return this.freshStore();
  }

  async peer(store: FullStore<unknown>): Promise<FullStore<unknown>> {
    const peer = await this.peerStore(store);
    this.#peers.set(store, [...(this.#peers.get(store) ?? []), peer]);
    return peer;
  }

  async dispose(store: FullStore<unknown>): Promise<void> {
    const peers = this.#peers.get(store) ?? [];
    this.#peers.delete(store);
    for (const peer of peers) await peer.close();
    await this.disposeStore(store);
  }

  protected abstract startOnce(): Promise<void>;
  protected abstract stopOnce(): Promise<void>;
  protected abstract freshStore(): Promise<FullStore<unknown>>;
  protected abstract peerStore(store: FullStore<unknown>): Promise<FullStore<unknown>>;
  /** Closes `store` (its peers are closed already) and removes its data. */
  protected abstract disposeStore(store: FullStore<unknown>): Promise<void>;
}
