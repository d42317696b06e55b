// TODO(helper): writeFileAtomic
export {};
