// spec.maintenance read in one place: the quota every member runs with (given, or derived from the volume), the
// compaction flags, the defragmentation threshold and window parsed, and the problems of each field (validation
// names the field; nothing is touched for a spec with a problem).
import { scheduleProblem } from './cron.js';
import { quantityBytes } from './quantity.js';
import type { SvcClusterSpec } from './types.js';

/** Each member's volume when spec.storage.size is not set (the CRD's default). */
export const DEFAULT_VOLUME = '1Gi';
/** The derived quota's ceiling: the reference's largest recommended quota. */
export const MAX_DERIVED_QUOTA = 8 * 2 ** 30;

/** Bytes of each member's volume (spec.storage.size, default 1Gi); undefined when unreadable. */
export function volumeBytes(spec: SvcClusterSpec): number | undefined {
  return quantityBytes(spec.storage?.size ?? DEFAULT_VOLUME);
}

/**
 * The quota (--quota-backend-bytes) of every member: spec.maintenance.quotaBackendBytes, or half the volume (room
 * for the defragmentation's copy of the database next to it, and the write-ahead log), at most 8 GiB.
 */
export function quotaBytes(spec: SvcClusterSpec): number {
  const given = quantityBytes(spec.maintenance?.quotaBackendBytes);
  if (given !== undefined && given > 0) return given;
  return Math.min(MAX_DERIVED_QUOTA, Math.floor((volumeBytes(spec) ?? quantityBytes(DEFAULT_VOLUME)!) / 2));
}

/** A share written "40%" (0 < x <= 100) as a fraction; undefined when it is not one. */
export function parseShare(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(s);
  if (!m) return undefined;
  const v = Number(m[1]);
  return v > 0 && v <= 100 ? v / 100 : undefined;
}

/** A daily window: its start as minutes after midnight and its length in minutes. */
export interface DailyWindow {
  startMinute: number;
  minutes: number;
}

/** "02:30" and "3h" / "90m" / "1h30m" as a window; undefined when either does not parse. */
export function parseWindow(w: { start?: unknown; duration?: unknown } | undefined): DailyWindow | undefined {
  if (!w || typeof w.start !== 'string' || typeof w.duration !== 'string') return undefined;
  const t = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(w.start.trim());
  const d = /^(?:(\d+)h)?(?:(\d+)m)?$/.exec(w.duration.trim());
  if (!t || !d || (d[1] === undefined && d[2] === undefined)) return undefined;
  const minutes = Number(d[1] ?? 0) * 60 + Number(d[2] ?? 0);
  if (minutes <= 0 || minutes > 24 * 60) return undefined;
  return { startMinute: Number(t[1]) * 60 + Number(t[2]), minutes };
}

/** Is `now` inside the daily window, read in `timeZone`? */
export function inWindow(w: DailyWindow, timeZone: string | undefined, now: number): boolean {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: timeZone ?? 'UTC', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(now));
  const at = Number(parts.find((p) => p.type === 'hour')!.value) * 60 + Number(parts.find((p) => p.type === 'minute')!.value);
  const since = (at - w.startMinute + 24 * 60) % (24 * 60);
  return since < w.minutes;
}

/** The flags of spec.maintenance every member runs with (the quota always: derived when not given). */
export function maintenanceFlags(spec: SvcClusterSpec): Array<{ field: string; flag: string; value: string }> {
  const out = [{ field: 'spec.maintenance.quotaBackendBytes', flag: 'quota-backend-bytes', value: String(quotaBytes(spec)) }];
  const ac = spec.maintenance?.autoCompaction;
  if (ac?.mode) out.push({ field: 'spec.maintenance.autoCompaction.mode', flag: 'auto-compaction-mode', value: ac.mode });
  if (ac?.retention !== undefined) out.push({ field: 'spec.maintenance.autoCompaction.retention', flag: 'auto-compaction-retention', value: ac.retention });
  return out;
}

