/**
 * The errno code of a file system or process error (`'ENOENT'`, `'EEXIST'` …), or
 * `undefined` when `e` carries no string `code` (including `null` and non-objects).
 */
export function errnoCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
