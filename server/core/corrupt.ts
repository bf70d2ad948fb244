// Corruption checks (--experimental-initial-corrupt-check, --experimental-corrupt-check-time), with the reference's
// rules and log lines:
// - the initial check: before a restarting member serves anything, it hashes its KV store at its current revision
//   and asks each peer for its hash at that same revision (GET <peer URL>/members/hashkv, a JSON HashKVRequest in
//   the body). A peer whose hash differs while its compact revision is the same is a mismatch: the member refuses
//   to start ("<id> found data inconsistency with peers"). A peer that is behind (future revision), a peer that
//   compacted past the revision, or one of another cluster is only logged.
// - the periodic check, on the leader: hash, ask the peers at that revision, wait for a linearizable read and hash
//   again. The local hash changing at the same revision, a peer ahead of the leader (revision or compact revision),
//   or a peer at the leader's compact revision with another hash raises the CORRUPT alarm, once per pass. As the
//   reference 3.5 does, the alarm names member 0: which member's data is wrong is not known. Peers that do not
//   answer (behind, unreachable) are skipped.
// - the compaction hash check (--experimental-compact-hash-check-enabled, every --experimental-compact-hash-check-time),
//   on the leader: each hash its own compactions took (the newest first, down to the last revision checked) is
//   compared with the peers' hashes at that revision, which they took at the same compaction. Peers with another
//   compact revision or no answer are skipped; a pass ends at the first revision every peer answered. On a
//   mismatch the members outside the majority hash get the CORRUPT alarm; with no majority, member 0 does.
import { idHex } from '../cluster/ids.js';
import { peerRequest, type PeerTlsClient } from '../cluster/peer-http.js';
import type { Logger } from '../log/logger.js';
import { formatDuration } from './lifecycle.js';

export const PEER_HASHKV_PATH = '/members/hashkv';
const COMPACTED = 'mvcc: required revision has been compacted';
const FUTURE_REV = 'mvcc: required revision is a future revision';
const CLUSTER_ID_MISMATCH = 'cluster ID mismatch';

/** A member's KV hash as /members/hashkv answers it: `revision` is the member's current revision. */
export interface KvHash {
  hash: number;
  revision: number;
  compactRevision: number;
}

export interface PeerHash {
  id: bigint;
  urls: string[];
  resp?: KvHash;
  /** Why no answer came: 'future' (the peer is behind), 'compacted' (this member is behind), 'cluster-id', other text. */
  err?: string;
}

export interface CorruptionDeps {
  memberId: bigint;
  clusterId: bigint;
  logger: Logger;
  requestTimeoutMs: () => number;
  /** Hash of the local store at `rev` (0: the current revision); throws the mvcc errors. */
  hashByRev(rev: number): KvHash;
  /** The other members: id and peer URLs. */
  peers(): Array<{ id: bigint; peerURLs: string[] }>;
  tls?: PeerTlsClient;
  linearizableReadNotify(): Promise<void>;
  triggerCorruptAlarm(memberId: bigint): void;
  /** The hashes this member's compactions took (revision: the compaction's), any order. */
  compactionHashes?(): readonly KvHash[];
  /** How one peer URL is asked (default: fetchPeerHash over HTTP; tests hand in another). */
  fetch?(url: string, rev: number): Promise<KvHash>;
}

/** Ask one peer URL for its hash at `rev`. */
export async function fetchPeerHash(url: string, rev: number, clusterId: bigint, timeoutMs: number, tls?: PeerTlsClient): Promise<KvHash> {
  const res = await peerRequest(new URL(PEER_HASHKV_PATH, url).toString(), {
    method: 'GET',
    body: JSON.stringify({ revision: rev }),
    timeoutMs,
    tls,
    headers: { 'content-type': 'application/json', 'X-Etcd-Cluster-ID': idHex(clusterId) },
  });
  if (res.status === 400 && res.body.includes(COMPACTED)) throw new PeerHashError('compacted', COMPACTED);
  if (res.status === 400 && res.body.includes(FUTURE_REV)) throw new PeerHashError('future', FUTURE_REV);
  if (res.status === 412 && res.body.includes(CLUSTER_ID_MISMATCH)) throw new PeerHashError('cluster-id', CLUSTER_ID_MISMATCH);
  if (res.status !== 200) throw new PeerHashError('other', `unknown error: ${res.body}`);
  const j = JSON.parse(res.body) as { header?: { revision?: number | string }; hash?: number; compact_revision?: number | string };
  return { hash: Number(j.hash ?? 0), revision: Number(j.header?.revision ?? 0), compactRevision: Number(j.compact_revision ?? 0) };
}

