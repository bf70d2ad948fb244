// Every server flag: its name (also the config-file key and, upper-cased, the SVC_* variable), the
// kind of value, its default and help text. Which flags a release knows and which ones warn comes
// from the release table; nothing here compares versions.
import { DEFAULT_LOG_ROTATION_JSON } from '../log/rotate.js';
import type { Release } from '../releases.js';

export type FlagKind = 'string' | 'bool' | 'uint' | 'int' | 'urls' | 'duration' | 'list' | 'cluster' | 'enum';

export interface FlagSpec {
  name: string;
  kind: FlagKind;
  group: 'member' | 'clustering' | 'security' | 'logging' | 'profiling' | 'unsafe' | 'experimental' | 'meta';
  help: string;
  /** Default as flag text ('' = unset / derived later). */
  def: string | ((r: Release) => string);
  /** Allowed values of an enum flag. */
  values?: readonly string[] | ((r: Release) => readonly string[]);
  /** Not a config-file key (meta flags, and TLS flags which live in the *-transport-security sections). */
  notInFile?: boolean;
  /** svc parses the flag but does not implement it: only its default value is accepted (another value is
   *  refused with "not supported by svc", never silently ignored). */
  defaultOnly?: true;
  /** An older name of another flag (3.5's --experimental-X of 3.6's --X): it sets that flag's setting. */
  sameAs?: string;
  /** An experimental flag that 3.6 turned into this feature gate: it sets the gate. */
  gate?: string;
  /** Accepted with the reference's meaning, with no effect in svc (docs/upgrading.md says why). */
  noEffect?: true;
}

const URL_PEER = 'http://localhost:2380';
const URL_CLIENT = 'http://localhost:2379';

// Settings 3.6 renamed: 3.5's --experimental-<name> is the same setting under its old name.
const RENAMED_IN_36: readonly FlagSpec[] = [
  { name: 'watch-progress-notify-interval', kind: 'duration', group: 'experimental', def: '10m', help: 'Duration of periodic watch progress notifications (to watchers that asked for them).' },
  { name: 'warning-apply-duration', kind: 'duration', group: 'experimental', def: '100ms', help: 'Warning is logged when applying a request takes longer than this duration.' },
  { name: 'compaction-batch-limit', kind: 'int', group: 'experimental', def: '1000', help: 'Sets the maximum revisions deleted in each compaction batch.' },
  { name: 'compaction-sleep-interval', kind: 'duration', group: 'experimental', def: '10ms', help: 'Sets the sleep interval between each compaction batch.' },
  { name: 'bootstrap-defrag-threshold-megabytes', kind: 'uint', group: 'experimental', def: '0', help: 'Defragment the database at start when at least this many megabytes would be freed (0: never).' },
  { name: 'corrupt-check-time', kind: 'duration', group: 'experimental', def: '0s', help: 'Duration of time between cluster corruption check passes.' },
  { name: 'compact-hash-check-time', kind: 'duration', group: 'experimental', def: '1m', help: 'Duration of time between leader checks followers compaction hashes.' },
  { name: 'snapshot-catchup-entries', kind: 'uint', group: 'experimental', def: '5000', help: 'Number of entries kept for a slow follower to catch up after the log is compacted.' },
  { name: 'downgrade-check-time', kind: 'duration', group: 'experimental', def: '5s', help: 'Duration of time between two downgrade status checks.' },
  { name: 'warning-unary-request-duration', kind: 'duration', group: 'logging', def: '300ms', help: 'Time after which a warning is logged when a unary request takes longer.' },
  { name: 'memory-mlock', kind: 'bool', group: 'member', def: 'false', noEffect: true, help: 'Keep the database pages in RAM.' },
  { name: 'peer-skip-client-san-verification', kind: 'bool', group: 'security', def: 'false', noEffect: true, help: 'Skip verification of the SAN field in client certificates of peer connections.' },
  { name: 'enable-distributed-tracing', kind: 'bool', group: 'profiling', def: 'false', noEffect: true, help: 'Enable distributed tracing.' },
  { name: 'distributed-tracing-address', kind: 'string', group: 'profiling', def: 'localhost:4317', noEffect: true, help: 'Distributed tracing collector address.' },
  { name: 'distributed-tracing-service-name', kind: 'string', group: 'profiling', def: 'etcd', noEffect: true, help: 'Distributed tracing service name.' },
  { name: 'distributed-tracing-instance-id', kind: 'string', group: 'profiling', def: '', noEffect: true, help: 'Distributed tracing instance ID.' },
  { name: 'distributed-tracing-sampling-rate', kind: 'uint', group: 'profiling', def: '0', noEffect: true, help: 'Number of samples to collect per million spans.' },
];

