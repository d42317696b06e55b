// The format's name and version, as `format.json` and every record's `v` carry them.

/** What `format.json` says the folder is. */
export const FORMAT_NAME = 'sessionkit-file';
/**
 * The current on-disk format. Version 1 kept one `session.json` per session (whole
 * session, ISO dates, no log); version 2 is snapshot + framed commit log; version 3 adds
 * a message-offset table to snapshots (windowed reads), the merge lineage to snapshot and
 * log metas, per-message byte sizes to log records, and search text with one `"A"` before
 * each message's text (version 2 used `"\n"` between messages, which let a query span two
 * messages). Version 4 stores search text compressed (`search.txt` as deflated chunks,
 * see `search-codec.ts`). Version 5 makes commits durable through the store's commit
 * journal, written in place inside allocated space (`io/commit-journal.ts`; format 4
 * journals were appended to, and only with `sync: 'group'`), and compresses search text
 * with Brotli. Older folders are read and upgraded on open (format 1 and 2: index and
 * search files rebuilt; format 3: nothing to rebuild, its plain search files are read as
 * they are and compressed on their next append or by `repair()`; format 4: nothing to
 * rebuild, its journals are replayed and its deflate chunks read as they are), and each
 * session's snapshot gets its offset table on its next write.
 */
export const FORMAT_VERSION = 5;
/** The newest format whose search files were plain text (read as they are). */
export const LAST_PLAIN_SEARCH_FORMAT = 3;
