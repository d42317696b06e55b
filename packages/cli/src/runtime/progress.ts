// Progress of long operations (migrate, export, import, repair, prune) on stderr: a bar
// with counts, rate and ETA on a terminal, plain periodic lines otherwise (logs, CI, pipes).
import type { Progress } from '@sessionkit/core';

/** How progress is shown: a redrawn bar, periodic lines, or nothing. */
export type ProgressMode = 'bar' | 'lines' | 'off';

/** Receives core's `onProgress` reports and shows them. */
export interface ProgressView {
  /** Shows `progress` (cheap: called once per item; redraws are throttled). */
  report(progress: Progress): void;
  /**
   * Shows the final state of the current phase and releases the terminal line.
   * `completed` false (after an interruption or a failure) leaves out "done".
   */
  finish(completed?: boolean): void;
}

/** The mode for `--progress` (`auto` picks a bar on a terminal) and `--quiet`. */
export function progressMode(
  option: string | undefined,
  quiet: boolean,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressMode {
  if (quiet || option === 'off') return 'off';
  if (option === 'bar' || option === 'lines') return option;
  return stream.isTTY ? 'bar' : 'lines';
}

/** Tracks one phase: when it started, for rate and ETA. */
class PhaseClock {
  readonly phase: string;
  readonly startedAt = Date.now();
  last: Progress;

  constructor(progress: Progress) {
    this.phase = progress.phase;
    this.last = progress;
  }

  /** Items per second since the phase began. */
  rate(): number {
    const seconds = (Date.now() - this.startedAt) / 1000;
    return seconds > 0 ? this.last.done / seconds : 0;
  }
}

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** One progress line: `label: phase done/total (pct) rate/s ETA …`. */
export function progressLine(label: string, clock: PhaseClock, final: boolean): string {
  const { done, total } = clock.last;
  const rate = clock.rate();
  const rateText = `${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s`;
  if (total === undefined || total <= 0) {
    return `${label}: ${clock.phase} ${done}${final ? ' done' : ''} ${rateText}`;
  }
  const pct = ((100 * done) / total).toFixed(1);
  const tail = final
    ? `done in ${formatSeconds((Date.now() - clock.startedAt) / 1000)}`
    : `ETA ${formatSeconds(rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY)}`;
  return `${label}: ${clock.phase} ${done}/${total} (${pct}%) ${rateText} ${tail}`;
}

/**
 * Periodic plain lines: one every `intervalMs` while a phase runs, and a final one for a
 * phase that printed any (a phase that ends within the interval prints nothing).
 */
class LineView implements ProgressView {
  #clock: PhaseClock | undefined;
  #printedAt = 0;
  #printed = false;

  constructor(
    private readonly label: string,
    private readonly intervalMs: number,
    private readonly out: NodeJS.WritableStream,
  ) {}

  report(progress: Progress): void {
    if (this.#clock?.phase !== progress.phase) {
      this.finish(true);
      this.#clock = new PhaseClock(progress);
      this.#printedAt = this.#clock.startedAt;
    }
    this.#clock.last = progress;
    if (Date.now() - this.#printedAt >= this.intervalMs) this.#print(false);
  }

  finish(completed = true): void {
    if (this.#clock && this.#printed) this.#print(completed);
    this.#clock = undefined;
    this.#printed = false;
  }

  #print(final: boolean): void {
    const clock = this.#clock;
    if (!clock) return;
    this.out.write(`${progressLine(this.label, clock, final)}\n`);
    this.#printedAt = Date.now();
    this.#printed = true;
  }
}

/** The minimal part of cli-progress's SingleBar this view uses. */
interface Bar {
  start(total: number, start: number, payload?: object): void;
  update(value: number, payload?: object): void;
  setTotal(total: number): void;
  stop(): void;
}
type BarConstructor = new (options: object) => Bar;

/** A redrawn bar on a terminal (cli-progress), one bar per phase. */
class BarView implements ProgressView {
  #clock: PhaseClock | undefined;
  #bar: Bar | undefined;

  constructor(
    private readonly label: string,
    private readonly SingleBar: BarConstructor,
    private readonly out: NodeJS.WriteStream,
  ) {}

  report(progress: Progress): void {
    if (this.#clock?.phase !== progress.phase) {
      this.finish();
      this.#clock = new PhaseClock(progress);
      const known = progress.total !== undefined && progress.total > 0;
      this.#bar = new this.SingleBar({
        stream: this.out,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 50,
        fps: 10,
        format: known
          ? `${this.label} {phase} [{bar}] {value}/{total} {percentage}% | {rate}/s | ETA {eta_formatted}`
          : `${this.label} {phase} {value} | {rate}/s`,
      });
      this.#bar.start(known ? progress.total! : 0, 0, { phase: progress.phase, rate: '0' });
    }
    this.#clock.last = progress;
    if (progress.total !== undefined && progress.total > 0) this.#bar?.setTotal(progress.total);
    this.#bar?.update(progress.done, {
      phase: progress.phase,
      rate: Math.round(this.#clock.rate()),
    });
  }

  finish(_completed = true): void {
    this.#bar?.stop();
    this.#bar = undefined;
    this.#clock = undefined;
  }
}

const silent: ProgressView = { report() {}, finish() {} };

/**
 * A view for `label` (the command's name) in `mode`. `intervalMs` spaces the plain lines
 * (default 2 s). The bar library is loaded only when a bar is shown.
 */
export async function createProgressView(
  label: string,
  mode: ProgressMode,
  intervalMs = 2000,
  out: NodeJS.WriteStream = process.stderr,
): Promise<ProgressView> {
  if (mode === 'off') return silent;
  if (mode === 'lines') return new LineView(label, intervalMs, out);
  const lib = (await import('cli-progress')) as unknown as {
    default?: { SingleBar: BarConstructor };
    SingleBar?: BarConstructor;
  };
  const SingleBar = lib.SingleBar ?? lib.default?.SingleBar;
  if (!SingleBar) return new LineView(label, intervalMs, out);
  return new BarView(label, SingleBar, out);
}
