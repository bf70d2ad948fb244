// Bootstrap: what a member starts from. A new member computes its ids (or learns them from the running cluster),
// creates its WAL and db and, for a new cluster, the initial configuration entries; a restarting member reads its
// newest snapshot, the db and the WAL (under --force-new-cluster, rewritten so it is the only member). Also the
// start-up checks that refuse unsafe starts (missing db, a member that lost its data rejoining under its old ID,
// an unsupported upgrade or downgrade).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RawNode, MemoryStorage } from '../raft/index.js';
import type { ConfState } from '../raft/types.js';
import { createWal, openWal, walExists, type Wal } from '../storage/wal.js';
import { Snapshotter, walSnapshots } from '../storage/snapshotter.js';
import { openBackend, type Backend } from '../storage/backend.js';
import { computeClusterId, computeMemberId, idHex } from '../cluster/ids.js';
import { peerRequest } from '../cluster/peer-http.js';
import { Membership, type Member } from '../cluster/membership.js';
import { checkServerAgainstCluster, INITIAL_CLUSTER_VERSION } from '../cluster/version.js';
import { compareMinor } from '../releases.js';
import { V2Store } from './v2store.js';
import { decodeTagged, encodeTagged } from './requests.js';
import { FatalStartError } from './fatal.js';
import { humanizeBytes } from '../log/fields.js';
import type { Logger } from '../log/logger.js';
import { membersInLog, standaloneLog } from './force-new-cluster.js';
import { CLUSTER_VERSION_KEY, clusterVersionInDb, decodeInternalState, downgradeInDb } from './applier.js';
import { admitDuringDowngrade, checkJoinDuringDowngrade } from '../cluster/downgrade.js';
import type { AlarmEntry } from './interfaces.js';
import { backendOptions, type MemberOptions } from './options.js';
import { convertReferenceDataDir, dataDirFormat, recoverInterrupted, ConvertError } from '../cluster/convert-reference.js';
import { isReferenceWalSegment, referenceSegments } from '../storage/reference-wal.js';

interface WalMetadata {
  memberId: bigint;
  clusterId: bigint;
}

/** Everything a member starts from. */
export interface Bootstrapped {
  memberId: bigint;
  clusterId: bigint;
  membership: Membership;
  v2: V2Store;
  alarms: AlarmEntry[];
  backend: Backend;
  wal: Wal;
  storage: MemoryStorage;
  snapshotter: Snapshotter;
  confState: ConfState;
  appliedIndex: number;
  snapshotIndex: number;
  /** The peers to reach before their conf-change entries apply (a new or joining member). */
  configuredPeers: Member[];
  /**
   * The members the log names (the snapshot's, then the committed conf changes), known before any of it is
   * applied: a restarted member's membership fills in only as it replays its log.
   */
  logMembers: bigint[];
  snapDir: string;
  walDir: string;
  /** The member had data (a WAL) before this start (the reference's "member initialized"). */
  restarted: boolean;
}

export function memberDirs(opts: Pick<MemberOptions, 'dataDir' | 'walDir'>): { snapDir: string; walDir: string } {
  const memberDir = join(opts.dataDir, 'member');
  return { snapDir: join(memberDir, 'snap'), walDir: opts.walDir ?? join(memberDir, 'wal') };
}

/** The members of --initial-cluster, with the ids --initial-cluster-token gives them. */
export function initialMembers(opts: Pick<MemberOptions, 'initialCluster' | 'initialClusterToken'>): Member[] {
  return opts.initialCluster.map((m) => ({
    id: computeMemberId(m.peerURLs, opts.initialClusterToken),
    name: m.name,
    peerURLs: m.peerURLs,
    clientURLs: [],
    isLearner: false,
  }));
}

