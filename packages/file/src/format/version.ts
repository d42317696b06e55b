// The format's name and version, as `format.json` and every record's `v` carry them.

/** What `format.json` says the folder is. */
export const FORMAT_NAME = 'sessionkit-file';
/**
 * The current on-disk format. Version 1 kept one `session.json` per session (whole
 * session, ISO dates, no log); version 2 is snapshot + framed commit log; version 3 adds
 * a message-offset table to snapshots (windowed reads), the merge lineage to snapshot and
 * log metas, per-message byte sizes to log records, and search text with one `"A"` before
 * each message's text (version 2 used `"\n"` between messages, which let a query span two
 * messages). Older folders are read and upgraded on open (index and search files rebuilt),
 * and each session's snapshot gets its offset table on its next write.
 */
export const FORMAT_VERSION = 3;
