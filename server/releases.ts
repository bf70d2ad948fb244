// The one table of release differences. Every behaviour that differs between 3.3, 3.4 and 3.5 is
// decided here; the rest of the code asks this module instead of comparing version numbers itself.

export interface Release {
  /** Full release, e.g. "3.4.34". */
  version: string;
  /** "3.4": what log records and the cluster version use. */
  minor: string;
  /** Default of --enable-v2. */
  enableV2Default: boolean;
  /** What /v3beta/... does: served like /v3, redirected to /v3, or not found. */
  v3betaGateway: 'serve' | 'redirect' | 'removed';
  /** Metric names served for the mvcc counters. */
  metricsDebuggingAliases: boolean;
  metricsMvccNames: boolean;
  /** Loggers this release knows, and its default. */
  loggers: Array<'capnslog' | 'zap'>;
  loggerDefault: 'capnslog' | 'zap';
  /** PUT /config/local/log: served, or served with a deprecation warning. */
  configLocalLog: 'serve' | 'deprecated';
  /** Default API version of svcctl (SVCCTL_API unset). */
  clientApiDefault: 2 | 3;
  /** Pre-vote default (off in 3.4, on in 3.5). */
  preVoteDefault: boolean;
  /** Flags that exist but warn when used, with the warning text. */
  deprecatedFlags: Record<string, string>;
  /** Flags that this release does not know at all (an error when given). */
  unknownFlags: string[];
  /** Flags the reference release has and svc does not implement: refused with "not supported by svc" (exit 2). */
  unsupportedFlags: string[];
  /** A SVC_* environment variable shadowed by the same flag on the command line: a warning (3.3) or an error (3.4+). */
  shadowedEnvVar: 'warn' | 'error';
  /** Embedding config: names of the log-output and snapshot-count fields, and whether setupLogging exists. */
  embed: { logOutputField: 'logOutput' | 'logOutputs'; snapshotCountField: 'snapCount' | 'snapshotCount'; setupLogging: boolean };
  /** GET /health answers {"health":...} (3.3, 3.4) or adds "reason" (3.5). */
  healthReason: boolean;
  /** A member of this release refuses to join a cluster below it whose authentication is on (3.5: the WAL
   *  format of authentication entries changed, so the spec does not support that rolling upgrade). */
  refusesAuthUpgradeFromBelow: boolean;
  /** RPCs that exist only from this release's cluster version on. */
  downgradeRpc: boolean;
  authStatusRpc: boolean;
  /** The db's meta bucket has a "term" key (the reference writes it from 3.5 on); snapshots carry it only then. */
  metaTermKey: boolean;
  /** The zap logger prints "ready to serve client requests" when a client listener starts serving (3.5;
   *  3.4 prints it only with capnslog). */
  zapReadyLine: boolean;
  /** A restarted member warns when its v2 snapshot holds v2 keys (3.5: the last release with the v2 API). */
  warnsOfV2Content: boolean;
  /** --strict-reconfig-check on a member add (voter or learner): this member must have been connected, for the health
   *  interval, to every voter ('all-voters'), or to a quorum of the voters plus the new member, counting the new one as
   *  down ('quorum-with-new': a learner can then be added with one of five members down). */
  addMemberConnected: 'all-voters' | 'quorum-with-new';
  /** The newest patch of this line on the Go module proxy: where an upgrade hop to this line goes. */
  newestPatch: number;
  /** The lowest patch of the previous line from which the reference's upgrade guide allows coming to this line
   *  (upgrade_3_6: every 3.5 member on 3.5.32 or later; upgrade_3_7: on 3.6.11 or later); 0: any patch. */
  fromPreviousMinPatch: number;
  /** The upgrade guide to this line requires a v2 store without custom (non-membership) keys (upgrade_3_6). */
  upgradeRefusesCustomV2Data: boolean;
  /** The Downgrade RPC and the job it starts (exists from 3.5, see downgradeRpc). 3.5 answers CANCEL without a job with
   *  "no inflight downgrade job" and the version as "3.6.0"; 3.6+ answers CANCEL with success whatever happened (the
   *  error is only logged) and the version as "3.6". A 3.5 member starts while a downgrade to its own minor is enabled
   *  whatever the cluster version ('target'); from 3.6 only the cluster version decides, which the leader lowers to the
   *  target right after ENABLE ('cluster-version'), and each member then migrates its storage version (storageVersion)
   *  and says it is ready (3.5 says so when the ENABLE applies). */
  downgrade: { cancelWithoutJob: 'error' | 'success'; responseVersion: 'full' | 'minor'; admits: 'target' | 'cluster-version' };
  /** /livez and /readyz are served (3.5's later patches have them too). */
  probes: boolean;
  /** Default of --discovery-fallback; 3.6 refuses 'proxy' (the v2 proxy is gone). */
  discoveryFallback: { def: 'proxy' | 'exit'; proxyRefused: boolean };
  /** Default of --snapshot-count (3.6 lowered it to 10000). */
  snapshotCountDefault: number;
  /** --v2-deprecation: its values and default, and what the member runs with whatever is given: the value given
   *  ('as-given', 3.5), write-only unless write-only-skip-check ('unless-skip-check', 3.6), write-only ('always', 3.7). */
  v2Deprecation: { values: readonly string[]; def: string; forced: 'as-given' | 'unless-skip-check' | 'always' };
  /** What a restart does with a v2 snapshot holding v2 keys under write-only: refuse to start ('refuse', 3.5/3.6),
   *  or nothing, as the v2 snapshot is no longer loaded ('not-loaded', 3.7). */
  v2SnapshotAtStart: 'refuse' | 'not-loaded';
  /** --feature-gates: the gates, their stage and default (empty: no --feature-gates). */
  featureGates: Record<string, { stage: 'ALPHA' | 'BETA'; def: boolean }>;
  /** /version carries "storage" (the db's storage version), and the storage-version monitor writes
   *  meta/storageVersion when the cluster version reaches this release's line (3.6). */
  storageVersion: boolean;
  /** The API the leader's cluster-version update log line names ("updating cluster version using v2 API"). */
  clusterVersionApi: '' | 'v2' | 'v3';
  /** Metric families this release adds to the set svc serves for 3.5 (of 3.6's removals svc never served any:
   *  the v2 HTTP and v2 proxy metrics, etcd_debugging_mvcc_range_total). */
  metricsAdded: readonly string[];
  /** The endpoint status answer carries storageVersion, dbSizeQuota and downgradeInfo (fields 11-13). */
  statusStorageFields: boolean;
}

