// TODO(helper): StashStore
export {};