/** Open or create the member's data. */
export async function bootstrap(opts: MemberOptions): Promise<Bootstrapped> {
  const { logger } = opts;
  const { snapDir, walDir } = memberDirs(opts);
  const dbPath = join(snapDir, 'db');
  await convertIfReference(opts);
  // Before anything is written: a member with no data that its cluster already knows stops.
  const newSelf = walExists(walDir) || opts.initialClusterState !== 'new' ? undefined : initialMembers(opts).find((m) => m.name === opts.name);
  if (newSelf) await refuseIfAlreadyBootstrapped(opts, newSelf.id);
  // joining a running cluster: its member list first, so a member that lost its data stops before writing too
  const existing = walExists(walDir) || opts.initialClusterState === 'new' ? undefined : await fetchExistingCluster(opts);
  const advertisedPeers = [...opts.advertisePeerURLs].sort().join(',');
  const joining = existing?.members.find((m) => [...m.peerURLs].sort().join(',') === advertisedPeers);
  // a member that published its client URLs has started before: with an empty data dir it lost its data
  if (joining && joining.clientURLs.length > 0) throw alreadyBootstrapped(opts, joining.id);
  const storage = new MemoryStorage();
  const snapshotter = new Snapshotter(logger, snapDir);
  let memberId: bigint;
  let clusterId: bigint;
  let membership: Membership;
  let v2: V2Store;
  let alarms: AlarmEntry[] = [];
  let backend: Backend;
  let wal: Wal;
  let confState: ConfState = { voters: [], learners: [] };
  let appliedIndex = 0;
  let snapshotIndex = 0;
  let bootstrapPeers: Array<{ id: bigint; context: Uint8Array }> | undefined;
  let joinPeers: Member[] | undefined;
  const restarted = walExists(walDir);

  if (!restarted) {
    if (opts.initialClusterState === 'new') {
      const members = initialMembers(opts);
      const self = members.find((m) => m.name === opts.name);
      if (!self) throw new FatalStartError(`couldn't find local name "${opts.name}" in the initial cluster configuration`);
      const advertised = [...opts.advertisePeerURLs].sort().join(',');
      if ([...self.peerURLs].sort().join(',') !== advertised) {
        throw new FatalStartError(`--initial-cluster has ${opts.name}=${self.peerURLs.join(',')} but missing from --initial-advertise-peer-urls=${opts.advertisePeerURLs.join(',')}`);
      }
      memberId = self.id;
      clusterId = computeClusterId(members.map((m) => m.id));
      membership = new Membership(clusterId);
      bootstrapPeers = members.map((m) => ({ id: m.id, context: encodeTagged(m) }));
    } else {
      const self = joining;
      if (!existing || !self) throw new FatalStartError(`error validating peerURLs: member with peer URLs ${advertisedPeers} is not in the existing cluster; add it with "member add" first`);
      memberId = self.id;
      clusterId = existing.clusterId;
      membership = new Membership(clusterId);
      // the ids come from the running members: ours may not be what our --initial-cluster-token would give
      joinPeers = existing.members;
    }
    // (only now: a refused member leaves its data dir as it found it)
    mkdirSync(snapDir, { recursive: true });
    v2 = new V2Store();
    backend = openBackend(logger, dbPath, backendOptions(opts));
    await maybeDefragBackend(opts, backend, logger);
    wal = await createWal(logger, walDir, encodeTagged({ memberId, clusterId }), { unsafeNoFsync: opts.unsafeNoFsync });
    if (bootstrapPeers) {
      RawNode.bootstrap(storage, bootstrapPeers);
      const entries = storage.entries(storage.firstIndex(), storage.lastIndex() + 1);
      const hs = storage.initialState().hardState;
      await wal.save(hs, entries, true);
    }
    logger.info('starting local member', { 'local-member-id': idHex(memberId), 'cluster-id': idHex(clusterId) });
  } else {
    const marks = await walSnapshots(logger, walDir);
    const snap = await snapshotter.loadNewestAvailable(marks);
    if (snap && !existsSync(dbPath)) {
      throw new FatalStartError(`failed to find database snapshot file: ${dbPath} is missing while consensus snapshot ${snap.metadata.term.toString(16).padStart(16, '0')}-${snap.metadata.index.toString(16).padStart(16, '0')}.snap exists; refusing to start with an empty v3 store (restore the db file or the data dir)`);
    }
    backend = openBackend(logger, dbPath, backendOptions(opts));
    refuseAuthUpgrade(opts, backend);
    await maybeDefragBackend(opts, backend, logger);
    wal = await openWal(logger, walDir, snap ? { index: snap.metadata.index, term: snap.metadata.term } : { index: 0, term: 0 }, { unsafeNoFsync: opts.unsafeNoFsync });
    const read = await wal.readAll();
    let { hardState, entries } = read;
    const meta = decodeTagged<WalMetadata>(read.metadata);
    memberId = meta.memberId;
    clusterId = meta.clusterId;
    if (opts.forceNewCluster) {
      const self: Member = { id: memberId, name: opts.name, peerURLs: opts.advertisePeerURLs, clientURLs: [], isLearner: false };
      const forced = standaloneLog(memberId, encodeTagged(self), snap?.metadata.confState ?? { voters: [], learners: [] }, hardState, entries);
      if (forced.discardedFrom !== undefined) {
        logger.info('discarding uncommitted WAL entries', { 'entry-index': forced.discardedFrom, 'commit-index-from-wal': hardState.commit, 'number-of-discarded-entries': forced.discarded });
      }
      await wal.save(forced.hardState, forced.appended, true);
      ({ hardState, entries } = forced);
    }
    if (snap) {
      storage.applySnapshot(snap);
      ({ membership, v2, alarms } = decodeInternalState(snap.data));
      // As the reference, only the v2 snapshot is looked at (keys still only in the WAL are not).
      // (3.7 no longer loads the v2 snapshot at all: nothing in it can stop the member.)
      if (v2.hasContent() && opts.release.v2SnapshotAtStart === 'refuse') {
        const stage = opts.v2Deprecation ?? 'not-yet';
        if (stage === 'write-only-skip-check') {
          logger.warn('WARNING: --v2-deprecation=write-only-skip-check is enabled; v2 content detected, but validation check is being bypassed');
        } else if (stage !== 'not-yet') {
          const error = `detected disallowed custom content in v2store for stage --v2-deprecation=${stage}`;
          logger.error('illegal v2store content', { error });
          throw new FatalStartError(error);
        }
        if (opts.release.warnsOfV2Content) logger.warn('detected custom v2store content. Etcd v3.5 is the last version allowing to access it using API v2. Please remove the content.');
      }
      confState = snap.metadata.confState;
      snapshotIndex = snap.metadata.index;
      appliedIndex = snap.metadata.index;
    } else {
      membership = new Membership(clusterId);
      v2 = new V2Store();
    }
    storage.setHardState(hardState);
    storage.append(entries);
    // A restarted member starts from the floor version and moves up as it replays and as the leader decides.
    const fields = { 'cluster-id': idHex(clusterId), 'local-member-id': idHex(memberId) };
    if (membership.version === undefined) {
      membership.version = INITIAL_CLUSTER_VERSION;
      logger.info('set initial cluster version', { ...fields, 'cluster-version': INITIAL_CLUSTER_VERSION });
    } else {
      logger.info('set cluster version from store', { ...fields, 'cluster-version': membership.version });
    }
    logger.info('enabled capabilities for version', { 'cluster-version': membership.version });
    logger.info(opts.forceNewCluster ? 'forcing restart member' : 'restarting local member', { 'local-member-id': idHex(memberId), 'cluster-id': idHex(clusterId), 'commit-index': hardState.commit });
    if (opts.forceNewCluster) {
      // Left on, the flag removes again at the next restart every member added in between.
      logger.warn('--force-new-cluster made this member the only one of its cluster; remove the flag from its command line before its next restart, or the members added meanwhile are removed again', { 'local-member-id': idHex(memberId) });
    }
    // the db is ahead of the snapshot: its job and cluster version are the newest this member knows
    const job = downgradeInDb(backend) ?? membership.downgrade;
    if (job.enabled) logger.info('cluster is downgrading to target version', { 'target-cluster-version': job.targetVersion, 'current-server-version': opts.release.version });
    const check = admitDuringDowngrade(opts.release.downgrade, opts.release.version, job) ?? checkServerAgainstCluster(opts.release.version, clusterVersionInDb(backend) ?? membership.version);
    if (!check.ok) {
      backend.close();
      await wal.close();
      throw new FatalStartError(check.reason);
    }
  }
  if (opts.initialClusterState === 'existing' && bootstrapPeers === undefined && !membership.member(memberId)) {
    await checkAgainstRunningMembers(opts, backend, wal);
  }
  // Peers named in the configuration are reachable before their conf-change entries apply.
  const configuredPeers = opts.initialClusterState === 'existing' || bootstrapPeers ? (joinPeers ?? initialMembers(opts)) : [];
  const { hardState: hs, confState: cs } = storage.initialState();
  const lastCommitted = Math.min(hs.commit, storage.lastIndex());
  const logMembers = membersInLog(cs, lastCommitted >= storage.firstIndex() ? storage.entries(storage.firstIndex(), lastCommitted + 1) : []);
  return { memberId, clusterId, membership, v2, alarms, backend, wal, storage, snapshotter, confState, appliedIndex, snapshotIndex, configuredPeers, logMembers, snapDir, walDir, restarted };
}

