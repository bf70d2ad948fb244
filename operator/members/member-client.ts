// Talking to svc members: /version, /health, /metrics over HTTP, and status, snapshot, move-leader and the
// authentication probe over the gRPC API through the project's one client library (server/client).
// Every call has a timeout; reads are retried a few times. This is the only file that knows how.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { Client, saveSnapshot } from '../../server/client/index.js';
import { boltStatus } from '../../server/cluster/bolt-snapshot.js';
import type { SnapshotRecord } from '../api/types.js';
import { hexMemberId } from '../api/member-id.js';
import { httpGet, type MemberTls } from './http.js';
import { parseV2DataBytes } from './v2-size.js';
import { withRetry } from './retry.js';

/** Raised when a member call fails for good. */
export class MemberError extends Error {
  readonly code: 'UNREACHABLE' | 'BAD_ANSWER' | 'SNAPSHOT_FAILED' | 'MOVE_LEADER_FAILED' | 'MEMBERSHIP_FAILED' | 'MAINTENANCE_FAILED';
  constructor(code: MemberError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MemberError';
    this.code = code;
  }
}

/** GET /version. */
export interface VersionInfo {
  etcdserver: string;
  etcdcluster: string;
}

/** What Maintenance.Status tells about one member. */
export interface MemberStatusInfo {
  /** Member id, decimal. */
  id: string;
  /** Leader's id, decimal ("0" when none). */
  leader: string;
  raftIndex: number;
  appliedIndex: number;
  dbSize: number;
  /** Bytes of the database file in use (the rest a defragmentation gives back). */
  dbSizeInUse?: number;
  revision: number;
}

/** One entry of MemberList (a member added but never started has no name yet). */
export interface ClusterMemberInfo {
  id: string;
  name: string;
  peerURLs: string[];
  isLearner: boolean;
}

export interface MemberClientOptions {
  /** Timeout of each call. Default 3000 ms. */
  timeoutMs?: number;
  /** Attempts of idempotent reads. Default 2. */
  attempts?: number;
  /** For https client URLs: the cluster's CA and the client certificate the members ask for. */
  tls?: MemberTls;
  /**
   * A user with the root role for what needs one on a cluster with authentication on (snapshots, HashKV):
   * spec.backup.credentialsSecret. Every other call stays unauthenticated (the authentication probe relies on it).
   */
  backupAuth?: { username: string; password: string };
}

/** A client for the members of one cluster, addressed by client URL ("http://127.0.0.1:2379"). */
export class MemberClient {
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly tls: MemberTls | undefined;
  private readonly clients = new Map<string, Client>();
  private readonly backupAuth: MemberClientOptions['backupAuth'];
  /** Clients authenticated as backupAuth, by URL. */
  private readonly authed = new Map<string, Client>();

  constructor(opts: MemberClientOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 3000;
    this.attempts = opts.attempts ?? 2;
    this.tls = opts.tls;
    this.backupAuth = opts.backupAuth;
  }

  /** The client for snapshots and HashKV: authenticated as backupAuth when it is set. */
  private async backupGrpc(url: string): Promise<Client> {
    if (!this.backupAuth) return this.grpc(url);
    let c = this.authed.get(url);
    if (!c) {
      c = await Client.connect({ endpoints: [url], tls: this.tls, auth: this.backupAuth, commandTimeoutMs: this.timeoutMs, dialTimeoutMs: this.timeoutMs });
      this.authed.set(url, c);
    }
    return c;
  }

  private async grpc(url: string): Promise<Client> {
    let c = this.clients.get(url);
    if (!c) {
      c = await Client.connect({ endpoints: [url], tls: this.tls, commandTimeoutMs: this.timeoutMs, dialTimeoutMs: this.timeoutMs });
      this.clients.set(url, c);
    }
    return c;
  }

  /**
   * Drops the channel of `url` after a failed call: a restarted pod comes back on a new address, and a kept channel
   * would re-resolve the name only after gRPC's minimum re-resolution interval (30 s).
   */
  private forget(url: string): void {
    this.clients.get(url)?.close();
    this.clients.delete(url);
    this.authed.get(url)?.close();
    this.authed.delete(url);
  }

