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
 * with Brotli. Version 6 writes a commit's `operationId` in its log record (`op`) and the
 * session's last 1,000 in each snapshot's meta (`ops`), and its search text reads the text
 * of message `parts` (core's `messageText`), which earlier formats left out. Older folders
 * are read and upgraded on open: their journals are replayed, then (formats 1 to 5) the
 * index and every search file are rebuilt from the transcripts, once, under the format
 * lock — so text in `parts` is found in sessions written before; format 3's plain and
 * format 4's deflate search files are read as they are until then. Each session's
 * snapshot gets its offset table on its next write.
 */
export const FORMAT_VERSION = 6;
/** The newest format whose search text left out message `parts` (rebuilt on upgrade). */
export const LAST_PARTLESS_SEARCH_FORMAT = 5;
