/** Told what a model download is doing: the engine never writes to the console itself. */
export interface DownloadReporter {
  /** A line to say before anything is downloaded (what, how big, where). */
  notice(line: string): void;
  /** A download began; its size is known. */
  start(name: string, totalBytes: number, dest: string): void;
  progress(name: string, doneBytes: number, totalBytes: number): void;
  done(name: string, path: string, bytes: number): void;
}

/** A stream like process.stderr: where the reporter writes. */
export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Bytes for people: 469 KB, 1.1 GB. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n;
  let i = -1;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i] ?? "B"}`;
}

/**
 * Progress on a stream (stderr): on a terminal, one line rewritten in place at most ten times a second;
 * elsewhere (a log, a pipe), a line when a download starts and one when it ends.
 */
export function streamReporter(sink: TextSink, now: () => number = Date.now): DownloadReporter {
  const tty = Boolean(sink.isTTY);
  let lastDraw = 0;
  let started = 0;
  let shown = false;
  const clear = () => {
    if (shown) sink.write("\r\x1b[2K");
    shown = false;
  };
  return {
    notice(line) {
      clear();
      sink.write(`dissent: ${line}\n`);
    },
    start(name, total, dest) {
      started = now();
      clear();
      sink.write(`dissent: downloading ${name} (${formatBytes(total)}) into ${dest}\n`);
    },
    progress(name, done, total) {
      if (!tty) return;
      const t = now();
      if (t - lastDraw < 100 && done < total) return;
      lastDraw = t;
      const pct = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;
      const secs = Math.max(0.001, (t - started) / 1000);
      const filled = Math.round(pct / 5);
      const bar = `[${"#".repeat(filled)}${".".repeat(20 - filled)}]`;
      const line = `dissent: ${name} ${bar} ${pct}% ${formatBytes(done)} / ${formatBytes(total)} (${formatBytes(done / secs)}/s)`;
      const width = Math.max(20, (sink.columns ?? 80) - 1);
      sink.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
      shown = true;
    },
    done(name, path, bytes) {
      clear();
      sink.write(`dissent: downloaded ${name} (${formatBytes(bytes)}) to ${path}\n`);
    },
  };
}

/** A reporter that says nothing (a library caller that did not ask). */
export const silentReporter: DownloadReporter = { notice: () => undefined, start: () => undefined, progress: () => undefined, done: () => undefined };