  /** GET /version. */
  async version(url: string): Promise<VersionInfo> {
    return withRetry(async () => {
      const a = await httpGet(`${url}/version`, this.timeoutMs, this.tls);
      if (a.status !== 200) throw new MemberError('BAD_ANSWER', `GET ${url}/version: HTTP ${a.status}`);
      const v = JSON.parse(a.body) as Partial<VersionInfo>;
      if (typeof v.etcdserver !== 'string' || typeof v.etcdcluster !== 'string') throw new MemberError('BAD_ANSWER', `GET ${url}/version: unexpected body ${a.body}`);
      return { etcdserver: v.etcdserver, etcdcluster: v.etcdcluster };
    }, this.attempts, 200);
  }

  /**
   * GET /health is 200 with health "true" (no retry: one failed probe is an unhealthy observation); alarms of the
   * types in `exclude` do not count (the reference's `?exclude=`).
   */
  async healthy(url: string, exclude: readonly string[] = []): Promise<boolean> {
    try {
      const a = await httpGet(`${url}/health${exclude.length ? `?${exclude.map((x) => `exclude=${x}`).join('&')}` : ''}`, this.timeoutMs, this.tls);
      return a.status === 200 && /"health"\s*:\s*"true"/.test(a.body);
    } catch {
      return false;
    }
  }

