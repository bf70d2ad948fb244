// The parsed server configuration: typed, camelCase, defaults applied, validated.
import type { LogLevel } from '../log/logger.js';
import type { LogRotation } from '../log/rotate.js';

export interface TlsConfig {
  certFile: string;
  keyFile: string;
  /** Require and verify client certificates (forced on by the deprecated --ca-file / --peer-ca-file). */
  clientCertAuth: boolean;
  trustedCaFile: string;
  autoTls: boolean;
  crlFile: string;
  /** Peer only: the allowed common name of peer certificates. */
  allowedCn: string;
  /** --(peer-)cert-allowed-hostname: SAN hostnames a certificate of the other side may name instead. */
  allowedHostname: string;
  /** --(peer-)client-cert-file / --(peer-)client-key-file (3.5): what this member presents when it dials
   *  ('' = certFile/keyFile). */
  clientCertFile: string;
  clientKeyFile: string;
}

export interface ServerConfig {
  name: string;
  dataDir: string;
  /** Empty: the WAL lives under dataDir. */
  walDir: string;
  snapshotCount: number;
  maxSnapshots: number;
  maxWals: number;
  tickMs: number;
  electionMs: number;
  initialElectionTickAdvance: boolean;

  listenPeerUrls: URL[];
  listenClientUrls: URL[];
  listenMetricsUrls: URL[];
  /** --listen-client-http-urls (3.5): HTTP-only client listeners; --listen-client-urls then serve gRPC only. */
  listenClientHttpUrls: URL[];
  initialAdvertisePeerUrls: URL[];
  advertiseClientUrls: URL[];

  /** member name -> its peer URLs (strings as given, normalised by URL). */
  initialCluster: Map<string, string[]>;
  initialClusterToken: string;
  initialClusterState: 'new' | 'existing';
  strictReconfigCheck: boolean;
  enableV2: boolean;
  /** --v2-deprecation (3.5; earlier releases: not-yet). */
  v2Deprecation: 'not-yet' | 'write-only' | 'write-only-skip-check' | 'write-only-drop-data' | 'gone';
  preVote: boolean;
  forceNewCluster: boolean;
  unsafeNoFsync: boolean;
  /** gRPC streams per client connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxConcurrentStreams: number;
  /** Years of validity of the --auto-tls / --peer-auto-tls certificates. */
  selfSignedCertValidity: number;

  /** Effective backend quota in bytes (0 given means the 2 GiB default; negative disables the quota). */
  quotaBackendBytes: number;
  maxRequestBytes: number;
  maxTxnOps: number;
  grpcKeepaliveMinTimeMs: number;
  grpcKeepaliveIntervalMs: number;
  grpcKeepaliveTimeoutMs: number;
  autoCompactionMode: 'periodic' | 'revision';
  /** As given: hours or a Go duration for periodic, a revision count for revision. "0" disables. */
  autoCompactionRetention: string;

  clientTls: TlsConfig;
  peerTls: TlsConfig;
  cipherSuites: string[];
  cors: string[];
  hostWhitelist: string[];
  authToken: string;
  /** --auth-token-ttl in seconds (simple tokens; 0 means the 300 s default, as the reference). */
  authTokenTtlSeconds: number;
  /** --tls-min-version / --tls-max-version (3.5), as Node names them; max '' = the runtime's highest. */
  tlsMinVersion: 'TLSv1.2' | 'TLSv1.3';
  tlsMaxVersion: '' | 'TLSv1.2' | 'TLSv1.3';
  bcryptCost: number;

  logger: 'capnslog' | 'zap';
  logOutputs: string[];
  logLevel: LogLevel;
  /** capnslog only: per-package levels from --log-package-levels. */
  logPackageLevels: Map<string, LogLevel>;

  metrics: 'basic' | 'extensive';
  enablePprof: boolean;
  enableGrpcGateway: boolean;
  experimentalInitialCorruptCheck: boolean;
  experimentalCorruptCheckTimeMs: number;
  /** --enable-log-rotation with --log-rotation-config-json (3.5): the one file output rotates. */
  logRotation?: LogRotation;
  /** --experimental-compact-hash-check-time when --experimental-compact-hash-check-enabled, else 0 (ms). */
  experimentalCompactHashCheckTimeMs: number;
  /** --experimental-compaction-batch-limit and --experimental-compaction-sleep-interval (ms; 3.4: 10 ms). */
  compactionBatchLimit: number;
  /** --backend-batch-limit / --backend-batch-interval (ms); undefined: the defaults. */
  backendBatchLimit?: number;
  backendBatchIntervalMs?: number;
  /** --raft-read-timeout / --raft-write-timeout (3.5; earlier: 5 s), ms. */
  raftReadTimeoutMs: number;
  raftWriteTimeoutMs: number;
  /** --experimental-bootstrap-defrag-threshold-megabytes (3.5; 0 = off). */
  bootstrapDefragThresholdMegabytes: number;
  compactionSleepMs: number;
  /** --experimental-warning-apply-duration (ms). */
  warningApplyMs: number;
  /** --experimental-watch-progress-notify-interval (ms). */
  watchProgressNotifyMs: number;

  /** Every feature gate of the release with its value (3.6; empty before). */
  featureGates: Map<string, boolean>;
  /** --max-learners (3.6; earlier releases: 1). */
  maxLearners: number;
  /** --log-format (3.6): zap JSON or console lines. */
  logFormat: 'json' | 'console';
  /** --snapshot-catchup-entries when given (otherwise derived from --snapshot-count). */
  snapshotCatchUpEntries?: number;
  /** --downgrade-check-time (ms): how often the leader checks whether a downgrade has finished. */
  downgradeCheckTimeMs: number;
  /** --warning-unary-request-duration (ms). */
  warningUnaryRequestMs: number;

  /** The YAML file the configuration came from, when --config-file was used. */
  configFile: string;
}

/** What the command line asked for: run the server, print the usage, or print the version. */
export type ParseAction = 'run' | 'help' | 'version';

export interface ParseResult {
  config: ServerConfig;
  warnings: string[];
  /** Flags set to a value svc does not implement (defaultOnly flags): each a refusal message; exit 2. */
  unsupported?: string[];
  action: ParseAction;
}