export class PeerHashError extends Error {
  constructor(readonly kind: 'compacted' | 'future' | 'cluster-id' | 'other', message: string) {
    super(message);
  }
}

/** The peer side: the answer to GET /members/hashkv (status and body as the reference's handler writes them). */
export function serveHashKV(
  d: { clusterId: bigint; logger: Logger; hashByRev(rev: number): KvHash },
  method: string,
  path: string,
  headerClusterId: string | undefined,
  body: string,
): { status: number; body: string; json?: boolean } {
  if (method !== 'GET') return { status: 405, body: 'Method Not Allowed\n' };
  if (path !== PEER_HASHKV_PATH) return { status: 400, body: 'bad path\n' };
  if (headerClusterId && headerClusterId !== idHex(d.clusterId)) return { status: 412, body: `${CLUSTER_ID_MISMATCH}\n` };
  let rev: number;
  try {
    const j = JSON.parse(body === '' ? '{}' : body) as { revision?: number | string };
    rev = Number(j.revision ?? 0);
    if (!Number.isSafeInteger(rev)) throw new Error('revision is not an integer');
  } catch (e) {
    d.logger.warn('failed to unmarshal request', { error: (e as Error).message });
    return { status: 400, body: 'error unmarshalling request\n' };
  }
  try {
    const h = d.hashByRev(rev);
    const header: Record<string, number> = {};
    if (h.revision !== 0) header.revision = h.revision;
    const out: Record<string, unknown> = { header };
    if (h.hash !== 0) out.hash = h.hash;
    if (h.compactRevision !== 0) out.compact_revision = h.compactRevision;
    return { status: 200, body: JSON.stringify(out), json: true };
  } catch (e) {
    const message = (e as Error).message;
    d.logger.warn('failed to get hashKV', { 'requested-revision': rev, error: message });
    return { status: 400, body: `${message}\n` };
  }
}

export class CorruptionChecker {
  /** The newest compaction revision every peer agreed on (a pass looks only above it). */
  private latestRevisionChecked = 0;

  /** The leader's periodic checks' next passes, by check. */
  private readonly monitors = new Map<string, NodeJS.Timeout>();

  constructor(private readonly d: CorruptionDeps) {}

  /**
   * The leader's periodic checks: the KV hash comparison (--experimental-corrupt-check-time) and the compaction hash
   * check (--experimental-compact-hash-check-enabled, every --experimental-compact-hash-check-time); 0: off.
   */
  startMonitors(o: { corruptCheckTimeMs: number; compactHashCheckTimeMs: number; isLeader(): boolean; ending(): boolean }): void {
    if (o.corruptCheckTimeMs > 0) this.d.logger.info('enabled corruption checking', { 'local-member-id': idHex(this.d.memberId), interval: formatDuration(o.corruptCheckTimeMs) });
    this.everyAsLeader('corrupt', o.corruptCheckTimeMs, 'failed to check hash KV', () => this.periodicCheck(), o);
    this.everyAsLeader('compactHash', o.compactHashCheckTimeMs, 'failed to check compaction hashes', () => this.compactHashCheck(), o);
  }

  stopMonitors(): void {
    for (const t of this.monitors.values()) clearTimeout(t);
  }

  /** Runs `check` every `interval` ms (0: never) while this member leads, until it stops; a failed pass is logged. */
  private everyAsLeader(name: string, interval: number, failure: string, check: () => Promise<unknown>, o: { isLeader(): boolean; ending(): boolean }): void {
    if (interval <= 0) return;
    const pass = async (): Promise<void> => {
      if (o.ending()) return;
      if (o.isLeader()) {
        try {
          await check();
        } catch (e) {
          this.d.logger.warn(failure, { error: (e as Error).message });
        }
      }
      if (!o.ending()) this.monitors.set(name, setTimeout(() => void pass(), interval));
    };
    this.monitors.set(name, setTimeout(() => void pass(), interval));
  }

