export { dirFromFileUrl, storeAdapter } from './adapter.js';
export { defaultFileStoreDir } from './default-dir.js';
export { FileStore } from './file-store.js';
export { FORMAT_NAME, FORMAT_VERSION } from './format/version.js';
export type { FileStoreOptions } from './options.js';
