export { defaultFileStoreDir } from './default-dir.js';
export { FORMAT_NAME, FORMAT_VERSION } from './format/version.js';
export { dirFromFileUrl, storeAdapter } from './open.js';
export type { FileStoreOptions } from './options.js';
export type { TranscriptStats } from './store/context.js';
export { FileStore } from './store.js';
