// The backup agent of continuous backup (issue 27 item 2), independent of the runtime: locally a child process of
// the local runtime, on Kubernetes a Deployment running the operator image (`svc-operator backup-agent`,
// cli/backup-agent.ts). It watches every key from the newest revision the destinations can restore (the newest full
// snapshot and its chain of segments), groups the events by revision and writes a delta segment to every destination
// every `segmentMs` (or `segmentEvents` revisions). When compaction passes its revision, when a destination has no
// full snapshot, or when it was away longer than `maxAwayMs`, it takes a new full snapshot through the backup path the
// engine uses (the leader's snapshot, uploadFull, retention) and says so. What it has made durable goes out through
// `onStatus` (status.backups.continuousRevision / continuousTime).
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../../server/client/index.js';
import { MemberClient, type MemberTls } from '../members/index.js';
import { groupByRevision, makeSegment, type RevisionChange } from '../backup/delta.js';
import { DestinationError, listRestorePoints, listSegments, readSegment, retentionOf, shipFull, uploadSegment, type FullSnapshotInput, type OpenDestination, type Retention } from '../backup/destinations/index.js';
import { deltaCoverage, type Coverage, type RestorePoint, type SegmentRef } from '../backup/restore-points.js';
import type { BackupsStatus } from '../api/types.js';

export interface AgentOptions {
  cluster: string;
  /** The members' client URLs. */
  endpoints: string[];
  destinations: OpenDestination[];
  tls?: MemberTls;
  /** A user with the root role (a cluster with authentication on): snapshots and the watch run as it. */
  auth?: { username: string; password: string };
  /** A segment is written this long after its first revision was seen. Default 2000. */
  segmentMs?: number;
  /** ... or once it holds this many events (writes). Default 1000. */
  segmentEvents?: number;
  /** Newest durable point older than this at start: a new full snapshot first. Default 1 h. */
  maxAwayMs?: number;
  /** Where full snapshots are staged before the upload (removed after). */
  workDir: string;
  /** spec.backup's keep and maxAge, applied after a full snapshot of the agent's (default: keep DEFAULT_KEEP). */
  retention?: Retention;
  /** The release recorded in a full snapshot's manifest. */
  release: string;
  log: (line: string) => void;
  onStatus?: (s: AgentStatus) => void;
  /** Wait before retrying a failed upload, watch or snapshot. Default 500 ms (doubling to 10 s). */
  retryMs?: number;
  /**
   * Opens the destinations again with the credentials as they are now: called when a store refused them, so that a
   * rotated Secret (mounted files change in place) is taken up without a restart.
   */
  reopen?: () => OpenDestination[];
}

export type AgentStatus = Pick<BackupsStatus, 'continuousRevision' | 'continuousTime' | 'continuousFull'> & { lastError?: string };

const isCompacted = (e: unknown) => /required revision has been compacted/.test((e as Error)?.message ?? '');

/**
 * Where the agent's own record ends in a destination: the furthest a chain of segments reaches, from any full
 * snapshot (its own, or one the engine took that its segments pass through). Not simply the newest full snapshot: one
 * taken while the agent was down would leave the revisions before it uncovered. Without any segment, the newest
 * full snapshot of its own, else the newest of all (continuous backup just turned on).
 */
export function agentEnd(points: readonly RestorePoint[], segments: readonly SegmentRef[]): { point: RestorePoint; end: number; last?: SegmentRef } {
  // not the newest coverage (planRestore's): of equal ends the older point stays (its own record), and points without segments count only when its own
  let best: Coverage | undefined;
  for (const c of deltaCoverage(points, segments)) {
    if (c.segments.length === 0 && c.point.backupKind !== 'continuous') continue;
    if (!best || c.end > best.end) best = c;
  }
  if (best) return { point: best.point, end: best.end, ...(best.segments.length > 0 ? { last: best.segments.at(-1)! } : {}) };
  const newest = points.reduce((a, b) => (b.revision > a.revision ? b : a));
  return { point: newest, end: newest.revision };
}

