// PostgreSQL: the test server of the repository's .env.example, a fresh schema per store
// (the postgres adapter's own test harness makes and drops them).
import type { FullStore } from '@sessionkit/core';
import { type BackendName, LazyBackend } from './backend.js';

type Harness = typeof import('../../../packages/postgres/test/harness.js');
type PostgresStore = Parameters<Harness['destroyStore']>[0];

export class PostgresBackend extends LazyBackend {
  readonly name: BackendName = 'postgres';
  #harness: Harness | undefined;

  override async available(what: string): Promise<boolean> {
    const env = await import('../../../packages/postgres/test/env.js');
    return env.postgresAvailable(what);
  }
  protected async startOnce(): Promise<void> {
    this.#harness = await import('../../../packages/postgres/test/harness.js');
  }
  protected async stopOnce(): Promise<void> {
    await this.#harness?.endAdmin();
  }
  protected async freshStore(): Promise<FullStore<unknown>> {
    return (await (this.#harness as Harness).freshStore()) as unknown as FullStore<unknown>;
  }
  /** A store on the same schema with a pool of its own (ended with the store's). */
  protected async peerStore(store: FullStore<unknown>): Promise<FullStore<unknown>> {
    return (await (this.#harness as Harness).peerOf(
      store as unknown as PostgresStore,
    )) as unknown as FullStore<unknown>;
  }
  protected async disposeStore(store: FullStore<unknown>): Promise<void> {
    await (this.#harness as Harness).destroyStore(store as unknown as PostgresStore);
  }
}
