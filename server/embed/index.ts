// svc/embed: run a member inside a Node process. The config object follows the server's flags; its field names
// follow the release (the spec's 3.4 library changes): 3.3 has `logOutput` (a string), `snapCount` and an
// explicit `setupLogging()`; from 3.4 the fields are `logOutputs` (a list) and `snapshotCount`, logging is set
// up automatically and `setupLogging` is gone.
import { currentRelease, releaseFor, type Release } from '../releases.js';
import { createLogger } from '../log/create-logger.js';
import { parseLevel } from '../log/levels.js';
import { nopLogger, type Logger, type LogLevel } from '../log/logger.js';
import { defaultMemberOptions } from '../core/options.js';
import { startMember, type RunningMember } from '../member.js';
import { readFileSync } from 'node:fs';
import { CodedError } from '../coded-error.js';

export interface EmbedTlsInfo {
  certFile?: string;
  keyFile?: string;
  trustedCAFile?: string;
  /** Deprecated: use trustedCAFile. Setting it also turns client certificate authentication on. */
  caFile?: string;
  clientCertAuth?: boolean;
}

export interface EmbedConfig {
  name: string;
  dataDir: string;
  listenClientUrls: string[];
  advertiseClientUrls: string[];
  listenPeerUrls: string[];
  initialAdvertisePeerUrls: string[];
  /** "name=url,name=url", as --initial-cluster. */
  initialCluster: string;
  initialClusterToken?: string;
  initialClusterState?: 'new' | 'existing';
  tickMs?: number;
  electionMs?: number;
  quotaBackendBytes?: number;
  maxRequestBytes?: number;
  maxTxnOps?: number;
  enableV2?: boolean;
  logger?: 'capnslog' | 'zap';
  logLevel?: LogLevel;
  clientTLSInfo?: EmbedTlsInfo;
  peerTLSInfo?: EmbedTlsInfo;
  /** 3.4 and later. */
  logOutputs?: string[];
  snapshotCount?: number;
  /** 3.3 only. */
  logOutput?: string;
  snapCount?: number;
  /** 3.3 only: set up logging from logOutput before starting. */
  setupLogging?: () => void;
  /** The reference's ExperimentalInitialCorruptCheck: a restarting member compares its KV hash with its peers'. */
  experimentalInitialCorruptCheck?: boolean;
  /** The reference's ExperimentalCorruptCheckTime, in ms (0: off): the leader's periodic corruption check. */
  experimentalCorruptCheckTimeMs?: number;
  /** The reference's ExperimentalCompactHashCheckEnabled and ExperimentalCompactHashCheckTime (ms; default 1 min). */
  experimentalCompactHashCheckEnabled?: boolean;
  experimentalCompactHashCheckTimeMs?: number;
  /**
   * The release to behave as; default the newest. The library reads no environment (as the reference's embed
   * package): an embedding program that follows SVC_VERSION passes `newConfig(process.env.SVC_VERSION)`.
   */
  version?: string;
}

export class EmbedConfigError extends CodedError<'EMBED_CONFIG'> {
  constructor(message: string) {
    super('EMBED_CONFIG', message);
  }
}

export interface EmbeddedMember {
  /** Resolves when the member has published itself to the cluster. */
  ready: Promise<void>;
  memberId: string;
  clientURLs: string[];
  /** Stop gracefully (leadership moves away first when this member leads). */
  close(): Promise<void>;
  /** The running member, for advanced use (status, metrics). */
  member: RunningMember;
}

const loggingSetUp = new WeakSet<EmbedConfig>();

/** The default release: the newest (an empty environment; the environment is read in server/cli/ only). */
function defaultRelease(): Release {
  return currentRelease({});
}

/** A config with the release's defaults and field names; `version` undefined or empty: the newest release. */
export function newConfig(version?: string): EmbedConfig {
  const release = version ? releaseFor(version) : defaultRelease();
  const cfg: EmbedConfig = {
    name: 'default',
    dataDir: 'default.svc',
    listenClientUrls: ['http://localhost:2379'],
    advertiseClientUrls: ['http://localhost:2379'],
    listenPeerUrls: ['http://localhost:2380'],
    initialAdvertisePeerUrls: ['http://localhost:2380'],
    initialCluster: 'default=http://localhost:2380',
    version: release.version,
  };
  if (release.embed.setupLogging) {
    cfg.logOutput = 'default';
    cfg.snapCount = 100000;
    cfg.setupLogging = () => {
      loggingSetUp.add(cfg);
    };
  } else {
    cfg.logOutputs = ['default'];
    cfg.snapshotCount = release.snapshotCountDefault;
  }
  return cfg;
}

