import { homedir } from 'node:os';
import { join, win32 } from 'node:path';

/**
 * Where a `FileStore` keeps sessions when no `dir` is given, following each platform's
 * convention for per-user application data:
 *
 * - Linux and other Unix: `$XDG_DATA_HOME/sessionkit/sessions`, or
 *   `~/.local/share/sessionkit/sessions` when `XDG_DATA_HOME` is unset, empty or relative
 *   (the XDG spec says to ignore relative values);
 * - macOS: `~/Library/Application Support/sessionkit/sessions`;
 * - Windows: `%LOCALAPPDATA%\sessionkit\sessions`, or `~\AppData\Local\sessionkit\sessions`.
 *
 * Pure: reads `env` and `platform` (defaults: `process.env`, `process.platform`) and the
 * home folder; creates nothing. Never throws.
 */
export function defaultFileStoreDir(
  env: Record<string, string | undefined> = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA;
    const base = local ? local : win32.join(home, 'AppData', 'Local');
    return win32.join(base, 'sessionkit', 'sessions');
  }
  if (platform === 'darwin') {
    return join(home, 'Library', 'Application Support', 'sessionkit', 'sessions');
  }
  const xdg = env.XDG_DATA_HOME;
  const base = xdg?.startsWith('/') ? xdg : join(home, '.local', 'share');
  return join(base, 'sessionkit', 'sessions');
}