/** A behaviour a release line changed in one of its patch releases: from `fromPatch` on, `changes` hold. */
interface PatchChange {
  fromPatch: number;
  changes: Partial<Release>;
}

// Flags of the reference's `etcd --help` that svc does not implement, per release line (3.3's help is not
// covered: 3.3 refuses them as unknown flags). docs/upgrading.md lists them.
const NOT_IN_SVC_34 = [
  'discovery', 'discovery-fallback', 'discovery-proxy', 'discovery-srv', 'discovery-srv-name',
  'experimental-backend-bbolt-freelist-type', 'experimental-enable-lease-checkpoint',
  'experimental-enable-v2v3', 'experimental-peer-skip-client-san-verification',
  'proxy', 'proxy-dial-timeout', 'proxy-failure-wait', 'proxy-read-timeout', 'proxy-refresh-interval', 'proxy-write-timeout',
];
// 3.5: only the v2 proxy and the v2-on-v3 emulation (both gone in 3.6).
const NOT_IN_SVC_35 = ['experimental-enable-v2v3', 'proxy', 'proxy-dial-timeout', 'proxy-failure-wait', 'proxy-read-timeout', 'proxy-refresh-interval', 'proxy-write-timeout'];

/** 3.6's new names of 3.5's experimental flags (the flag table maps each old name to the new one). */
const RENAMED_IN_36 = ['compact-hash-check-time', 'corrupt-check-time', 'compaction-batch-limit', 'watch-progress-notify-interval', 'warning-apply-duration',
  'bootstrap-defrag-threshold-megabytes', 'memory-mlock', 'snapshot-catchup-entries', 'compaction-sleep-interval', 'downgrade-check-time',
  'peer-skip-client-san-verification', 'enable-distributed-tracing', 'distributed-tracing-address', 'distributed-tracing-service-name',
  'distributed-tracing-instance-id', 'distributed-tracing-sampling-rate', 'warning-unary-request-duration'];

/** Server flags that first appear in 3.6. */
const NEW_IN_36 = [
  ...RENAMED_IN_36, 'feature-gates', 'max-learners', 'log-format', 'experimental-warning-unary-request-duration', 'discovery-token', 'discovery-endpoints', 'discovery-dial-timeout', 'discovery-request-timeout', 'discovery-keepalive-time',
  'discovery-keepalive-timeout', 'discovery-insecure-transport', 'discovery-insecure-skip-tls-verify', 'discovery-cert',
  'discovery-key', 'discovery-cacert', 'discovery-user', 'discovery-password',
];