/** Check the config against the release's field names; returns the log outputs and snapshot count. */
function releaseFields(cfg: EmbedConfig, r: Release): { outputs: string[]; snapshotCount: number; logging: boolean } {
  if (r.embed.logOutputField === 'logOutputs') {
    if (cfg.logOutput !== undefined) throw new EmbedConfigError(`logOutput was renamed logOutputs (a list of outputs) in 3.4; release ${r.version} has no logOutput`);
    if (cfg.snapCount !== undefined) throw new EmbedConfigError(`snapCount was renamed snapshotCount in 3.4; release ${r.version} has no snapCount`);
    if (cfg.setupLogging !== undefined) throw new EmbedConfigError(`setupLogging was removed in 3.4 (logging is set up automatically); release ${r.version} has no setupLogging`);
    return { outputs: cfg.logOutputs ?? ['default'], snapshotCount: cfg.snapshotCount ?? 100000, logging: true };
  }
  if (cfg.logOutputs !== undefined) throw new EmbedConfigError(`release ${r.version} has logOutput (a string), not logOutputs`);
  if (cfg.snapshotCount !== undefined) throw new EmbedConfigError(`release ${r.version} has snapCount, not snapshotCount`);
  return { outputs: [cfg.logOutput ?? 'default'], snapshotCount: cfg.snapCount ?? 100000, logging: loggingSetUp.has(cfg) };
}

function readTls(t: EmbedTlsInfo | undefined, logger: Logger, what: string) {
  if (!t || (!t.certFile && !t.keyFile)) return undefined;
  if (!t.certFile || !t.keyFile) throw new EmbedConfigError(`${what}: certFile and keyFile go together`);
  if (t.caFile) logger.warn(`${what}: caFile is deprecated; use trustedCAFile (caFile also turns on client certificate authentication)`);
  const caPath = t.trustedCAFile || t.caFile;
  return {
    cert: readFileSync(t.certFile),
    key: readFileSync(t.keyFile),
    ca: caPath ? readFileSync(caPath) : undefined,
    clientCertAuth: !!t.clientCertAuth || !!t.caFile,
  };
}

function parseCluster(s: string): Array<{ name: string; peerURLs: string[] }> {
  const byName = new Map<string, string[]>();
  for (const part of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new EmbedConfigError(`initialCluster: "${part}" is not name=url`);
    const name = part.slice(0, eq);
    byName.set(name, [...(byName.get(name) ?? []), part.slice(eq + 1)]);
  }
  return [...byName].map(([name, peerURLs]) => ({ name, peerURLs }));
}

/** Start a member in this process. */
export async function startEmbedded(cfg: EmbedConfig): Promise<EmbeddedMember> {
  const release = cfg.version ? releaseFor(cfg.version) : defaultRelease();
  const { outputs, snapshotCount, logging } = releaseFields(cfg, release);
  const logger = logging
    ? createLogger({ logger: cfg.logger ?? release.loggerDefault, outputs, level: cfg.logLevel ?? 'info', pkg: 'embed' })
    : undefined;
  const log: Logger = logger ?? nopLogger;
  const peerTls = readTls(cfg.peerTLSInfo, log, 'peerTLSInfo');
  const clientTls = readTls(cfg.clientTLSInfo, log, 'clientTLSInfo');
  const base = defaultMemberOptions(release, log);
  const member = await startMember({
    ...base,
    name: cfg.name,
    dataDir: cfg.dataDir,
    initialCluster: parseCluster(cfg.initialCluster),
    initialClusterState: cfg.initialClusterState ?? 'new',
    initialClusterToken: cfg.initialClusterToken ?? 'svc-cluster',
    advertisePeerURLs: cfg.initialAdvertisePeerUrls,
    advertiseClientURLs: cfg.advertiseClientUrls,
    listenPeerURLs: cfg.listenPeerUrls,
    listenClientURLs: cfg.listenClientUrls,
    tickMs: cfg.tickMs ?? base.tickMs,
    electionMs: cfg.electionMs ?? base.electionMs,
    snapshotCount,
    quotaBackendBytes: cfg.quotaBackendBytes ?? base.quotaBackendBytes,
    maxRequestBytes: cfg.maxRequestBytes ?? base.maxRequestBytes,
    maxTxnOps: cfg.maxTxnOps ?? base.maxTxnOps,
    enableV2: cfg.enableV2 ?? base.enableV2,
    initialCorruptCheck: cfg.experimentalInitialCorruptCheck ?? false,
    corruptCheckTimeMs: cfg.experimentalCorruptCheckTimeMs ?? 0,
    compactHashCheckTimeMs: cfg.experimentalCompactHashCheckEnabled ? cfg.experimentalCompactHashCheckTimeMs ?? 60_000 : 0,
    peerTls,
    clientTls: clientTls ? { cert: clientTls.cert, key: clientTls.key, ca: clientTls.ca, requestCert: clientTls.clientCertAuth, rejectUnauthorized: clientTls.clientCertAuth } : undefined,
    setLogLevel: logger ? (level: string) => logger.setLevel(parseLevel(level)) : undefined,
    logFormat: cfg.logger ?? release.loggerDefault,
  });
  const ready = (async () => {
    while (!member.server.isPublished()) {
      if (member.server.isStopped()) throw new Error('the member stopped before it was ready');
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  ready.catch(() => undefined);
  return {
    ready,
    memberId: member.memberId,
    clientURLs: member.clientURLs,
    member,
    async close() {
      await member.close();
      await logger?.close();
    },
  };
}
