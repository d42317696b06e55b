// TODO(helper): withFileLock
export {};