  /** The peers' hashes at `rev` (each peer's URLs in turn until one answers). */
  async peerHashes(rev: number): Promise<PeerHash[]> {
    const { d } = this;
    const out: PeerHash[] = [];
    for (const p of d.peers()) {
      if (p.id === d.memberId || p.peerURLs.length === 0) continue;
      let last: string | undefined;
      let resp: KvHash | undefined;
      for (const u of p.peerURLs) {
        try {
          resp = d.fetch ? await d.fetch(u, rev) : await fetchPeerHash(u, rev, d.clusterId, d.requestTimeoutMs(), d.tls);
          break;
        } catch (e) {
          last = e instanceof PeerHashError ? e.kind : (e as Error).message;
          d.logger.warn('failed hash kv request', { 'local-member-id': idHex(d.memberId), 'requested-revision': rev, 'remote-peer-endpoint': u, error: (e as Error).message });
        }
      }
      out.push(resp ? { id: p.id, urls: p.peerURLs, resp } : { id: p.id, urls: p.peerURLs, err: last });
    }
    return out;
  }

  /** Resolves when no peer disagrees; rejects with the reference's error when one does. */
  async initialCheck(): Promise<void> {
    const { d } = this;
    const me = idHex(d.memberId);
    d.logger.info('starting initial corruption check', { 'local-member-id': me, timeout: formatDuration(d.requestTimeoutMs()) });
    let h: KvHash;
    try {
      h = d.hashByRev(0);
    } catch (e) {
      throw new Error(`${me} failed to fetch hash (${(e as Error).message})`, { cause: e });
    }
    const local = { 'local-member-id': me, 'local-member-revision': h.revision, 'local-member-compact-revision': h.compactRevision, 'local-member-hash': h.hash };
    let mismatch = 0;
    for (const p of await this.peerHashes(h.revision)) {
      const remote = { 'remote-peer-id': idHex(p.id), 'remote-peer-endpoints': p.urls };
      if (p.resp) {
        const fields = { ...local, ...remote, 'remote-peer-revision': p.resp.revision, 'remote-peer-compact-revision': p.resp.compactRevision, 'remote-peer-hash': p.resp.hash };
        if (p.resp.hash !== h.hash) {
          if (p.resp.compactRevision === h.compactRevision) {
            d.logger.warn('found different hash values from remote peer', fields);
            mismatch++;
          } else {
            d.logger.warn('found different compact revision values from remote peer', fields);
          }
        }
        continue;
      }
      if (p.err === 'future') d.logger.warn('cannot fetch hash from slow remote peer', { ...local, ...remote });
      else if (p.err === 'compacted') d.logger.warn('cannot fetch hash from remote peer; local member is behind', { ...local, ...remote });
      else if (p.err === 'cluster-id') d.logger.warn('cluster ID mismatch', { ...local, ...remote });
    }
    if (mismatch > 0) throw new Error(`${me} found data inconsistency with peers`);
    d.logger.info('initial corruption checking passed; no corruption', { 'local-member-id': me });
  }

  /** One pass of the leader's check; raises CORRUPT (member 0) at most once. */
  async periodicCheck(): Promise<void> {
    const { d } = this;
    const h = d.hashByRev(0);
    const peers = await this.peerHashes(h.revision);
    await d.linearizableReadNotify();
    const h2 = d.hashByRev(0);
    let alarmed = false;
    const mismatch = (): void => {
      if (alarmed) return;
      alarmed = true;
      d.triggerCorruptAlarm(0n);
    };
    if (h2.hash !== h.hash && h2.revision === h.revision && h2.compactRevision === h.compactRevision) {
      d.logger.warn('found hash mismatch', {
        'revision-1': h.revision, 'compact-revision-1': h.compactRevision, 'hash-1': h.hash,
        'revision-2': h2.revision, 'compact-revision-2': h2.compactRevision, 'hash-2': h2.hash,
      });
      mismatch();
    }
    let checked = 0;
    for (const p of peers) {
      if (!p.resp) continue;
      checked++;
      const peer = idHex(p.id);
      if (p.resp.revision > h2.revision) {
        d.logger.warn("revision from follower must be less than or equal to leader's", { 'leader-revision': h2.revision, 'follower-revision': p.resp.revision, 'follower-peer-id': peer });
        mismatch();
      }
      if (p.resp.compactRevision > h2.compactRevision) {
        d.logger.warn("compact revision from follower must be less than or equal to leader's", { 'leader-compact-revision': h2.compactRevision, 'follower-compact-revision': p.resp.compactRevision, 'follower-peer-id': peer });
        mismatch();
      }
      if (p.resp.compactRevision === h.compactRevision && p.resp.hash !== h.hash) {
        d.logger.warn('same compact revision then hashes must match', {
          'leader-compact-revision': h2.compactRevision, 'leader-hash': h.hash,
          'follower-compact-revision': p.resp.compactRevision, 'follower-hash': p.resp.hash, 'follower-peer-id': peer,
        });
        mismatch();
      }
    }
    d.logger.info('finished peer corruption check', { 'number-of-peers-checked': checked });
  }

