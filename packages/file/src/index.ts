export { dirFromFileUrl, storeAdapter } from './adapter.js';
export { defaultFileStoreDir } from './default-dir.js';
export type { FileStoreOptions } from './file-store.js';
export { FileStore } from './file-store.js';
export { FORMAT_NAME, FORMAT_VERSION } from './layout.js';
