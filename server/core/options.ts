// What a member needs to run, independent of where it came from (command-line flags, a config file, or an
// embedding program's config object).
import type { SecureVersion } from 'node:tls';
import type { BackendOptions } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import type { Release } from '../releases.js';
import type { JwtTokens } from '../auth/tokens.js';
import type { RevocationList } from '../transport/revocation.js';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  /** Require and verify client certificates. */
  clientCertAuth: boolean;
  /** A certificate revocation list (PEM): revoked certificates are refused. */
  crl?: RevocationList;
  /** Peer only (--peer-cert-allowed-cn): the common names a peer certificate may have. */
  allowedCNs?: string[];
  /** Made by --peer-auto-tls / --auto-tls: the other side's certificate is not verified (it is self-signed too). */
  selfSigned?: boolean;
  /** --peer-client-cert-file / --peer-client-key-file: presented when this member dials (default cert/key). */
  dialCert?: Buffer;
  dialKey?: Buffer;
  /** --tls-min-version / --tls-max-version, for serving and dialling alike. */
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
  /** --peer-cert-allowed-hostname: SAN hostnames a peer certificate may name (besides allowedCNs). */
  allowedHostnames?: string[];
}

export interface MemberOptions {
  name: string;
  dataDir: string;
  walDir?: string;
  /** --initial-cluster, parsed: name -> peer URLs. */
  initialCluster: Array<{ name: string; peerURLs: string[] }>;
  initialClusterState: 'new' | 'existing';
  initialClusterToken: string;
  /** --initial-advertise-peer-urls */
  advertisePeerURLs: string[];
  /** --advertise-client-urls */
  advertiseClientURLs: string[];
  /** --listen-peer-urls */
  listenPeerURLs: string[];
  tickMs: number;
  electionMs: number;
  snapshotCount: number;
  /** --max-learners: learners the cluster may have at once (default 1). */
  maxLearners?: number;
  /** The feature gates and their values (3.6; /metrics shows them). */
  featureGates?: ReadonlyMap<string, boolean>;
  /** Entries kept in the log after a snapshot so slow followers can catch up without one. */
  snapshotCatchUpEntries: number;
  maxSnapshots: number;
  maxWals: number;
  quotaBackendBytes: number;
  maxRequestBytes: number;
  maxTxnOps: number;
  /** bcrypt cost of stored passwords (--bcrypt-cost). */
  bcryptCost: number;
  /** --auth-token jwt,...: the JWT provider (absent: simple tokens). */
  authTokens?: JwtTokens;
  /** --auth-token-ttl: a simple token is forgotten this long after its last use (default 300 s). */
  simpleTokenTtlMs?: number;
  preVote: boolean;
  /** --backend-batch-limit / --backend-batch-interval (ms): when buffered writes are committed to the db. */
  backendBatchLimit?: number;
  backendBatchIntervalMs?: number;
  /** --raft-read-timeout / --raft-write-timeout (ms): a peer stream silent or stuck this long is dropped. */
  raftReadTimeoutMs?: number;
  raftWriteTimeoutMs?: number;
  /** --experimental-bootstrap-defrag-threshold-megabytes (0: never). */
  bootstrapDefragThresholdMegabytes?: number;
  /** --experimental-compaction-batch-limit / --experimental-compaction-sleep-interval. */
  compactionBatchLimit?: number;
  compactionSleepMs?: number;
  /** --experimental-warning-apply-duration: an apply slower than this is logged (default 100 ms). */
  warningApplyMs?: number;
  /** --v2-deprecation beyond not-yet: v2 keys in the v2 snapshot stop the member at start. */
  v2Deprecation?: 'not-yet' | 'write-only' | 'write-only-skip-check' | 'write-only-drop-data' | 'gone';
  /** --initial-election-tick-advance (default true): see tick-advance.ts. */
  initialElectionTickAdvance?: boolean;
  enableV2: boolean;
  strictReconfigCheck: boolean;
  /**
   * --force-new-cluster: restart from this member's data as the only member of its cluster (the others are
   * removed through the log), for a cluster that lost its quorum for good. Ignored for a member without data.
   */
  forceNewCluster?: boolean;
  /** How often members compare versions (the reference: about 4 s). */
  versionMonitorMs: number;
  /** --downgrade-check-time (ms): how often the leader checks whether a downgrade finished; 0: never. Default 5 s. */
  downgradeCheckMs?: number;
  peerTls?: TlsFiles;
  /** --auto-compaction-mode / --auto-compaction-retention (retention: revisions, or a period in ms; absent: off). */
  autoCompaction?: { mode: 'periodic' | 'revision'; retention: number };
  /** How often the revision-mode auto-compactor looks at the revision (ms; tests shorten it). Default: the compactor's. */
  autoCompactionRevisionIntervalMs?: number;
  /** --experimental-watch-progress-notify-interval (ms): periodic progress notifications of watches. */
  watchProgressNotifyMs?: number;
  /** --unsafe-no-fsync (3.5): skip fsync of the WAL and the db. */
  unsafeNoFsync?: boolean;
  /** --experimental-initial-corrupt-check: a restarting member compares its KV hash with its peers' before serving. */
  initialCorruptCheck?: boolean;
  /** --experimental-corrupt-check-time (ms; 0 or absent: off): how often the leader compares the members' KV hashes. */
  corruptCheckTimeMs?: number;
  /** --experimental-compact-hash-check-enabled with -time (ms; 0 or absent: off): how often the leader compares its compactions' hashes with the peers'. */
  compactHashCheckTimeMs?: number;
  release: Release;
  logger: Logger;
}