  /** One pass of the leader's compaction hash check; returns how many of its hashes it looked at. */
  async compactHashCheck(): Promise<number> {
    const { d } = this;
    d.logger.info('starting compact hash check', { 'local-member-id': idHex(d.memberId), timeout: formatDuration(d.requestTimeoutMs()) });
    const hashes = [...(d.compactionHashes?.() ?? [])].filter((h) => h.revision > this.latestRevisionChecked).sort((a, b) => b.revision - a.revision);
    for (const [i, h] of hashes.entries()) {
      const peers = await this.peerHashes(h.revision);
      if (peers.length === 0) continue;
      if (this.comparePeerHashes(h, peers)) {
        d.logger.info('finished compaction hash check', { 'number-of-hashes-checked': i + 1 });
        return i + 1;
      }
    }
    d.logger.info('finished compaction hash check', { 'number-of-hashes-checked': hashes.length });
    return hashes.length;
  }

  /** False only when some peer could not be compared at this revision (the pass goes on to an older one). */
  private comparePeerHashes(leader: KvHash, peers: PeerHash[]): boolean {
    const { d } = this;
    const me = idHex(d.memberId);
    const byHash = new Map<number, bigint[]>([[leader.hash, [d.memberId]]]);
    let checked = 0;
    for (const p of peers) {
      const reason = !p.resp ? 'no response'
        : p.resp.compactRevision !== leader.compactRevision ? `the peer's CompactRevision ${p.resp.compactRevision} doesn't match leader's CompactRevision ${leader.compactRevision}` : undefined;
      if (reason !== undefined) {
        d.logger.warn("Skipped peer's hash", { 'number-of-peers': peers.length, 'leader-id': me, 'peer-id': idHex(p.id), reason });
        continue;
      }
      checked++;
      byHash.set(p.resp!.hash, [...(byHash.get(p.resp!.hash) ?? []), p.id]);
    }
    const at = { 'leader-revision': leader.revision, 'leader-compact-revision': leader.compactRevision, 'leader-hash': leader.hash };
    if (byHash.size === 1) {
      if (checked < peers.length) {
        d.logger.warn('skipped revision in compaction hash check; was not able to check all peers', { 'number-of-peers-checked': checked, 'number-of-peers': peers.length, revision: leader.revision, compactRevision: leader.compactRevision });
        return false;
      }
      d.logger.info('successfully checked hash on whole cluster', { 'number-of-peers-checked': checked, revision: leader.revision, compactRevision: leader.compactRevision });
      this.latestRevisionChecked = Math.max(this.latestRevisionChecked, leader.revision);
      return true;
    }
    const quorum = Math.floor((peers.length + 1) / 2) + 1;
    const majority = [...byHash].find(([, ids]) => ids.length >= quorum);
    if (majority) byHash.delete(majority[0]);
    else {
      d.logger.error('Detected compaction hash mismatch but cannot identify the corrupted members, so intentionally set the memberID as 0', { 'leader-id': me, ...at });
      d.triggerCorruptAlarm(0n);
    }
    for (const [hash, ids] of byHash) {
      if (majority) for (const id of ids) d.triggerCorruptAlarm(id);
      d.logger.error('Detected compaction hash mismatch', { 'leader-id': me, ...at, 'peer-hash': hash, 'peer-ids': ids.map(idHex), 'quorum-exist': majority !== undefined });
    }
    return true;
  }
}
