/**
 * The one progress bar of every command (backtest, download, optimize, walkforward): one line on
 * stderr, `<label> [#####.....]  42.0%  <detail>`, redrawn at most every `everyMs` (default 100 ms),
 * shown only when stderr is a terminal and only after `delayMs` (default half a second: short runs
 * print nothing). `done()` clears it.
 */
export class ProgressBar {
  readonly #start = performance.now();
  #last = 0;
  #shown = false;
  readonly #delayMs: number;
  readonly #everyMs: number;
  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    timing: { readonly delayMs?: number; readonly everyMs?: number } = {},
  ) {
    this.#delayMs = timing.delayMs ?? 500;
    this.#everyMs = timing.everyMs ?? 100;
  }

  /** Progress of a run: the fraction done and the events so far (their rate is shown). */
  update(fraction: number, events: number): void {
    if (!this.#due(false)) return;
    const rate = events / ((performance.now() - this.#start) / 1000);
    this.#draw(fraction, `${formatCount(events)} events  ${formatCount(rate)}/s`);
  }

  /** Progress with the caller's own detail after the bar; `last` draws it even when not yet due (the final state). */
  show(fraction: number, detail: string, last = false): void {
    if (this.#due(last)) this.#draw(fraction, detail);
  }

  /** Milliseconds since the bar was made. */
  get elapsedMs(): number {
    return performance.now() - this.#start;
  }

  #due(last: boolean): boolean {
    if (!this.stream.isTTY) return false;
    const now = performance.now();
    if (!last && (now - this.#last < this.#everyMs || now - this.#start < this.#delayMs)) return false;
    this.#last = now;
    return true;
  }

  #draw(fraction: number, detail: string): void {
    this.#shown = true;
    const width = 30;
    const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
    const filled = Math.round(f * width);
    this.stream.write(
      `\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(f * 100).toFixed(1).padStart(5)}%  ${detail}\x1b[K`,
    );
  }

  done(): void {
    if (this.#shown) this.stream.write('\r\x1b[K');
  }
}

export function formatCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(0);
}