export const FLAGS: readonly FlagSpec[] = [
  ...RENAMED_IN_36,
  ...RENAMED_IN_36.map((f): FlagSpec => ({ ...f, name: `experimental-${f.name}`, group: 'experimental', sameAs: f.name })),
  { name: 'config-file', kind: 'string', group: 'meta', def: '', notInFile: true, help: 'Path to the server configuration file (YAML). When given, other command-line flags and SVC_* variables are ignored.' },
  { name: 'version', kind: 'bool', group: 'meta', def: 'false', notInFile: true, help: 'Print the version and exit.' },

  { name: 'name', kind: 'string', group: 'member', def: 'default', help: 'Human-readable name for this member.' },
  { name: 'data-dir', kind: 'string', group: 'member', def: '', help: 'Path to the data directory (default "<name>.svc").' },
  { name: 'wal-dir', kind: 'string', group: 'member', def: '', help: 'Path to a dedicated WAL directory.' },
  { name: 'snapshot-count', kind: 'uint', group: 'member', def: (r) => String(r.snapshotCountDefault), help: 'Number of committed transactions that triggers a snapshot to disk.' },
  { name: 'heartbeat-interval', kind: 'uint', group: 'member', def: '100', help: 'Time (in milliseconds) of a heartbeat interval.' },
  { name: 'election-timeout', kind: 'uint', group: 'member', def: '1000', help: 'Time (in milliseconds) for an election to time out.' },
  { name: 'initial-election-tick-advance', kind: 'bool', group: 'member', def: 'true', help: 'Fast-forward the initial election ticks on boot for a faster election.' },
  { name: 'listen-peer-urls', kind: 'urls', group: 'member', def: URL_PEER, help: 'List of URLs to listen on for peer traffic.' },
  { name: 'listen-client-urls', kind: 'urls', group: 'member', def: URL_CLIENT, help: 'List of URLs to listen on for client traffic.' },
  { name: 'listen-client-http-urls', kind: 'urls', group: 'member', def: '', help: 'List of URLs to listen on for HTTP-only client traffic (gateway, /health, /metrics, /version); --listen-client-urls then serves gRPC only.' },
  { name: 'listen-metrics-urls', kind: 'urls', group: 'member', def: '', help: 'List of additional URLs to listen on for the /metrics and /health endpoints.' },
  { name: 'max-snapshots', kind: 'uint', group: 'member', def: '5', help: 'Maximum number of snapshot files to retain (0 is unlimited).' },
  { name: 'max-wals', kind: 'uint', group: 'member', def: '5', help: 'Maximum number of WAL files to retain (0 is unlimited).' },
  { name: 'quota-backend-bytes', kind: 'int', group: 'member', def: '0', help: 'Raise alarms when the backend size exceeds this quota (0 means the 2 GiB default).' },
  { name: 'backend-batch-interval', kind: 'string', group: 'member', def: '', help: 'The maximum time before committing the backend transaction (a duration; empty: 100ms).' },
  { name: 'backend-batch-limit', kind: 'int', group: 'member', def: '0', help: 'The maximum operations before committing the backend transaction (0: 10000).' },
  { name: 'max-txn-ops', kind: 'uint', group: 'member', def: '128', help: 'Maximum number of operations permitted in a transaction.' },
  { name: 'max-request-bytes', kind: 'uint', group: 'member', def: '1572864', help: 'Maximum client request size in bytes the server will accept.' },
  { name: 'max-concurrent-streams', kind: 'uint', group: 'member', def: '4294967295', help: 'Maximum concurrent streams that each client can open at a time.' },
  { name: 'grpc-keepalive-min-time', kind: 'duration', group: 'member', def: '5s', help: 'Minimum interval a client should wait before pinging the server.' , defaultOnly: true },
  { name: 'grpc-keepalive-interval', kind: 'duration', group: 'member', def: '2h', help: 'Frequency of server-to-client pings to check that a connection is alive (0 to disable).'  },
  { name: 'grpc-keepalive-timeout', kind: 'duration', group: 'member', def: '20s', help: 'Additional wait before closing a non-responsive connection (0 to disable).'  },

  { name: 'raft-read-timeout', kind: 'duration', group: 'member', def: '5s', help: 'Read timeout set on each rafthttp connection.' },
  { name: 'raft-write-timeout', kind: 'duration', group: 'member', def: '5s', help: 'Write timeout set on each rafthttp connection.' },

  { name: 'initial-advertise-peer-urls', kind: 'urls', group: 'clustering', def: URL_PEER, help: "This member's peer URLs to advertise to the rest of the cluster." },
  { name: 'advertise-client-urls', kind: 'urls', group: 'clustering', def: URL_CLIENT, help: "This member's client URLs to advertise to the public." },
  { name: 'initial-cluster', kind: 'cluster', group: 'clustering', def: '', help: 'Initial cluster configuration for bootstrapping: <name>=<peer-url>,... (default "<name>=<initial-advertise-peer-urls>").' },
  { name: 'initial-cluster-token', kind: 'string', group: 'clustering', def: 'svc-cluster', help: 'Initial cluster token for the cluster during bootstrap.' },
  { name: 'initial-cluster-state', kind: 'enum', group: 'clustering', def: 'new', values: ['new', 'existing'], help: "Initial cluster state ('new' or 'existing')." },
  { name: 'strict-reconfig-check', kind: 'bool', group: 'clustering', def: 'true', help: 'Reject reconfiguration requests that would cause quorum loss.' },
  { name: 'v2-deprecation', kind: 'enum', group: 'clustering', def: (r) => r.v2Deprecation.def, values: (r) => r.v2Deprecation.values, help: "Phase of v2store deprecation: 'not-yet', or 'write-only' and beyond (the v2 API off, and a member whose v2 snapshot holds v2 keys refuses to start; 3.6: forced to write-only unless write-only-skip-check, 3.7: always write-only)." },
  { name: 'enable-v2', kind: 'bool', group: 'clustering', def: (r) => String(r.enableV2Default), help: 'Accept v2 API requests.' },
  { name: 'pre-vote', kind: 'bool', group: 'clustering', def: (r) => String(r.preVoteDefault), help: 'Run an additional Raft election phase (pre-vote).' },
  { name: 'auto-compaction-retention', kind: 'string', group: 'clustering', def: '0', help: 'Auto compaction retention for the key-value store (0 disables auto compaction).'  },
  { name: 'auto-compaction-mode', kind: 'enum', group: 'clustering', def: 'periodic', values: ['periodic', 'revision'], help: "How to read --auto-compaction-retention: 'periodic' (hours or a duration such as 5m) or 'revision' (a revision count)."  },

  { name: 'cert-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the client server TLS cert file.' },
  { name: 'key-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the client server TLS key file.' },
  { name: 'client-cert-auth', kind: 'bool', group: 'security', def: 'false', notInFile: true, help: 'Enable client certificate authentication.' },
  { name: 'client-crl-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the client certificate revocation list file.' },
  { name: 'trusted-ca-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the client server TLS trusted CA cert file.' },
  { name: 'auto-tls', kind: 'bool', group: 'security', def: 'false', notInFile: true, help: 'Client TLS using generated certificates.' },
  { name: 'ca-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the client server TLS CA file (old name of --trusted-ca-file; also turns on --client-cert-auth).' },
  { name: 'peer-cert-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the peer server TLS cert file.' },
  { name: 'peer-key-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the peer server TLS key file.' },
  { name: 'peer-client-cert-auth', kind: 'bool', group: 'security', def: 'false', notInFile: true, help: 'Enable peer client certificate authentication.' },
  { name: 'peer-trusted-ca-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the peer server TLS trusted CA file.' },
  { name: 'peer-auto-tls', kind: 'bool', group: 'security', def: 'false', notInFile: true, help: 'Peer TLS using generated certificates.' },
  { name: 'peer-ca-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the peer server TLS CA file (old name of --peer-trusted-ca-file; also turns on --peer-client-cert-auth).' },
  { name: 'peer-crl-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the peer certificate revocation list file.' },
  { name: 'self-signed-cert-validity', kind: 'uint', group: 'security', def: '1', help: 'The validity period of the client and peer certificates generated by --auto-tls and --peer-auto-tls, in years.' },
  { name: 'peer-cert-allowed-hostname', kind: 'string', group: 'security', def: '', help: 'Comma-separated list of allowed SAN hostnames for inter-peer TLS authentication (a peer certificate naming none of them, and no allowed CN, is refused).' },
  { name: 'client-cert-allowed-hostname', kind: 'string', group: 'security', def: '', help: 'Comma-separated list of SAN hostnames a client certificate must name (with --client-cert-auth).' },
  { name: 'client-cert-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to an explicit client TLS cert file this member presents when it connects to client URLs (default: --cert-file).' },
  { name: 'client-key-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the key of --client-cert-file.' },
  { name: 'peer-client-cert-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to an explicit TLS cert file this member presents when it connects to peers (default: --peer-cert-file).' },
  { name: 'peer-client-key-file', kind: 'string', group: 'security', def: '', notInFile: true, help: 'Path to the key of --peer-client-cert-file.' },
  { name: 'tls-min-version', kind: 'enum', group: 'security', def: 'TLS1.2', values: ['TLS1.2', 'TLS1.3'], help: 'Minimum TLS version of client and peer connections: TLS1.2 or TLS1.3.' },
  { name: 'tls-max-version', kind: 'enum', group: 'security', def: '', values: ['', 'TLS1.2', 'TLS1.3'], help: 'Maximum TLS version of client and peer connections: TLS1.2 or TLS1.3 (empty: the highest the runtime has).' },
  { name: 'auth-token-ttl', kind: 'uint', group: 'security', def: '300', help: 'Time (in seconds) a simple auth token stays valid after its last use.' },
  { name: 'peer-cert-allowed-cn', kind: 'string', group: 'security', def: '', help: 'Comma-separated list of allowed common names for inter-peer TLS authentication (a peer certificate with another CN is refused).'  },
  { name: 'cipher-suites', kind: 'list', group: 'security', def: '', help: 'Comma-separated list of supported TLS cipher suites (empty: the runtime default).' , defaultOnly: true },
  { name: 'cors', kind: 'list', group: 'security', def: '*', help: 'Comma-separated list of origins allowed for CORS (* allows all).' , defaultOnly: true },
  { name: 'host-whitelist', kind: 'list', group: 'security', def: '*', help: 'Comma-separated acceptable hostnames of HTTP client requests when the server is not secure (* allows all).' , defaultOnly: true },
  { name: 'auth-token', kind: 'string', group: 'security', def: 'simple', help: 'Specify auth token type and options (simple, or jwt,sign-method=...,priv-key=...,pub-key=...,ttl=...).' },
  { name: 'bcrypt-cost', kind: 'uint', group: 'security', def: '10', help: 'bcrypt cost factor for password hashing.' },

  { name: 'logger', kind: 'enum', group: 'logging', def: (r) => r.loggerDefault, values: (r) => r.loggers, help: "Logger: 'zap' for structured JSON logging, or 'capnslog'." },
  { name: 'log-outputs', kind: 'list', group: 'logging', def: 'default', help: "Where to write logs: 'default' (stderr), 'stderr', 'stdout' or file paths, comma separated (several only with --logger=zap)." },
  { name: 'log-output', kind: 'string', group: 'logging', def: 'default', help: "Where to write logs: 'default' (stderr), 'stderr', 'stdout' or a file path." },
  { name: 'log-level', kind: 'enum', group: 'logging', def: 'info', values: ['debug', 'info', 'warn', 'error', 'panic', 'fatal'], help: 'Log level: debug, info, warn, error, panic or fatal.' },
  { name: 'debug', kind: 'bool', group: 'logging', def: 'false', help: 'Enable debug-level logging.' },
  { name: 'log-package-levels', kind: 'string', group: 'logging', def: '', help: "capnslog only: a level per package (e.g. 'etcdmain=CRITICAL,etcdserver=DEBUG')." },

  { name: 'enable-pprof', kind: 'bool', group: 'profiling', def: 'false', help: 'Enable runtime profiling data over HTTP at <client URL>/debug/pprof/.' , defaultOnly: true },
  { name: 'metrics', kind: 'enum', group: 'profiling', def: 'basic', values: ['basic', 'extensive'], help: "Level of detail of exported metrics ('extensive' adds histograms)." , defaultOnly: true },
  { name: 'enable-grpc-gateway', kind: 'bool', group: 'profiling', def: 'true', help: 'Serve the JSON gateway of the gRPC API under /v3/.'  },

  { name: 'force-new-cluster', kind: 'bool', group: 'unsafe', def: 'false', help: 'Force the creation of a new one-member cluster.' },
  { name: 'unsafe-no-fsync', kind: 'bool', group: 'unsafe', def: 'false', help: 'Disables fsync, unsafe, will cause data loss.' },

  { name: 'experimental-initial-corrupt-check', kind: 'bool', group: 'experimental', def: 'false', gate: 'InitialCorruptCheck', help: 'Enable to check data corruption before serving any client/peer traffic.' },
  { name: 'enable-log-rotation', kind: 'bool', group: 'logging', def: 'false', help: 'Enable log rotation of a single log-outputs file target.' },
  { name: 'log-rotation-config-json', kind: 'string', group: 'logging', def: DEFAULT_LOG_ROTATION_JSON, help: 'Configures log rotation if enabled with a JSON logger config. MaxSize(MB), MaxAge(days,0=no limit), MaxBackups(0=no limit), LocalTime(use computers local time), Compress(gzip).' },
  { name: 'experimental-compact-hash-check-enabled', kind: 'bool', group: 'experimental', def: 'false', gate: 'CompactHashCheck', help: 'Enable leader to periodically check followers compaction hashes.' },
  { name: 'experimental-enable-lease-checkpoint', kind: 'bool', group: 'experimental', def: 'false', gate: 'LeaseCheckpoint', noEffect: true, help: 'Enable the leader to send regular checkpoints to other members to prevent reset of remaining TTL on leader change.' },
  { name: 'experimental-enable-lease-checkpoint-persist', kind: 'bool', group: 'experimental', def: 'false', gate: 'LeaseCheckpointPersist', noEffect: true, help: 'Enable persisting remainingTTL to prevent indefinite auto-renewal of long lived leases.' },
  { name: 'experimental-txn-mode-write-with-shared-buffer', kind: 'bool', group: 'experimental', def: 'true', gate: 'TxnModeWriteWithSharedBuffer', noEffect: true, help: 'Enable the write transaction to use a shared buffer in its read-only check operations.' },
  { name: 'experimental-stop-grpc-service-on-defrag', kind: 'bool', group: 'experimental', def: 'false', gate: 'StopGRPCServiceOnDefrag', noEffect: true, help: 'Enable the gRPC health service to report not serving during a defragmentation.' },
  { name: 'feature-gates', kind: 'string', group: 'member', def: '', help: 'Comma-separated Name=true|false pairs of the feature gates (see --help for the gates of this release).' },
  { name: 'max-learners', kind: 'uint', group: 'clustering', def: '1', help: 'The maximum number of learner members the cluster may have at once.' },
  { name: 'log-format', kind: 'enum', group: 'logging', def: 'json', values: ['json', 'console'], help: "Log format of the zap logger: 'json' or 'console'." },
  { name: 'backend-bbolt-freelist-type', kind: 'enum', group: 'member', def: 'map', values: ['map', 'array'], noEffect: true, help: 'Freelist type of the bbolt backend (svc\'s backend has no freelist).' },
  { name: 'socket-reuse-port', kind: 'bool', group: 'member', def: 'false', noEffect: true, help: 'Set SO_REUSEPORT on the listeners.' },
  { name: 'socket-reuse-address', kind: 'bool', group: 'member', def: 'false', noEffect: true, help: 'Set SO_REUSEADDR on the listeners.' },
  { name: 'discovery', kind: 'string', group: 'clustering', def: '', defaultOnly: true, help: 'Discovery URL used to bootstrap the cluster (v2 discovery).' },
  { name: 'discovery-proxy', kind: 'string', group: 'clustering', def: '', defaultOnly: true, help: 'HTTP proxy to use for traffic to the discovery service.' },
  { name: 'discovery-srv', kind: 'string', group: 'clustering', def: '', defaultOnly: true, help: 'DNS SRV domain used to bootstrap the cluster.' },
  { name: 'discovery-srv-name', kind: 'string', group: 'clustering', def: '', defaultOnly: true, help: 'Suffix to the DNS SRV name queried when bootstrapping.' },
  { name: 'discovery-fallback', kind: 'enum', group: 'clustering', def: (r) => r.discoveryFallback.def, values: ['exit', 'proxy'], help: "Behaviour when the discovery service fails: 'exit' (or 'proxy' before 3.6)." },
  { name: 'discovery-token', kind: 'string', group: 'clustering', def: '', defaultOnly: true, help: 'V3 discovery: discovery token for the cluster to be bootstrapped.' },
  { name: 'discovery-endpoints', kind: 'list', group: 'clustering', def: '', defaultOnly: true, help: 'V3 discovery: list of gRPC endpoints of the discovery service.' },
  { name: 'discovery-dial-timeout', kind: 'duration', group: 'clustering', def: '2s', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-request-timeout', kind: 'duration', group: 'clustering', def: '5s', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-keepalive-time', kind: 'duration', group: 'clustering', def: '2s', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-keepalive-timeout', kind: 'duration', group: 'clustering', def: '6s', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-insecure-transport', kind: 'bool', group: 'clustering', def: 'true', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-insecure-skip-tls-verify', kind: 'bool', group: 'clustering', def: 'false', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-cert', kind: 'string', group: 'clustering', def: '', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-key', kind: 'string', group: 'clustering', def: '', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-cacert', kind: 'string', group: 'clustering', def: '', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-user', kind: 'string', group: 'clustering', def: '', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
  { name: 'discovery-password', kind: 'string', group: 'clustering', def: '', noEffect: true, help: 'V3 discovery (used only with --discovery-token and --discovery-endpoints).' },
];

const BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/** The flags `release` knows and svc takes, by name (the ones svc refuses are the release's unsupportedFlags). */
export function flagsOf(release: Release): Map<string, FlagSpec> {
  const unknown = new Set([...release.unknownFlags, ...release.unsupportedFlags]);
  return new Map([...BY_NAME].filter(([name]) => !unknown.has(name)));
}

/** A flag of any release, by name. */
export function specOf(name: string): FlagSpec | undefined {
  return BY_NAME.get(name);
}

/** The default of a flag in `release`, as flag text. */
export function defaultText(spec: FlagSpec, release: Release): string {
  return typeof spec.def === 'function' ? spec.def(release) : spec.def;
}

/** The allowed values of an enum flag in `release`. */
export function enumValues(spec: FlagSpec, release: Release): readonly string[] {
  const v = spec.values ?? [];
  return typeof v === 'function' ? v(release) : v;
}

/** The environment variable that can set a flag: SVC_<NAME_WITH_UNDERSCORES>. */
export function envName(flag: string): string {
  return 'SVC_' + flag.toUpperCase().replace(/-/g, '_');
}

/** Warnings the release table attaches to a flag being set, or to it being set to this value. */
export function deprecationWarnings(release: Release, flag: string, value: string | undefined): string[] {
  const out: string[] = [];
  const plain = release.deprecatedFlags[flag];
  if (plain !== undefined) out.push(plain);
  if (value !== undefined) {
    const valued = release.deprecatedFlags[`${flag}=${value}`];
    if (valued !== undefined) out.push(valued);
  }
  return out;
}