  /** svc_server_is_leader from GET /metrics. */
  async isLeader(url: string): Promise<boolean> {
    return withRetry(async () => {
      const a = await httpGet(`${url}/metrics`, this.timeoutMs, this.tls);
      if (a.status !== 200) throw new MemberError('BAD_ANSWER', `GET ${url}/metrics: HTTP ${a.status}`);
      const m = /^svc_server_is_leader(?:\{[^}]*\})?\s+(\S+)/m.exec(a.body);
      if (!m) throw new MemberError('BAD_ANSWER', `GET ${url}/metrics: no svc_server_is_leader`);
      return Number(m[1]) === 1;
    }, this.attempts, 200);
  }

  /** Bytes of v2 data the member holds (svc_v2_store_data_bytes); undefined when it does not say. */
  async v2DataBytes(url: string): Promise<number | undefined> {
    return withRetry(async () => {
      const a = await httpGet(`${url}/metrics`, this.timeoutMs, this.tls);
      if (a.status !== 200) throw new MemberError('BAD_ANSWER', `GET ${url}/metrics: HTTP ${a.status}`);
      return parseV2DataBytes(a.body);
    }, this.attempts, 200);
  }

  /** Maintenance.Status of one member. */
  async status(url: string): Promise<MemberStatusInfo> {
    return withRetry(async () => {
      const c = await this.grpc(url);
      const s = await c.status(url).catch((e: unknown) => { this.forget(url); throw e; });
      return {
        id: String(s.header.member_id),
        leader: String(s.leader),
        raftIndex: Number(s.raftIndex),
        appliedIndex: Number(s.raftAppliedIndex),
        dbSize: Number(s.dbSize),
        dbSizeInUse: Number(s.dbSizeInUse ?? s.dbSize),
        revision: Number(s.header.revision),
      };
    }, this.attempts, 200);
  }

  /** The alarms raised in the cluster, as the member at `url` knows them (member IDs decimal). */
  async alarms(url: string): Promise<Array<{ memberId: string; alarm: string }>> {
    return withRetry(async () => {
      const c = await this.grpc(url);
      const r = await c.alarmList().catch((e: unknown) => { this.forget(url); throw e; });
      return r.alarms.map((a) => ({ memberId: String(a.memberID), alarm: a.alarm }));
    }, this.attempts, 200);
  }

  /** The KV hash of the member at `url` at `revision`, with the compaction revision it was taken over. */
  async hashKV(url: string, revision: number): Promise<{ hash: number; compactRevision: number }> {
    return withRetry(async () => {
      const c = await this.backupGrpc(url);
      const r = await c.hashKV(url, revision).catch((e: unknown) => { this.forget(url); throw e; });
      return { hash: r.hash, compactRevision: Number(r.compact_revision) };
    }, this.attempts, 200);
  }

  /** Disarms alarm `alarm` of member `memberId` (decimal) through the member at `url`. */
  async disarmAlarm(url: string, memberId: string, alarm: 'NOSPACE' | 'CORRUPT'): Promise<void> {
    try {
      const c = await this.grpc(url);
      await c.alarmDisarm({ memberID: memberId, alarm });
    } catch (e) {
      this.forget(url);
      throw new MemberError('UNREACHABLE', `disarming ${alarm} of member ${hexMemberId(memberId)} via ${url} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * Compacts the key history up to `revision` through the member at `url` (the leader), waiting until the members'
   * backends dropped it; a revision already compacted counts as done (the call is repeated after a crash).
   */
  async compact(url: string, revision: number): Promise<void> {
    try {
      const c = await this.grpc(url);
      await c.compact(revision, true);
    } catch (e) {
      const msg = (e as Error).message;
      if (/required revision has been compacted/.test(msg)) return;
      this.forget(url);
      throw new MemberError('MAINTENANCE_FAILED', `compaction up to revision ${revision} via ${url} failed: ${msg}`, { cause: e });
    }
  }

  /** Defragments the backend of the member at `url` (it answers once done; long for a large database). */
  async defragment(url: string, timeoutMs = 120_000): Promise<void> {
    try {
      const c = await Client.connect({ endpoints: [url], tls: this.tls, commandTimeoutMs: timeoutMs, dialTimeoutMs: this.timeoutMs });
      try {
        await c.defragment(url);
      } finally {
        c.close();
      }
    } catch (e) {
      throw new MemberError('MAINTENANCE_FAILED', `defragmentation of ${url} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  /** Whether authentication is on: a read without credentials is refused when it is. */
  async authEnabled(url: string): Promise<boolean> {
    const c = await this.grpc(url);
    try {
      await c.get('\u0000svc-operator-auth-probe', { serializable: true });
      return false;
    } catch (e) {
      const msg = String((e as Error).message);
      if (/user name is empty|invalid auth token|permission denied|authentication/i.test(msg)) return true;
      throw new MemberError('UNREACHABLE', `auth probe on ${url}: ${msg}`, { cause: e });
    }
  }

  /**
   * Saves a snapshot of `url`'s database to `file` (through file.part; the stream's trailing sha256 is
   * verified before the rename) and returns its record.
   */
  async snapshot(url: string, name: string, file: string): Promise<SnapshotRecord> {
    try {
      const before = await this.status(url);
      // what a restore drill compares: the member's KV hash at the revision recorded. The compaction revision is read
      // before the snapshot and again with the hash after it: a compaction in between changes the hash, and the
      // record then goes without one (the snapshot's compaction state may be either)
      const kvBefore = await this.hashKV(url, before.revision).catch(() => undefined);
      const c = await this.backupGrpc(url);
      const size = await saveSnapshot(c.snapshotRaw(url), file);
      // The file ends with the sha256 of the database bytes; check it once more from disk.
      const sha256 = fileDigestCheck(file, size);
      // the revision the database holds (what the reference's `snapshot status` reports): writes that landed while it
      // streamed are in it, so the Status read before is only its lower bound
      const revision = Math.max(before.revision, boltStatus(readFileSync(file).subarray(0, size)).revision);
      const kvAfter = kvBefore && await this.hashKV(url, revision).catch(() => undefined);
      const kv = kvAfter && kvAfter.compactRevision === kvBefore.compactRevision ? kvAfter : undefined;
      return { location: file, member: name, revision, size, sha256, time: new Date().toISOString(), ...(kv ? { kvHash: kv.hash, compactRevision: kv.compactRevision } : {}) };
    } catch (e) {
      this.forget(url);
      const msg = (e as Error).message;
      // authentication on: say what the way out is (a root user's credentials), not only the server's words
      const hint = /user name is empty|invalid auth token|permission denied|authentication failed/i.test(msg)
        ? this.backupAuth ? '; the user of spec.backup.credentialsSecret must exist with the root role' : '; authentication is on: name a Secret with the username and password of a user with the root role in spec.backup.credentialsSecret'
        : '';
      throw new MemberError('SNAPSHOT_FAILED', `snapshot of ${name} (${url}) failed: ${msg}${hint}`, { cause: e });
    }
  }

  /** Asks the leader at `leaderUrl` to hand leadership to member `targetId` (decimal id). */
  async moveLeader(leaderUrl: string, targetId: string): Promise<void> {
    try {
      const c = await this.grpc(leaderUrl);
      await c.moveLeader(targetId, leaderUrl);
    } catch (e) {
      this.forget(leaderUrl);
      throw new MemberError('MOVE_LEADER_FAILED', `move leader to ${hexMemberId(targetId)} via ${leaderUrl} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  /** The cluster's member list as the member at `url` knows it (linearizable: through consensus; else its local view). */
  async memberList(url: string, linearizable = true): Promise<ClusterMemberInfo[]> {
    return withRetry(async () => {
      const c = await this.grpc(url);
      const r = await c.memberList({ linearizable });
      return r.members.map((m) => ({ id: String(m.ID), name: m.name, peerURLs: [...m.peerURLs], isLearner: m.isLearner }));
    }, this.attempts, 200);
  }

  /**
   * MemberAdd through the member at `url` (the leader), as a learner with `opts.isLearner`; resolves with the new member's id. An add is not
   * idempotent, so only the strict-reconfiguration refusal "unhealthy cluster" is retried (for up to 15 s): it
   * comes before anything is proposed, while the leader has not yet been connected to every voter for 5 s.
   */
  async memberAdd(url: string, peerURL: string, opts: { isLearner?: boolean } = {}): Promise<string> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        const c = await this.grpc(url);
        return String((await c.memberAdd([peerURL], { isLearner: !!opts.isLearner })).member.ID);
      } catch (e) {
        const msg = (e as Error).message;
        if (msg.includes('etcdserver: unhealthy cluster') && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        throw new MemberError('MEMBERSHIP_FAILED', `member add of ${peerURL} via ${url} failed: ${msg}`, { cause: e });
      }
    }
  }

  /** MemberRemove of `id` (decimal) through the member at `url` (the leader). */
  async memberRemove(url: string, id: string): Promise<void> {
    await this.membership(url, `member remove of ${id}`, (c) => c.memberRemove(id));
  }

  /**
   * MemberPromote of learner `id` (decimal) through the member at `url` (the leader). The server refuses a learner
   * not yet in sync with the leader ("etcdserver: can only promote a learner member which is in sync with leader"):
   * the caller plans the promotion again later.
   */
  async memberPromote(url: string, id: string): Promise<void> {
    await this.membership(url, `member promote of ${id}`, (c) => c.memberPromote(id));
  }

  /** One membership change through the member at `url`; a failure is MEMBERSHIP_FAILED, named `what`. */
  private async membership(url: string, what: string, change: (c: Client) => Promise<unknown>): Promise<void> {
    try {
      await change(await this.grpc(url));
    } catch (e) {
      throw new MemberError('MEMBERSHIP_FAILED', `${what} via ${url} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  /** Closes connections. */
  close(): void {
    for (const c of [...this.clients.values(), ...this.authed.values()]) c.close();
    this.clients.clear();
    this.authed.clear();
  }
}

/** Re-reads a saved snapshot and checks its trailing digest; returns the database's sha256, hex. */
function fileDigestCheck(file: string, size: number): string {
  const total = statSync(file).size;
  if (total !== size + 32) throw new Error(`snapshot file ${file} has ${total} bytes, expected ${size + 32}`);
  const fd = openSync(file, 'r');
  try {
    const h = createHash('sha256');
    const buf = Buffer.alloc(1 << 16);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, size - off), off);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
      off += n;
    }
    const tail = Buffer.alloc(32);
    readSync(fd, tail, 0, 32, size);
    const digest = h.digest();
    if (!digest.equals(tail)) throw new Error(`snapshot file ${file}: sha256 mismatch`);
    return digest.toString('hex');
  } finally {
    closeSync(fd);
  }
}
