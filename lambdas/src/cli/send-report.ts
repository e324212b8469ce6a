/** What `floe send` tells the user: progress while it runs, skipped lines, the final summary. */
import { ExitCode } from './exit-codes.ts';
import { renderTable } from './format.ts';

/** A line that was not sent: `line` is 1-based, `bytes` what it would have counted against the limit. */
export interface SkippedLine {
  readonly file: string;
  readonly line: number;
  readonly bytes: number;
  readonly reason: string;
}

export interface FileSendReport {
  readonly file: string;
  /** Records accepted by the stream. */
  sent: number;
  /** Bytes of data in them. */
  bytes: number;
  /** Records the stream rejected at least once (throttling) and that were sent again. */
  resent: number;
  skipped: number;
  blank: number;
  /** With `--aggregate`: the lines packed into the `sent` KPL aggregates. */
  userRecords?: number;
}

export interface SendReport {
  readonly stream: string;
  readonly files: readonly FileSendReport[];
  readonly sent: number;
  readonly bytes: number;
  readonly resent: number;
  readonly blank: number;
  readonly skipped: readonly SkippedLine[];
  /** 0, or {@link EXIT_LINES_SKIPPED}. */
  readonly exitCode: number;
}

/** Exit code when every sendable line was sent but some lines were skipped (exit-codes.ts: partial). */
export const EXIT_LINES_SKIPPED = ExitCode.Partial;

const count = (n: number) => n.toLocaleString('en-US');
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/** Prints a progress line at most once per interval, so long inputs show signs of life. */
export class ProgressMeter {
  private readonly startedMs: number;
  private lastMs: number;

  constructor(
    private readonly print: (s: string) => void,
    private readonly nowMs: () => number,
    private readonly everyMs = 1000,
  ) {
    this.startedMs = nowMs();
    this.lastMs = this.startedMs;
  }

  elapsedMs(): number {
    return this.nowMs() - this.startedMs;
  }

  tick(file: string, records: number, bytes: number): void {
    const now = this.nowMs();
    if (now - this.lastMs < this.everyMs) return;
    this.lastMs = now;
    const s = Math.max(0.001, (now - this.startedMs) / 1000);
    this.print(
      `  ${file}: ${count(records)} records (${mib(bytes)}) sent, ${count(Math.round(records / s))} records/s, ${mib(bytes / s)}/s`,
    );
  }
}

export function skippedMessage(s: SkippedLine): string {
  return `skipped ${s.file}:${s.line}: ${s.reason}`;
}

export function renderSendReport(r: SendReport, elapsedMs: number): string {
  const table = renderTable(
    ['file', 'sent', 'data', 'resent', 'skipped', 'blank'],
    r.files.map((f) => [
      f.file,
      count(f.sent),
      mib(f.bytes),
      count(f.resent),
      count(f.skipped),
      count(f.blank),
    ]),
  );
  const skipped =
    r.skipped.length === 0
      ? '0 skipped'
      : `${count(r.skipped.length)} skipped (listed above; exit code ${EXIT_LINES_SKIPPED})`;
  const users = r.files.reduce((n, f) => n + (f.userRecords ?? 0), 0);
  const packed = r.files.some((f) => f.userRecords !== undefined)
    ? ` (KPL aggregates holding ${count(users)} lines)`
    : '';
  return `${table}\nsent ${count(r.sent)} records${packed} (${mib(r.bytes)}) from ${r.files.length} file(s) to stream ${r.stream} in ${(elapsedMs / 1000).toFixed(1)} s: ${count(r.resent)} resent after throttling, ${skipped}, ${count(r.blank)} blank lines`;
}
