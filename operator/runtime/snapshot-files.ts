// Pre-upgrade snapshot files in a folder: how they are named and how the oldest go (the local runtime, the
// operator's --snapshot-dir and the backup Job share these rules).
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A new file name in `dir` (created) for the snapshot of `member` taken before `from` -> `to`. */
export function snapshotPath(dir: string, member: string, from: string, to: string): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return join(dir, `${member}-${from}-to-${to}-${stamp}.db`);
}

/** Removes the oldest .db files of `dir` beyond the newest `keep`; returns the names removed. */
export function pruneSnapshotDir(dir: string, keep: number): string[] {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.db'));
  const sorted = files.map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs })).sort((a, b) => b.t - a.t || b.f.localeCompare(a.f));
  const gone = sorted.slice(keep).map((x) => x.f);
  for (const g of gone) rmSync(join(dir, g), { force: true });
  return gone;
}