/** Runs until stop(): resumes, watches, writes segments, takes full snapshots when it must. */
export class BackupAgent {
  private readonly o: Required<Pick<AgentOptions, 'segmentMs' | 'segmentEvents' | 'maxAwayMs' | 'retryMs'>> & AgentOptions;
  private pending: RevisionChange[] = [];
  private pendingEvents = 0;
  private firstSeen?: Date;
  private lastSeen?: Date;
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private stopping = false;
  private watchClient?: Client;
  private readonly members: MemberClient;
  private wake?: () => void;
  /** What every destination holds up to (the watch resumes after it). */
  private durable = 0;
  readonly status: AgentStatus = {};

  constructor(o: AgentOptions) {
    this.o = { segmentMs: 2000, segmentEvents: 1000, maxAwayMs: 3_600_000, retryMs: 500, ...o };
    this.members = new MemberClient({ timeoutMs: 10_000, attempts: 3, tls: o.tls, backupAuth: o.auth });
  }

  /** Runs until stop() is called (resolves then, after the pending segment is written if it can be). */
  async run(): Promise<void> {
    let backoff = this.o.retryMs;
    while (!this.stopping) {
      try {
        if (this.durable === 0) await this.resume();
        if (this.stopping) break;
        await this.watch();
        backoff = this.o.retryMs;
      } catch (e) {
        if (this.stopping) break;
        try {
          if (!isCompacted(e)) throw e;
          // the history after what was seen is gone: only a full snapshot covers what comes next
          const next = (this.pending.at(-1)?.revision ?? this.durable) + 1;
          await this.flush();
          await this.full(`compaction passed revision ${next}, the next the agent needed`);
          continue;
        } catch (e2) {
          this.fail(e2);
        }
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, 10_000);
      }
    }
    await this.flush().catch((e: unknown) => this.fail(e));
    this.watchClient?.close();
    this.members.close();
  }

  /** Ends run(): the watch is closed and the segment under way is written. */
  stop(): void {
    this.stopping = true;
    this.watchClient?.close();
    this.wake?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
  }

  private fail(e: unknown): void {
    const msg = (e as Error)?.message ?? String(e);
    this.status.lastError = msg;
    this.o.log(`error (retrying): ${msg}`);
    this.o.onStatus?.({ ...this.status });
    if (e instanceof DestinationError && e.reason === 'CredentialsRefused' && this.o.reopen) {
      for (const d of this.o.destinations) d.store.close();
      this.o.destinations = this.o.reopen();
      this.o.log('the credentials were refused: read them again for the next try');
    }
  }

  /**
   * Where to go on from: the oldest of the destinations' agentEnd (each is then written from where its record ends).
   * A destination without a full snapshot, or a record older than maxAwayMs, asks for a new full snapshot.
   */
  private async resume(): Promise<void> {
    let from: number | undefined;
    let at: string | undefined;
    for (const d of this.o.destinations) {
      const { points } = await listRestorePoints(d, this.o.cluster);
      if (points.length === 0) return this.full(`${d.store.label} holds no full snapshot of ${this.o.cluster}`);
      const { point, end, last } = agentEnd(points, await listSegments(d, this.o.cluster));
      const time = last ? (await readSegment(d, last)).lastTime : point.time;
      if (from === undefined || end < from) {
        from = end;
        at = time;
      }
    }
    if (from === undefined) throw new Error('no destinations');
    const away = Date.now() - Date.parse(at!);
    if (away > this.o.maxAwayMs) return this.full(`the newest durable revision ${from} is from ${at}, ${Math.round(away / 1000)} s ago (more than the ${Math.round(this.o.maxAwayMs / 1000)} s the agent may be away)`);
    this.durable = from;
    this.note(from, at!);
    this.o.log(`resuming after revision ${from} (durable in ${this.o.destinations.length} destination(s) as of ${at})`);
  }

  /**
   * The name of the member at `url` (its own ID in its member list), as the engine's backups record theirs; its
   * host:port when the member cannot tell.
   */
  private async memberName(url: string): Promise<string> {
    try {
      const { id } = await this.members.status(url);
      return (await this.members.memberList(url, false)).find((m) => m.id === id)?.name || new URL(url).host;
    } catch {
      return new URL(url).host;
    }
  }

  /** A full snapshot from the leader to every destination (then their retention); the watch goes on after it. */
  private async full(reason: string): Promise<void> {
    let leader: string | undefined;
    for (const url of this.o.endpoints) {
      if (await this.members.isLeader(url).catch(() => false)) leader = url;
    }
    const url = leader ?? this.o.endpoints[0];
    mkdirSync(this.o.workDir, { recursive: true });
    const file = join(this.o.workDir, `full-${Date.now()}.db`);
    try {
      const rec = await this.members.snapshot(url, url, file);
      const m: FullSnapshotInput = {
        cluster: this.o.cluster, member: await this.memberName(url), revision: rec.revision, time: rec.time, sha256: rec.sha256, size: rec.size, release: this.o.release, backupKind: 'continuous',
        ...(rec.kvHash !== undefined ? { hashKV: rec.kvHash, compactRevision: rec.compactRevision } : {}),
      };
      for (const d of this.o.destinations) await shipFull(d, file, m, this.o.retention ?? retentionOf({}), new Date());
      this.pending = this.pending.filter((c) => c.revision > rec.revision);
      this.pendingEvents = this.pending.reduce((n, c) => n + c.ops.length, 0);
      this.durable = rec.revision;
      this.status.continuousFull = { revision: rec.revision, time: rec.time, reason };
      // logged before the status says so: whoever reads the status finds the line
      this.o.log(`took a new full snapshot at revision ${rec.revision} from ${url}: ${reason}`);
      this.note(rec.revision, rec.time);
    } finally {
      rmSync(file, { force: true });
      rmSync(`${file}.part`, { force: true });
    }
  }

  private note(revision: number, time: string): void {
    this.status.continuousRevision = revision;
    this.status.continuousTime = time;
    delete this.status.lastError;
    this.o.onStatus?.({ ...this.status });
  }

  /** Watches every key after what is durable (or seen and not yet written); rejects when the watch ends. */
  private async watch(): Promise<void> {
    this.watchClient?.close();
    this.watchClient = await Client.connect({ endpoints: this.o.endpoints, tls: this.o.tls, ...(this.o.auth ? { auth: this.o.auth } : {}) });
    const start = (this.pending.at(-1)?.revision ?? this.durable) + 1;
    const w = this.watchClient.watch('', { prefix: true, startRevision: start });
    for await (const r of w) {
      if (r.events.length === 0) continue;
      const now = new Date();
      if (this.pending.length === 0) {
        this.firstSeen = now;
        this.timer = setTimeout(() => void this.flush().catch((e: unknown) => this.fail(e)), this.o.segmentMs);
      }
      groupByRevision(r.events, this.pending, now);
      this.pendingEvents += r.events.length;
      this.lastSeen = now;
      if (this.pendingEvents >= this.o.segmentEvents) void this.flush().catch((e: unknown) => this.fail(e));
    }
    if (!this.stopping) throw new Error('the watch ended');
  }

  /** Writes what is pending as one segment to every destination (one flush at a time). */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => undefined).then(() => this.writePending());
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const changes = this.pending;
    if (changes.length === 0) return;
    const seg = makeSegment(changes, this.firstSeen ?? new Date(), this.lastSeen ?? new Date());
    this.pending = [];
    this.pendingEvents = 0;
    const first = this.firstSeen;
    this.firstSeen = undefined;
    try {
      await Promise.all(this.o.destinations.map((d) => uploadSegment(d, this.o.cluster, seg)));
    } catch (e) {
      // kept for the next try, ahead of what came since
      this.pending = [...changes, ...this.pending];
      this.pendingEvents = this.pending.reduce((n, c) => n + c.ops.length, 0);
      this.firstSeen = first;
      if (!this.stopping) this.timer = setTimeout(() => void this.flush().catch((x: unknown) => this.fail(x)), this.o.retryMs);
      throw e;
    }
    this.durable = seg.toRevision;
    this.note(seg.toRevision, seg.lastTime);
    if (this.pending.length > 0 && !this.timer && !this.stopping) {
      this.firstSeen = new Date();
      this.timer = setTimeout(() => void this.flush().catch((e: unknown) => this.fail(e)), this.o.segmentMs);
    }
  }
}