/** 3.6's deprecation warnings of the experimental names (texts as the reference logs them, inconsistencies kept). */
const DEPRECATED_IN_36: Record<string, string> = {
  'max-snapshots': '--max-snapshots is deprecated in 3.6 and will be decommissioned in 3.8.',
  'v2-deprecation': '--v2-deprecation is deprecated and scheduled for removal in v3.8. The default value is enforced, ignoring user input.',
  'experimental-compact-hash-check-enabled': "--experimental-compact-hash-check-enabled is deprecated in 3.6 and will be decommissioned in 3.7. Use '--feature-gates=CompactHashCheck=true' instead.",
  'experimental-compact-hash-check-time': "--experimental-compact-hash-check-time is deprecated in 3.6 and will be decommissioned in 3.7. Use '--compact-hash-check-time' instead.",
  'experimental-txn-mode-write-with-shared-buffer': "--experimental-txn-mode-write-with-shared-buffer is deprecated in v3.6 and will be decommissioned in v3.7. Use '--feature-gates=TxnModeWriteWithSharedBuffer=true' instead.",
  ...Object.fromEntries(['corrupt-check-time', 'compaction-batch-limit', 'watch-progress-notify-interval', 'warning-apply-duration',
    'bootstrap-defrag-threshold-megabytes', 'memory-mlock', 'snapshot-catchup-entries', 'downgrade-check-time']
    .map((n) => [`experimental-${n}`, `--experimental-${n} is deprecated in v3.6 and will be decommissioned in v3.7. Use '--${n}' instead.`])),
  'experimental-compaction-sleep-interval': "--experimental-compaction-sleep-interval is deprecated in v3.6 and will be decommissioned in v3.7. Use 'compaction-sleep-interval' instead.",
  ...Object.fromEntries(['enable-distributed-tracing', 'distributed-tracing-address', 'distributed-tracing-service-name', 'distributed-tracing-instance-id', 'distributed-tracing-sampling-rate']
    .map((n) => [`experimental-${n}`, `--experimental-${n} is deprecated in 3.6 and will be decommissioned in 3.7. Use --${n} instead.`])),
  'experimental-warning-unary-request-duration': '--experimental-warning-unary-request-duration is deprecated, and will be decommissioned in v3.7. Use --warning-unary-request-duration instead.',
};

/** 3.6's feature gates (AllAlpha/AllBeta switch every gate of their stage). */
const GATES_36: Release['featureGates'] = {
  AllAlpha: { stage: 'ALPHA', def: false },
  AllBeta: { stage: 'BETA', def: false },
  CompactHashCheck: { stage: 'ALPHA', def: false },
  InitialCorruptCheck: { stage: 'ALPHA', def: false },
  LeaseCheckpoint: { stage: 'ALPHA', def: false },
  LeaseCheckpointPersist: { stage: 'ALPHA', def: false },
  SetMemberLocalAddr: { stage: 'ALPHA', def: false },
  StopGRPCServiceOnDefrag: { stage: 'ALPHA', def: false },
  TxnModeWriteWithSharedBuffer: { stage: 'BETA', def: true },
};

/** Server flags that first appear in 3.5. */
const NEW_IN_35 = [
  'unsafe-no-fsync', 'listen-client-http-urls', 'self-signed-cert-validity',
  'v2-deprecation', 'raft-read-timeout', 'raft-write-timeout', 'experimental-compaction-sleep-interval',
  'experimental-bootstrap-defrag-threshold-megabytes', 'client-cert-file', 'client-key-file', 'peer-client-cert-file',
  'peer-client-key-file', 'tls-min-version', 'tls-max-version',
  'experimental-compact-hash-check-enabled', 'experimental-compact-hash-check-time',
  'enable-log-rotation', 'log-rotation-config-json',
  'backend-bbolt-freelist-type', 'socket-reuse-port', 'socket-reuse-address', 'experimental-enable-distributed-tracing',
  'experimental-distributed-tracing-address', 'experimental-distributed-tracing-service-name', 'experimental-distributed-tracing-instance-id',
  'experimental-distributed-tracing-sampling-rate', 'experimental-enable-lease-checkpoint-persist', 'experimental-downgrade-check-time',
  'experimental-memory-mlock', 'experimental-txn-mode-write-with-shared-buffer', 'experimental-stop-grpc-service-on-defrag',
  'experimental-snapshot-catchup-entries',
];

