// S3: s3rver behind the conditional-write proxy, started by this run on free loopback ports
// (or the endpoint of SESSIONKIT_TEST_S3_URL); a fresh key prefix per store (the s3
// adapter's own test support starts the servers, makes prefixes and removes them).
import type { FullStore } from '@sessionkit/core';
import { type BackendName, LazyBackend } from './backend.js';

type Harness = typeof import('../../../packages/s3/test/harness.js');
type S3Store = Parameters<Harness['destroyStore']>[1];
type S3Target = import('../../../packages/s3/test/support/s3-server.js').S3Target;

export class S3Backend extends LazyBackend {
  readonly name: BackendName = 's3';
  #harness: Harness | undefined;
  #target: S3Target | undefined;

  protected async startOnce(): Promise<void> {
    const { startTarget } = await import('../../../packages/s3/test/support/s3-server.js');
    this.#harness = await import('../../../packages/s3/test/harness.js');
    this.#target = await startTarget();
  }

  protected async stopOnce(): Promise<void> {
    const target = this.#target;
    this.#target = undefined;
    if (target === undefined) return;
    this.#harness?.releaseClient(target);
    await target.stop();
  }

  protected async freshStore(): Promise<FullStore<unknown>> {
    return (await (this.#harness as Harness).storeOn(
      this.#target as S3Target,
    )) as unknown as FullStore<unknown>;
  }

  /** A store on the same prefix, borrowing the target's shared client. */
  protected async peerStore(store: FullStore<unknown>): Promise<FullStore<unknown>> {
    return (await (this.#harness as Harness).storeOn(
      this.#target as S3Target,
      (store as unknown as S3Store).prefix,
    )) as unknown as FullStore<unknown>;
  }

  protected async disposeStore(store: FullStore<unknown>): Promise<void> {
    await (this.#harness as Harness).destroyStore(
      this.#target as S3Target,
      store as unknown as S3Store,
    );
  }
}
