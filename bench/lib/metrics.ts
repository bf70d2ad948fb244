// Scrapes a member's Prometheus /metrics for the disk latency figures both systems export
// (etcd_disk_* on the reference, svc_disk_* on svc), so the bench can show where a put's time goes.
import { httpGet } from '../../harness/process.js';

/** Sum and count of one histogram. */
export interface HistogramTotals {
  sum: number;
  count: number;
}

/** The disk histograms of one member at one moment. */
export interface DiskMetrics {
  walFsync?: HistogramTotals;
  backendCommit?: HistogramTotals;
}

/** Reads http://<endpoint>/metrics; missing histograms stay undefined (never throws on a bad scrape). */
export async function scrapeDiskMetrics(endpoint: string): Promise<DiskMetrics> {
  let body: string;
  try {
    const res = await httpGet(`http://${endpoint}/metrics`);
    if (res.status !== 200) return {};
    body = res.body;
  } catch {
    return {};
  }
  return {
    walFsync: histogram(body, 'disk_wal_fsync_duration_seconds'),
    backendCommit: histogram(body, 'disk_backend_commit_duration_seconds'),
  };
}

function histogram(text: string, suffix: string): HistogramTotals | undefined {
  const sum = sample(text, `${suffix}_sum`);
  const count = sample(text, `${suffix}_count`);
  return sum === undefined || count === undefined ? undefined : { sum, count };
}

function sample(text: string, suffix: string): number | undefined {
  const m = new RegExp(`^(?:etcd|svc)_${suffix}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Mean milliseconds per observation between two scrapes, NaN when unknown or nothing was observed. */
export function meanMsBetween(before: HistogramTotals | undefined, after: HistogramTotals | undefined): number {
  if (!before || !after || after.count <= before.count) return Number.NaN;
  return ((after.sum - before.sum) / (after.count - before.count)) * 1000;
}

/** Observations between two scrapes, NaN when unknown. */
export function countBetween(before: HistogramTotals | undefined, after: HistogramTotals | undefined): number {
  return before && after ? after.count - before.count : Number.NaN;
}
