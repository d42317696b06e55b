// Writing results to stdout: with backpressure (a 100 000-row listing piped into `head`
// or a slow consumer must not buffer in memory), JSON, and colours on a terminal only.
import { once } from 'node:events';

/** Writes `text` to stdout and waits while the pipe is full. */
export async function writeOut(
  text: string,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** Writes `value` as indented JSON and a newline (dates as ISO strings). */
export function writeJson(
  value: unknown,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  return writeOut(`${JSON.stringify(value, null, 2)}\n`, out);
}

/** Whether to colour stdout: a terminal, and `NO_COLOR` unset (https://no-color.org). */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
} as const;

/** A style name for `paint`. */
export type Style = keyof typeof CODES;

/** `text` in `style` when `color` is on, else unchanged. */
export function paint(color: boolean, style: Style, text: string): string {
  if (!color) return text;
  const [on, off] = CODES[style];
  return `\u001b[${on}m${text}\u001b[${off}m`;
}

/** `text` on one line, cut to `max` code points with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** A date as `YYYY-MM-DD HH:MM` in UTC (stable across machines, sortable). */
export function shortDate(date: Date): string {
  return date.toISOString().slice(0, 16).replace('T', ' ');
}