const r33: Release = {
  version: '3.3.27',
  minor: '3.3',
  enableV2Default: true,
  v3betaGateway: 'serve',
  metricsDebuggingAliases: true,
  metricsMvccNames: false,
  loggers: ['capnslog'],
  loggerDefault: 'capnslog',
  configLocalLog: 'serve',
  clientApiDefault: 2,
  preVoteDefault: false,
  deprecatedFlags: {},
  unknownFlags: ['logger', 'log-outputs', 'log-level', 'pre-vote', 'max-concurrent-streams', 'experimental-watch-progress-notify-interval', 'auth-token-ttl', 'client-cert-allowed-hostname', 'peer-cert-allowed-hostname', 'experimental-warning-apply-duration', 'experimental-compaction-batch-limit', 'backend-batch-interval', 'backend-batch-limit', ...NEW_IN_35, ...NEW_IN_36],
  unsupportedFlags: [],
  shadowedEnvVar: 'warn',
  embed: { logOutputField: 'logOutput', snapshotCountField: 'snapCount', setupLogging: true },
  healthReason: false,
  refusesAuthUpgradeFromBelow: false,
  downgradeRpc: false,
  authStatusRpc: false,
  metaTermKey: false,
  zapReadyLine: false,
  warnsOfV2Content: false,
  addMemberConnected: 'all-voters',
  newestPatch: 27,
  fromPreviousMinPatch: 0,
  upgradeRefusesCustomV2Data: false,
  downgrade: { cancelWithoutJob: 'error', responseVersion: 'full', admits: 'cluster-version' },
  snapshotCountDefault: 100000,
  discoveryFallback: { def: 'proxy', proxyRefused: false },
  probes: false,
  v2Deprecation: { values: ['not-yet', 'write-only', 'write-only-drop-data', 'gone'], def: 'not-yet', forced: 'as-given' },
  v2SnapshotAtStart: 'refuse',
  featureGates: {},
  storageVersion: false,
  clusterVersionApi: '',
  metricsAdded: [],
  statusStorageFields: false,
};

const r34: Release = {
  ...r33,
  version: '3.4.34',
  minor: '3.4',
  newestPatch: 34,
  enableV2Default: false,
  v3betaGateway: 'redirect',
  metricsDebuggingAliases: true,
  metricsMvccNames: true,
  loggers: ['capnslog', 'zap'],
  loggerDefault: 'capnslog',
  clientApiDefault: 3,
  deprecatedFlags: {
    'ca-file': '--ca-file is deprecated; use --trusted-ca-file (it also turns on client certificate authentication)',
    'peer-ca-file': '--peer-ca-file is deprecated; use --peer-trusted-ca-file (it also turns on peer client certificate authentication)',
    debug: '--debug is deprecated; use --log-level=debug with --logger=zap',
    'log-output': '--log-output is renamed --log-outputs',
  },
  unknownFlags: [...NEW_IN_35, ...NEW_IN_36],
  unsupportedFlags: NOT_IN_SVC_34,
  shadowedEnvVar: 'error',
  embed: { logOutputField: 'logOutputs', snapshotCountField: 'snapshotCount', setupLogging: false },
};

const r35: Release = {
  ...r34,
  version: '3.5.21',
  minor: '3.5',
  newestPatch: 35,
  v3betaGateway: 'removed',
  metricsDebuggingAliases: false,
  loggerDefault: 'zap',
  configLocalLog: 'deprecated',
  preVoteDefault: true,
  healthReason: true,
  refusesAuthUpgradeFromBelow: true,
  deprecatedFlags: {
    ...r34.deprecatedFlags,
    'log-output': '--log-output is deprecated; use --log-outputs',
    'log-package-levels': '--log-package-levels is deprecated (capnslog only); use --log-level',
    'logger=capnslog': '--logger=capnslog is deprecated; zap is the default logger',
  },
  downgradeRpc: true,
  authStatusRpc: true,
  metaTermKey: true,
  zapReadyLine: true,
  warnsOfV2Content: true,
  unknownFlags: NEW_IN_36,
  unsupportedFlags: NOT_IN_SVC_35,
  downgrade: { ...r34.downgrade, admits: 'target' },
  clusterVersionApi: 'v2',
  probes: true,
};

/** Flags 3.6 dropped with the v2 API and the v2 proxy. */
const REMOVED_IN_36 = ['enable-v2', 'experimental-enable-v2v3', 'proxy', 'proxy-dial-timeout', 'proxy-failure-wait', 'proxy-read-timeout', 'proxy-refresh-interval', 'proxy-write-timeout'];

/** 3.6's experimental flags; 3.7 removed every one of them (and v2 discovery). */
const EXPERIMENTAL_36 = [
  ...RENAMED_IN_36.map((n) => `experimental-${n}`), 'experimental-initial-corrupt-check', 'experimental-compact-hash-check-enabled',
  'experimental-enable-lease-checkpoint', 'experimental-enable-lease-checkpoint-persist', 'experimental-txn-mode-write-with-shared-buffer',
  'experimental-stop-grpc-service-on-defrag',
];

