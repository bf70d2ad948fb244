// --auto-compaction-retention / --auto-compaction-mode, after the reference's v3compactor: the leader
// proposes compactions on its own (followers only keep their bookkeeping).
//
// revision: every 5 minutes, compact to (current revision - retention) when that moved.
// periodic: the retention is a period (hours, or a duration such as 30m). The current revision is sampled
// every min(period, 1h)/10; the first compaction comes one period after start, then one every
// min(period, 1h), each to the revision sampled about one period earlier.
import type { Logger } from '../log/logger.js';
import { Errors } from './errors.js';

export interface CompactorTarget {
  /** Current store revision. */
  rev(): number;
  isLeader(): boolean;
  /** Proposes a compaction to `revision` through consensus; resolves when applied. */
  compact(revision: number): Promise<void>;
}

export interface CompactorOptions {
  mode: 'periodic' | 'revision';
  /** revision: a revision count; periodic: milliseconds. */
  retention: number;
  logger: Logger;
  /** Revision mode's check interval (the reference: 5 minutes); tests shorten it. */
  revisionIntervalMs?: number;
}

const HOUR_MS = 3600_000;

/** Starts the compactor; returns its stop function. */
export function startCompactor(target: CompactorTarget, o: CompactorOptions): () => void {
  const timers: NodeJS.Timeout[] = [];
  let stopped = false;
  const run = (revision: number, fields: Record<string, unknown>, what: string): Promise<boolean> => {
    o.logger.info(`starting auto ${what} compaction`, { revision, ...fields });
    const done = () => {
      o.logger.info(`completed auto ${what} compaction`, { revision, ...fields });
      return true;
    };
    return target.compact(revision).then(done, (e: Error) => {
      // Already compacted to it or past it (e.g. by a client): a success, as for the reference.
      if (e.message === Errors.compacted().message) return done();
      if (!stopped) o.logger.warn(`failed auto ${what} compaction`, { revision, error: e.message, ...fields });
      return false;
    });
  };

  if (o.mode === 'revision') {
    let prev = 0;
    let busy = false;
    const t = setInterval(() => {
      if (busy || stopped || !target.isLeader()) return;
      const rev = target.rev() - o.retention;
      if (rev <= 0 || rev === prev) return;
      busy = true;
      void run(rev, { 'revision-compaction-retention': o.retention }, 'revision').then((ok) => {
        if (ok) prev = rev;
        busy = false;
      });
    }, o.revisionIntervalMs ?? 5 * 60_000);
    t.unref();
    timers.push(t);
  } else {
    const period = o.retention;
    const compactInterval = Math.min(period, HOUR_MS);
    const sampleInterval = Math.max(1, Math.floor(compactInterval / 10));
    const keep = Math.floor(period / sampleInterval) + 1;
    const revs: number[] = [];
    let lastSuccess = Date.now();
    let base = period;
    let busy = false;
    const t = setInterval(() => {
      revs.push(target.rev());
      if (revs.length > keep) revs.shift(); // revs[0]: the revision about one period ago
      if (busy || stopped || !target.isLeader()) return;
      if (Date.now() - lastSuccess < base) return;
      const rev = revs[0];
      if (rev <= 0) return;
      busy = true;
      void run(rev, { 'compact-period': `${period}ms` }, 'periodic').then((ok) => {
        busy = false;
        if (!ok) return;
        lastSuccess = Date.now();
        base = compactInterval;
      });
    }, sampleInterval);
    t.unref();
    timers.push(t);
  }
  return () => {
    stopped = true;
    for (const t of timers) clearInterval(t);
  };
}

/** The retention of --auto-compaction-retention: a revision count, or a period in ms (plain hours or a duration). */
export function retentionOf(mode: 'periodic' | 'revision', text: string, parseDurationMs: (t: string) => number): number {
  if (/^\d+$/.test(text)) return mode === 'revision' ? Number(text) : Number(text) * HOUR_MS;
  return parseDurationMs(text);
}

/** The auto-compactor --auto-compaction-mode/-retention ask for (absent: off), compacting through the log. */
export function startAutoCompaction(
  opts: { autoCompaction?: { mode: 'periodic' | 'revision'; retention: number }; autoCompactionRevisionIntervalMs?: number; logger: Logger },
  member: Omit<CompactorTarget, 'compact'> & { propose(req: { id: bigint; kind: 'compaction'; compaction: { revision: number; physical: boolean } }): Promise<unknown>; nextRequestId(): bigint },
): (() => void) | undefined {
  if (!opts.autoCompaction || opts.autoCompaction.retention <= 0) return undefined;
  const compact = async (revision: number) => void (await member.propose({ id: member.nextRequestId(), kind: 'compaction', compaction: { revision, physical: false } }));
  return startCompactor({ rev: member.rev, isLeader: member.isLeader, compact }, { ...opts.autoCompaction, logger: opts.logger, revisionIntervalMs: opts.autoCompactionRevisionIntervalMs });
}