export const DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024;

export function defaultMemberOptions(release: Release, logger: Logger): Omit<MemberOptions, 'name' | 'dataDir' | 'initialCluster' | 'advertisePeerURLs' | 'advertiseClientURLs' | 'listenPeerURLs'> {
  return {
    initialClusterState: 'new',
    initialClusterToken: 'svc-cluster',
    tickMs: 100,
    electionMs: 1000,
    snapshotCount: 100000,
    snapshotCatchUpEntries: 5000,
    maxSnapshots: 5,
    maxWals: 5,
    quotaBackendBytes: DEFAULT_QUOTA_BYTES,
    maxRequestBytes: 1.5 * 1024 * 1024,
    maxTxnOps: 128,
    bcryptCost: 10,
    preVote: release.preVoteDefault,
    enableV2: release.enableV2Default,
    strictReconfigCheck: true,
    versionMonitorMs: 4000,
    release,
    logger,
  };
}

/** How the member's db commits: the batching flags and --unsafe-no-fsync. */
export function backendOptions(opts: Pick<MemberOptions, 'unsafeNoFsync' | 'backendBatchLimit' | 'backendBatchIntervalMs'>): BackendOptions {
  return {
    unsafeNoFsync: opts.unsafeNoFsync,
    ...(opts.backendBatchLimit !== undefined ? { batchLimit: opts.backendBatchLimit } : {}),
    ...(opts.backendBatchIntervalMs !== undefined ? { batchIntervalMs: opts.backendBatchIntervalMs } : {}),
  };
}

/** The peer transport's TLS when it dials (--peer-client-cert-file first): a self-signed peer is not verified. */
export function peerDialTls({ peerTls: t }: Pick<MemberOptions, 'peerTls'>) {
  return t ? { cert: t.dialCert ?? t.cert, key: t.dialKey ?? t.key, ca: t.ca, rejectUnauthorized: !!t.ca && !t.selfSigned, minVersion: t.minVersion, maxVersion: t.maxVersion } : undefined;
}

/** The peer server's TLS: the certificate it serves and what it asks of a peer's. */
export function peerServeTls({ peerTls: t }: Pick<MemberOptions, 'peerTls'>) {
  return t ? { cert: t.cert, key: t.key, ca: t.ca, clientCertAuth: t.clientCertAuth, crl: t.crl, allowedCNs: t.allowedCNs, allowedHostnames: t.allowedHostnames, minVersion: t.minVersion, maxVersion: t.maxVersion } : undefined;
}

/** --raft-read-timeout / --raft-write-timeout as the transport takes them (absent: its defaults). */
export function peerStreamTimings(opts: Pick<MemberOptions, 'raftReadTimeoutMs' | 'raftWriteTimeoutMs'>): { readTimeoutMs?: number; writeTimeoutMs?: number } {
  return { ...(opts.raftReadTimeoutMs ? { readTimeoutMs: opts.raftReadTimeoutMs } : {}), ...(opts.raftWriteTimeoutMs ? { writeTimeoutMs: opts.raftWriteTimeoutMs } : {}) };
}