const r36: Release = {
  ...r35,
  version: '3.6.16',
  minor: '3.6',
  newestPatch: 16,
  fromPreviousMinPatch: 32,
  upgradeRefusesCustomV2Data: true,
  downgrade: { cancelWithoutJob: 'success', responseVersion: 'minor', admits: 'cluster-version' },
  unknownFlags: REMOVED_IN_36,
  unsupportedFlags: [],
  deprecatedFlags: { ...r35.deprecatedFlags, ...DEPRECATED_IN_36 },
  featureGates: GATES_36,
  snapshotCountDefault: 10000,
  discoveryFallback: { def: 'exit', proxyRefused: true },
  v2Deprecation: { values: ['write-only', 'write-only-skip-check', 'write-only-drop-data', 'gone'], def: 'write-only', forced: 'unless-skip-check' },
  warnsOfV2Content: false,
  storageVersion: true,
  clusterVersionApi: 'v3',
  metricsAdded: ['svc_network_known_peers', 'svc_server_feature_enabled'],
  statusStorageFields: true,
};

const r37: Release = {
  ...r36,
  version: '3.7.3',
  minor: '3.7',
  newestPatch: 3,
  fromPreviousMinPatch: 11,
  addMemberConnected: 'quorum-with-new',
  unknownFlags: [...REMOVED_IN_36, ...EXPERIMENTAL_36, 'discovery', 'discovery-proxy'],
  deprecatedFlags: { ...r35.deprecatedFlags, 'max-snapshots': DEPRECATED_IN_36['max-snapshots'], 'v2-deprecation': DEPRECATED_IN_36['v2-deprecation'] },
  featureGates: { ...GATES_36, FastLeaseKeepAlive: { stage: 'BETA', def: true }, PriorityRequest: { stage: 'ALPHA', def: false } },
  v2Deprecation: { ...r36.v2Deprecation, forced: 'always' },
  v2SnapshotAtStart: 'not-loaded',
};

const byMinor = new Map<string, Release>([['3.3', r33], ['3.4', r34], ['3.5', r35], ['3.6', r36], ['3.7', r37]]);

// Patch releases that changed a behaviour, per line, oldest first. The patch is the first one the Go module proxy
// serves with the change (3.5.27 has the old member-add rule and 3.5.31 the new; 3.5.28-30 are not served there).
const PATCH_CHANGES = new Map<string, PatchChange[]>([
  ['3.5', [{ fromPatch: 31, changes: { addMemberConnected: 'quorum-with-new' } }]],
  // 3.6.8 has the old member-add rule and 3.6.12 the new; 3.6.9-11 are not served there
  ['3.6', [{ fromPatch: 12, changes: { addMemberConnected: 'quorum-with-new' } }]],
]);

export const SUPPORTED_RELEASES: readonly string[] = [r33.version, r34.version, r35.version, r36.version, r37.version];
export const NEWEST: Release = r35;

export class UnknownReleaseError extends Error {
  constructor(readonly requested: string) {
    super(`unknown release "${requested}": SVC_VERSION must be <major>.<minor>.<patch> of a supported release line (3.3.x, 3.4.x, 3.5.x, 3.6.x, 3.7.x; e.g. ${SUPPORTED_RELEASES.join(', ')})`);
    this.name = 'UnknownReleaseError';
  }
}

/** The release a version string names. Any patch of a known minor line is accepted and reported as given. */
export function releaseFor(version: string): Release {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!m) throw new UnknownReleaseError(version);
  const minor = `${Number(m[1])}.${Number(m[2])}`;
  const base = byMinor.get(minor);
  if (!base) throw new UnknownReleaseError(version);
  const patch = Number(m[3]);
  const changed = (PATCH_CHANGES.get(minor) ?? []).filter((c) => patch >= c.fromPatch).map((c) => c.changes);
  return Object.assign({ ...base }, ...changed, { version: `${minor}.${patch}` });
}

/** The release a process runs as: its SVC_VERSION, or the newest when unset (the caller hands in the environment). */
export function currentRelease(env: NodeJS.ProcessEnv): Release {
  const v = env.SVC_VERSION;
  return v === undefined || v === '' ? NEWEST : releaseFor(v);
}

/** Compare "major.minor" (or "major.minor.patch") strings numerically on major.minor. */
export function compareMinor(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am !== bm ? am - bm : an - bn;
}

export function minorOf(version: string): string {
  const [a, b] = version.split('.');
  return `${a}.${b}`;
}
