// Small figures helpers for the benchmarks: percentiles of latency samples and the peak resident set
// size of a process (Linux /proc), so every bench reports the same way.
import { readFileSync } from 'node:fs';

/** The q-quantile (0..1) of `sorted` (ascending), nearest-rank; NaN when empty. */
export function quantile(sorted: Float64Array | readonly number[], q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
  return sorted[rank];
}

/** Peak resident set size of `pid` in bytes (VmHWM), or undefined when the process or field is gone. */
export function peakRssBytes(pid: number): number | undefined {
  return statusField(pid, 'VmHWM');
}

/** Current resident set size of `pid` in bytes (VmRSS), or undefined. */
export function rssBytes(pid: number): number | undefined {
  return statusField(pid, 'VmRSS');
}

function statusField(pid: number, field: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Bytes as MiB with one decimal, '-' when unknown. */
export function mib(bytes: number | undefined): string {
  return bytes === undefined ? '-' : (bytes / (1024 * 1024)).toFixed(1);
}

/** Milliseconds with two decimals, '-' when NaN. */
export function ms(v: number): string {
  return Number.isNaN(v) ? '-' : v.toFixed(2);
}

/** A plain text table: the first row is the header; columns padded to their widest cell. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  const line = (r: readonly string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The same rows as a Markdown table. */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const line = (r: readonly string[]) => `| ${r.join(' | ')} |`;
  return [line(rows[0]), line(rows[0].map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.slice(1).map(line)].join('\n');
}

/** CPU time (user + system) consumed so far by `pid`, in milliseconds, or undefined when it is gone. */
export function cpuTimeMs(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces; the fields after its closing paren are fixed.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / CLOCK_TICKS;
}

// sysconf(_SC_CLK_TCK) is 100 on every Linux build Node supports.
const CLOCK_TICKS = 100;

/** Samples the current RSS (VmRSS) of some processes every `intervalMs` until stopped; keeps each one's maximum.
 * VmHWM only ever grows, so this is what tells the peak under one load from the peak under an earlier one. */
export class RssSampler {
  private readonly peaks: Array<number | undefined>;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: readonly number[],
    intervalMs = 250,
  ) {
    this.peaks = pids.map(() => undefined);
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    this.pids.forEach((pid, i) => {
      const rss = rssBytes(pid);
      if (rss !== undefined) this.peaks[i] = Math.max(this.peaks[i] ?? 0, rss);
    });
  }

  /** Stops sampling (after one last sample) and returns each process's largest RSS in bytes. */
  stop(): Array<number | undefined> {
    clearInterval(this.timer);
    this.sample();
    return [...this.peaks];
  }
}

/** Median of a non-empty list (NaN when empty). */
export function median(xs: readonly number[]): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The machine's CPU time so far, from the first line of /proc/stat (clock ticks): busy and total. */
export function machineCpuTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const total = f.slice(0, 8).reduce((s, x) => s + x, 0);
  return { busy: total - f[3] - f[4], total };
}

/** The share (0..1) of all cores' time that was busy between two readings. */
export function busyShare(before: { busy: number; total: number }, after: { busy: number; total: number }): number {
  const total = after.total - before.total;
  return total > 0 ? (after.busy - before.busy) / total : Number.NaN;
}
