// TODO(helper): exportSessions / importSessions
export {};