/** A data dir the reference made (its member, or its `etcdutl snapshot restore`) is converted into svc's once. */
async function convertIfReference(opts: MemberOptions): Promise<void> {
  recoverInterrupted(opts.logger, opts.dataDir);
  const inWalDir = opts.walDir !== undefined && isReferenceWal(opts.walDir);
  if (dataDirFormat(opts.dataDir) !== 'reference' && !inWalDir) return;
  if (opts.walDir) {
    throw new FatalStartError(`${opts.walDir} or ${opts.dataDir} holds the reference's (etcd's) data, which svc converts only in the default layout: move the reference's WAL to ${join(opts.dataDir, 'member', 'wal')} and start svc once without --wal-dir to convert it. Nothing was changed`);
  }
  try {
    await convertReferenceDataDir(opts.logger, opts.dataDir);
  } catch (e) {
    if (e instanceof ConvertError) throw new FatalStartError(e.message);
    throw e;
  }
}

function isReferenceWal(dir: string): boolean {
  const segs = referenceSegments(dir);
  return segs.length > 0 && isReferenceWalSegment(segs[0]);
}

/** A joining member compares its release with the cluster version the running members report. */
async function checkAgainstRunningMembers(opts: MemberOptions, backend: Backend, wal: Wal): Promise<void> {
  const urls = opts.initialCluster.filter((m) => m.name !== opts.name).flatMap((m) => m.peerURLs);
  for (const u of urls) {
    try {
      const res = await peerRequest(new URL('/version', u).toString(), { timeoutMs: 1000, tls: opts.peerTls });
      const cv = (JSON.parse(res.body) as { etcdcluster?: string }).etcdcluster;
      if (!cv || cv === 'not_decided') continue;
      const enabled = await peerRequest(new URL('/downgrade/enabled', u).toString(), { timeoutMs: 1000, tls: opts.peerTls }).then((r) => r.status === 200 && r.body === 'true', () => false);
      const remote = cv.split('.').slice(0, 2).join('.');
      const check = enabled ? checkJoinDuringDowngrade(opts.release.version, remote) : checkServerAgainstCluster(opts.release.version, remote);
      if (!check.ok) {
        backend.close();
        await wal.close();
        throw new FatalStartError(check.reason);
      }
      return;
    } catch (e) {
      if (e instanceof FatalStartError) throw e;
    }
  }
}

