// Opening a store folder on its first call: the folders, `format.json`, and the upgrade of
// an older format (index and search files rebuilt, once, under `locks/.format.lock`).

import { promises as fsp } from 'node:fs';
import { ensurePrivateDir, withFileLock, writeFileAtomic } from '@sessionkit/core/adapter';
import { FORMAT_NAME, FORMAT_VERSION, LAST_PARTLESS_SEARCH_FORMAT } from '../format/version.js';
import { rebuildIndex } from '../index-log/rebuild.js';
import { isEnoent } from '../io/fs-helpers.js';
import { replayAbandonedJournals } from '../session/journal-replay.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';

/**
 * Creates the store's folders (0700) and `format.json` and the empty index of a new
 * store; upgrades a folder of an older format. Throws `invalid_argument` when the folder
 * is a file or not a sessionkit store, `corrupt` for a newer format.
 */
export async function prepareStoreFolder(ctx: StoreContext): Promise<void> {
  const p = ctx.paths;
  try {
    await ensurePrivateDir(p.root);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw errors.make('invalid_argument', `store folder ${p.root} is not a folder`, {
        cause: e,
      });
    }
    throw e;
  }
  await ensurePrivateDir(p.sessions);
  await ensurePrivateDir(p.locks);
  await ensurePrivateDir(p.wants);
  await ensurePrivateDir(p.trash);
  await ensurePrivateDir(p.journal);
  const version = await readFormatVersion(ctx);
  if (version === FORMAT_VERSION) {
    await replayAbandonedJournals(ctx);
    return;
  }
  await withFileLock(
    p.formatLock,
    async () => {
      const again = await readFormatVersion(ctx);
      if (again === FORMAT_VERSION) return;
      // Older (or absent) format: sessions written by format 1 are read in place and
      // migrated on their next write. The search text of formats 1 to 5 left out the text
      // of message parts: the index and search files are rebuilt from the transcripts,
      // after the journals of gone writers are replayed into them.
      if (again !== undefined && again <= LAST_PARTLESS_SEARCH_FORMAT) {
        await replayAbandonedJournals(ctx);
        await rebuildIndex(ctx);
      }
      // A new store: the index exists from the start, so a missing index later means
      // damage, which the next reader repairs (see `refreshIndex`).
      else await (await fsp.open(p.index, 'a', 0o600)).close();
      await writeFileAtomic(
        p.format,
        `${JSON.stringify({ format: FORMAT_NAME, version: FORMAT_VERSION })}\n`,
      );
    },
    ctx.lockOptions,
  );
  // Journals left by an older release's writers (format 4) are replayed like ours.
  await replayAbandonedJournals(ctx);
}

/** The version `format.json` names, `undefined` when there is none. */
async function readFormatVersion(ctx: StoreContext): Promise<number | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(ctx.paths.format, 'utf8');
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
  let parsed: { format?: unknown; version?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (cause) {
    throw errors.make('corrupt', `${ctx.paths.format} is not valid JSON`, { cause });
  }
  if (parsed.format !== FORMAT_NAME || typeof parsed.version !== 'number') {
    throw errors.invalid(`${ctx.dir} is not a sessionkit file store (format.json says otherwise)`);
  }
  if (parsed.version > FORMAT_VERSION) {
    throw errors.make(
      'corrupt',
      `${ctx.dir} has format version ${parsed.version}, newer than this package reads (${FORMAT_VERSION}) — upgrade @sessionkit/file`,
    );
  }
  return parsed.version;
}
