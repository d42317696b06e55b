// The backends without a server: the memory store, and the file store in a temp folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FullStore } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { MemoryStore } from '@sessionkit/memory';
import { type BackendName, LazyBackend } from './backend.js';

/** A new `MemoryStore` per `fresh()`. */
export class MemoryBackend extends LazyBackend {
  readonly name: BackendName = 'memory';
  protected async startOnce(): Promise<void> {}
  protected async stopOnce(): Promise<void> {}
  protected async freshStore(): Promise<FullStore<unknown>> {
    return new MemoryStore<unknown>();
  }
  protected async peerStore(store: FullStore<unknown>): Promise<FullStore<unknown>> {
    return new MemoryStore<unknown>({ backend: (store as MemoryStore<unknown>).backend });
  }
  protected async disposeStore(store: FullStore<unknown>): Promise<void> {
    await store.close();
  }
}

/** A `FileStore` in a new private temp folder per `fresh()`, removed by `dispose()`. */
export class FileBackend extends LazyBackend {
  readonly name: BackendName = 'file';
  readonly #dirs = new Map<FullStore<unknown>, string>();
  protected async startOnce(): Promise<void> {}
  protected async stopOnce(): Promise<void> {
    for (const dir of this.#dirs.values()) rmSync(dir, { recursive: true, force: true });
    this.#dirs.clear();
  }
  protected async freshStore(): Promise<FullStore<unknown>> {
    const dir = mkdtempSync(join(tmpdir(), 'sk-backend-file-'));
    const store = new FileStore<unknown>({ dir: join(dir, 'store') });
    this.#dirs.set(store, dir);
    return store;
  }
  protected async peerStore(store: FullStore<unknown>): Promise<FullStore<unknown>> {
    return new FileStore<unknown>({ dir: join(this.#dirs.get(store) as string, 'store') });
  }
  protected async disposeStore(store: FullStore<unknown>): Promise<void> {
    await store.close();
    const dir = this.#dirs.get(store);
    this.#dirs.delete(store);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
