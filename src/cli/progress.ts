/**
 * A one-line progress bar on stderr, redrawn at most every 100 ms, shown only when stderr is a
 * terminal and the run lasts longer than half a second (short runs print nothing).
 */
export class ProgressBar {
  readonly #start = performance.now();
  #last = 0;
  #shown = false;
  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  update(fraction: number, events: number): void {
    if (!this.stream.isTTY) return;
    const now = performance.now();
    if (now - this.#last < 100 || now - this.#start < 500) return;
    this.#last = now;
    this.#shown = true;
    const width = 30;
    const f = Math.max(0, Math.min(1, fraction));
    const filled = Math.round(f * width);
    const rate = events / ((now - this.#start) / 1000);
    const line = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(f * 100).toFixed(1).padStart(5)}%  ${formatCount(events)} events  ${formatCount(rate)}/s`;
    this.stream.write(`\r${line}\x1b[K`);
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