/** Problems of spec.maintenance (and the volume it is measured against), each naming its field; empty when usable. */
export function maintenanceProblems(spec: SvcClusterSpec): string[] {
  const p: string[] = [];
  const volume = volumeBytes(spec);
  if (spec.storage?.size !== undefined && volume === undefined) p.push(`spec.storage.size "${String(spec.storage.size)}" is not a quantity (e.g. 8Gi)`);
  const m = spec.maintenance;
  if (m === undefined) return p;
  if (typeof m !== 'object' || m === null) return [...p, 'spec.maintenance must be an object'];
  if (m.quotaBackendBytes !== undefined) {
    const q = quantityBytes(m.quotaBackendBytes);
    if (q === undefined || q <= 0) p.push(`spec.maintenance.quotaBackendBytes "${String(m.quotaBackendBytes)}" is not a positive quantity (e.g. 2Gi)`);
    else if (volume !== undefined && q > volume) {
      p.push(`spec.maintenance.quotaBackendBytes ${String(m.quotaBackendBytes)} is larger than the volume (spec.storage.size ${String(spec.storage?.size ?? DEFAULT_VOLUME)}): the database could not reach it; lower the quota or grow spec.storage.size first`);
    }
  }
  const ac = m.autoCompaction;
  if (ac !== undefined) {
    if (ac.mode !== undefined && ac.mode !== 'periodic' && ac.mode !== 'revision') p.push('spec.maintenance.autoCompaction.mode must be periodic or revision');
    const r = ac.retention;
    if (r !== undefined) {
      const mode = ac.mode ?? 'periodic';
      const ok = typeof r === 'string' && (mode === 'revision' ? /^\d+$/.test(r) : /^(\d+(\.\d+)?|(\d+(\.\d+)?(h|m|s))+)$/.test(r));
      if (!ok) p.push(`spec.maintenance.autoCompaction.retention "${String(r)}" does not parse: with mode ${mode} it is ${mode === 'revision' ? 'a revision count (e.g. "1000")' : 'hours (e.g. "1") or a duration (e.g. "30m")'}`);
    }
  }
  const d = m.defrag;
  if (d !== undefined) {
    if (d.schedule !== undefined) {
      const why = typeof d.schedule === 'string' ? scheduleProblem(d.schedule, d.timeZone, 'spec.maintenance.defrag') : 'spec.maintenance.defrag.schedule must be a string';
      if (why) p.push(why);
    } else if (d.timeZone !== undefined) {
      const why = scheduleProblem('0 0 * * *', d.timeZone, 'spec.maintenance.defrag');
      if (why) p.push(why);
    }
    const t = d.threshold;
    if (t !== undefined) {
      for (const k of ['fragmentation', 'quotaUsage'] as const) {
        if (t[k] !== undefined && parseShare(t[k]) === undefined) p.push(`spec.maintenance.defrag.threshold.${k} "${String(t[k])}" is not a share (e.g. "40%", more than 0 and at most 100)`);
      }
    }
    if (d.window !== undefined && parseWindow(d.window) === undefined) {
      p.push(`spec.maintenance.defrag.window ${JSON.stringify(d.window)} does not parse: start is "HH:MM" and duration "3h", "90m" or "1h30m" (at most 24h)`);
    }
    if (d.window !== undefined && d.schedule === undefined && d.threshold === undefined) p.push('spec.maintenance.defrag.window needs a schedule or a threshold to open for');
  }
  return p;
}

/** Problems of a change of the volume from `old` to `next`, naming the field (a volume grows, never shrinks). */
export function storageChangeProblems(old: SvcClusterSpec, next: SvcClusterSpec): string[] {
  const a = volumeBytes(old);
  const b = volumeBytes(next);
  if (a !== undefined && b !== undefined && b < a) {
    return [`spec.storage.size cannot shrink from ${String(old.storage?.size ?? DEFAULT_VOLUME)} to ${String(next.storage?.size ?? DEFAULT_VOLUME)} (volumes do not shrink); set it back to ${String(old.storage?.size ?? DEFAULT_VOLUME)} or more`];
  }
  return [];
}