/** The spec: a rolling upgrade to 3.5 of a cluster with authentication on is not supported. Refuse before
 *  anything is written, so the data dir stays as the older release left it. */
function refuseAuthUpgrade(opts: MemberOptions, backend: Backend): void {
  if (!opts.release.refusesAuthUpgradeFromBelow) return;
  const tx = backend.readTx();
  const authOn = tx.get('auth', new TextEncoder().encode('authEnabled'))?.[0] === 1;
  const cvBytes = tx.get('cluster', CLUSTER_VERSION_KEY);
  const cv = cvBytes ? Buffer.from(cvBytes).toString('utf8') : undefined;
  if (authOn && cv !== undefined && compareMinor(cv, opts.release.minor) < 0) {
    backend.close();
    throw new FatalStartError(`rolling upgrade to ${opts.release.minor} is not supported while authentication is enabled (cluster version ${cv}): ${opts.release.minor} changes the write-ahead-log format of authentication entries. Nothing was changed; restart this member with its previous release, then disable authentication before upgrading (or restore a snapshot into a new ${opts.release.minor} cluster)`);
  }
}

/**
 * A member about to bootstrap a new cluster with no data of its own asks its peers first, as the reference does:
 * if they already have a member with its ID that has started (published its client URLs), this member lost its
 * data. Rejoining under the old ID would let a member that forgot its votes and its log vote again, so it stops.
 * Peers that do not answer (a cluster starting for the first time) let it go on.
 */
async function refuseIfAlreadyBootstrapped(opts: MemberOptions, id: bigint): Promise<void> {
  const running = await askPeersForCluster(opts, 1000);
  if (!running.cluster?.members.find((m) => m.id === id && m.clientURLs.length > 0)) return;
  throw alreadyBootstrapped(opts, id);
}

/** The refusal of a member whose ID the running cluster has as started while its own data dir is empty. */
function alreadyBootstrapped(opts: MemberOptions, id: bigint): FatalStartError {
  return new FatalStartError(
    `member ${idHex(id)} has already been bootstrapped: the running cluster has a member with this ID, but its data dir ` +
      `${opts.dataDir} holds no data, so it lost its data (and the votes and log entries it acknowledged). It must not ` +
      `rejoin under its old ID: remove it from the cluster (member remove ${idHex(id)}), add it again (member add, ` +
      `best as a learner), and start it with --initial-cluster-state existing and an empty data dir. Nothing was written`,
  );
}

/** The cluster as the first peer of --initial-cluster that answers describes it, or why none did. */
async function askPeersForCluster(opts: MemberOptions, timeoutMs: number): Promise<{ cluster?: { clusterId: bigint; members: Member[] }; errors: string[] }> {
  const urls = opts.initialCluster.filter((m) => m.name !== opts.name).flatMap((m) => m.peerURLs);
  const errors: string[] = [];
  for (const u of urls) {
    try {
      const res = await peerRequest(new URL('/members', u).toString(), { timeoutMs, tls: opts.peerTls });
      const cid = res.headers['x-etcd-cluster-id'] as string | undefined;
      const list = JSON.parse(res.body) as Array<{ id: string; name: string; peerURLs: string[]; clientURLs: string[]; isLearner?: boolean }>;
      if (!cid) throw new Error('no cluster id in the answer');
      const members = list.map((m) => ({ id: BigInt('0x' + m.id), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs ?? [], isLearner: !!m.isLearner }));
      return { cluster: { clusterId: BigInt('0x' + cid), members }, errors };
    } catch (e) {
      errors.push(`${u}: ${(e as Error).message}`);
    }
  }
  return { errors };
}

/** A joining member learns the cluster from the members' peer URLs. */
async function fetchExistingCluster(opts: MemberOptions): Promise<{ clusterId: bigint; members: Member[] }> {
  const { cluster, errors } = await askPeersForCluster(opts, 2000);
  if (cluster) return cluster;
  throw new FatalStartError(`cannot fetch cluster info from peer urls (${errors.join('; ') || 'none given in --initial-cluster'})`);
}

/** --experimental-bootstrap-defrag-threshold-megabytes: defragment at start when that much would be freed. */
async function maybeDefragBackend(opts: MemberOptions, backend: Backend, logger: Logger): Promise<void> {
  const thresholdBytes = (opts.bootstrapDefragThresholdMegabytes ?? 0) * 1024 * 1024;
  if (thresholdBytes === 0) return;
  const size = backend.size();
  const sizeInUse = backend.sizeInUse();
  if (size - sizeInUse < thresholdBytes) {
    logger.info('Skipping defragmentation', {
      'current-db-size-bytes': size, 'current-db-size': humanizeBytes(size),
      'current-db-size-in-use-bytes': sizeInUse, 'current-db-size-in-use': humanizeBytes(sizeInUse),
      'experimental-bootstrap-defrag-threshold-bytes': thresholdBytes, 'experimental-bootstrap-defrag-threshold': humanizeBytes(thresholdBytes),
    });
    return;
  }
  await backend.defrag();
}
