// Entry point of the svc server binary (bin/svc): parse the flags of the chosen release, set up logging, start
// the member, and stop it gracefully on SIGTERM/SIGINT. Exit status: 0 after a clean stop, 2 for bad usage
// (unknown flag, bad value, unknown SVC_VERSION), 1 when the member cannot start or must stop.
import { readFileSync } from 'node:fs';
import { currentRelease, UnknownReleaseError, type Release } from '../releases.js';
import { setProtoDir } from '../wire/index.js';
import { parseServerConfig, usage, ConfigError, type ServerConfig, type TlsConfig } from '../config/flags.js';
import { createLogger, LogSetupError } from '../log/create-logger.js';
import { parseLevel } from '../log/levels.js';
import type { ControllableLogger } from '../log/logger.js';
import { startMember, type MemberStartOptions } from '../member.js';
import { DEFAULT_QUOTA_BYTES } from '../core/options.js';
import { FatalStartError } from '../core/fatal.js';
import { ListenError } from '../api/listener.js';
import { selfCert, SelfCertError } from '../config/self-cert.js';
import { RevocationList } from '../transport/revocation.js';
import { AuthTokenOptionsError, newTokenProvider } from '../auth/tokens.js';
import { retentionOf } from '../core/compactor.js';
import { parseDurationMs } from '../config/values.js';
import { join } from 'node:path';

export async function main(argv: string[]): Promise<number> {
  setProtoDir(process.env.SVC_PROTO_DIR);
  let release: Release;
  let parsed;
  try {
    release = currentRelease(process.env);
    parsed = parseServerConfig(argv, process.env, release);
  } catch (e) {
    if (e instanceof UnknownReleaseError || e instanceof ConfigError) {
      process.stderr.write(`svc: ${e.message}\n`);
      if (e instanceof ConfigError) process.stderr.write(`Run 'svc --help' for the flags this release (${currentReleaseSafe()}) accepts.\n`);
      return 2;
    }
    throw e;
  }
  if (parsed.action === 'help') {
    process.stdout.write(usage(release));
    return 0;
  }
  if (parsed.action === 'version') {
    process.stdout.write(`svc Version: ${release.version}\nNode Version: ${process.version}\nOS/Arch: ${process.platform}/${process.arch}\n`);
    return 0;
  }
  if (parsed.unsupported && parsed.unsupported.length > 0) {
    for (const m of parsed.unsupported) process.stderr.write(`svc: ${m}\n`);
    return 2;
  }
  const cfg = parsed.config;
  let logger: ControllableLogger & { withPackage(pkg: string): import('../log/logger.js').Logger };
  try {
    logger = createLogger({ logger: cfg.logger, outputs: cfg.logOutputs, level: cfg.logLevel, pkg: 'etcdmain', rotation: cfg.logRotation, format: cfg.logFormat });
  } catch (e) {
    if (e instanceof LogSetupError) {
      process.stderr.write(`svc: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  for (const w of parsed.warnings) logger.warn(w);
  logger.info('starting svc', { 'svc-version': release.version, 'node-version': process.version, 'data-dir': cfg.dataDir, 'member-name': cfg.name });

  let opts: MemberStartOptions;
  try {
    opts = memberOptions(cfg, release, logger);
  } catch (e) {
    if (e instanceof AuthTokenOptionsError) {
      // A bad --auth-token stops the member as the reference's does (status 1, its log lines).
      logger.warn('failed to create token provider', { error: e.message });
      logger.error('failed to start the member', { error: e.message });
    } else {
      logger.error((e as Error).message);
    }
    await logger.close();
    return e instanceof SelfCertError || e instanceof AuthTokenOptionsError ? 1 : 2;
  }
  let member;
  try {
    member = await startMember(opts);
  } catch (e) {
    const known = e instanceof FatalStartError || e instanceof ListenError || (e as { code?: string }).code !== undefined;
    if (e instanceof FatalStartError && e.logAs) logger.fatal(e.logAs, { error: e.message });
    else logger.error(known ? (e as Error).message : 'failed to start the member', known ? {} : { error: (e as Error).stack ?? String(e) });
    await logger.close();
    return 1;
  }
  const running = member;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      running.close().then(
        async () => {
          await logger.close();
          resolve(code);
        },
        async (e) => {
          logger.error('error while stopping', { error: String(e) });
          await logger.close();
          resolve(1);
        },
      );
    };
    for (const sig of ['SIGTERM', 'SIGINT'] as const) {
      process.once(sig, () => {
        logger.info('received signal; shutting down', { signal: sig });
        stop(0);
      });
    }
    running.server.onFatal((e) => {
      logger.error('the member cannot continue; exiting', { error: e.message });
      stop(1);
    });
    running.server.onRemoved = () => stop(0);
  });
}

function currentReleaseSafe(): string {
  try {
    return currentRelease(process.env).version;
  } catch {
    return 'unknown';
  }
}

function readTls(t: TlsConfig & { selfSigned?: boolean }, what: string): { cert: Buffer; key: Buffer; ca?: Buffer; crl?: RevocationList; clientCertAuth: boolean; selfSigned?: boolean; dialCert?: Buffer; dialKey?: Buffer } | undefined {
  if (!t.certFile && !t.keyFile) return undefined;
  if (!t.certFile || !t.keyFile) throw new ConfigError(`${what}: both a certificate and a key file are needed`, '');
  const read = (f: string, which: string) => {
    try {
      return readFileSync(f);
    } catch (e) {
      throw new ConfigError(`${what}: cannot read the ${which} file ${f}: ${(e as Error).message}`, '');
    }
  };
  const crl = (data: Buffer, f: string) => {
    try {
      return new RevocationList(f, data);
    } catch (e) {
      throw new ConfigError(`${what}: the certificate revocation list file ${f} is ${(e as Error).message}`, '');
    }
  };
  return {
    cert: read(t.certFile, 'certificate'),
    key: read(t.keyFile, 'key'),
    ca: t.trustedCaFile ? read(t.trustedCaFile, 'trusted CA') : undefined,
    crl: t.crlFile ? crl(read(t.crlFile, 'certificate revocation list'), t.crlFile) : undefined,
    clientCertAuth: t.clientCertAuth,
    ...(t.selfSigned ? { selfSigned: true } : {}),
    ...(t.clientCertFile !== '' ? { dialCert: read(t.clientCertFile, 'client certificate'), dialKey: read(t.clientKeyFile, 'client key') } : {}),
  };
}

/** The server's flags as the member's start options. */
export function memberOptions(cfg: ServerConfig, release: Release, logger: ControllableLogger & { withPackage(pkg: string): import("../log/logger.js").Logger }): MemberStartOptions {
  const embedLog = logger.withPackage('embed');
  // --auto-tls / --peer-auto-tls: only when no certificate is given (the reference ignores them then).
  const auto = (t: TlsConfig, kind: 'client' | 'peer', urls: URL[]): TlsConfig & { selfSigned?: boolean } => {
    if (!t.autoTls || t.certFile !== '') return t;
    const c = selfCert(embedLog, join(cfg.dataDir, 'fixtures', kind), urls.map((u) => u.hostname), cfg.selfSignedCertValidity, kind);
    return { ...t, certFile: c.certFile, keyFile: c.keyFile, selfSigned: true };
  };
  const clientTls = readTls(auto(cfg.clientTls, 'client', [...cfg.listenClientUrls, ...cfg.listenClientHttpUrls]), 'client TLS');
  const peerTls = readTls(auto(cfg.peerTls, 'peer', cfg.listenPeerUrls), 'peer TLS');
  const names = (list: string): string[] | undefined => (list === '' ? undefined : list.split(',').map((s) => s.trim()).filter(Boolean));
  const versions = { minVersion: cfg.tlsMinVersion, ...(cfg.tlsMaxVersion !== '' ? { maxVersion: cfg.tlsMaxVersion } : {}) };
  return {
    name: cfg.name,
    dataDir: cfg.dataDir,
    walDir: cfg.walDir || undefined,
    initialCluster: [...cfg.initialCluster].map(([name, peerURLs]) => ({ name, peerURLs })),
    initialClusterState: cfg.initialClusterState,
    initialClusterToken: cfg.initialClusterToken,
    advertisePeerURLs: cfg.initialAdvertisePeerUrls.map(urlText),
    advertiseClientURLs: cfg.advertiseClientUrls.map(urlText),
    listenPeerURLs: cfg.listenPeerUrls.map(urlText),
    listenClientURLs: cfg.listenClientUrls.map(urlText),
    listenMetricsURLs: cfg.listenMetricsUrls.map(urlText),
    listenClientHttpURLs: cfg.listenClientHttpUrls.map(urlText),
    maxConcurrentStreams: cfg.maxConcurrentStreams,
    grpcKeepaliveIntervalMs: cfg.grpcKeepaliveIntervalMs,
    grpcKeepaliveTimeoutMs: cfg.grpcKeepaliveTimeoutMs,
    enableGrpcGateway: cfg.enableGrpcGateway,
    unsafeNoFsync: cfg.unsafeNoFsync,
    // SVC_WATCH_PROGRESS_NOTIFY_MS (tests) still wins over the flag's default.
    watchProgressNotifyMs: cfg.watchProgressNotifyMs === 600_000 && positiveMs(process.env.SVC_WATCH_PROGRESS_NOTIFY_MS) !== undefined ? positiveMs(process.env.SVC_WATCH_PROGRESS_NOTIFY_MS) : cfg.watchProgressNotifyMs,
    // How often the revision-mode auto-compactor looks (tests shorten it).
    autoCompactionRevisionIntervalMs: positiveMs(process.env.SVC_AUTO_COMPACTION_REVISION_INTERVAL_MS),
    autoCompaction: {
      mode: cfg.autoCompactionMode,
      retention: retentionOf(cfg.autoCompactionMode, cfg.autoCompactionRetention, (t) => parseDurationMs({ flag: 'auto-compaction-retention', where: '--auto-compaction-retention' }, t)),
    },
    tickMs: cfg.tickMs,
    electionMs: cfg.electionMs,
    snapshotCount: cfg.snapshotCount,
    snapshotCatchUpEntries: cfg.snapshotCatchUpEntries ?? Math.min(5000, Math.max(1, Math.floor(cfg.snapshotCount / 2))),
    maxLearners: cfg.maxLearners,
    featureGates: cfg.featureGates,
    maxSnapshots: cfg.maxSnapshots,
    maxWals: cfg.maxWals,
    quotaBackendBytes: cfg.quotaBackendBytes < 0 ? 0 : cfg.quotaBackendBytes || DEFAULT_QUOTA_BYTES,
    maxRequestBytes: cfg.maxRequestBytes,
    maxTxnOps: cfg.maxTxnOps,
    bcryptCost: cfg.bcryptCost,
    authTokens: newTokenProvider(cfg.authToken, logger.withPackage('auth')),
    // 0 means the default, as in the reference
    ...(cfg.authTokenTtlSeconds > 0 ? { simpleTokenTtlMs: cfg.authTokenTtlSeconds * 1000 } : {}),
    preVote: cfg.preVote,
    initialElectionTickAdvance: cfg.initialElectionTickAdvance,
    initialCorruptCheck: cfg.experimentalInitialCorruptCheck,
    corruptCheckTimeMs: cfg.experimentalCorruptCheckTimeMs,
    compactHashCheckTimeMs: cfg.experimentalCompactHashCheckTimeMs,
    enableV2: cfg.enableV2,
    warningApplyMs: cfg.warningApplyMs,
    compactionBatchLimit: cfg.compactionBatchLimit,
    backendBatchLimit: cfg.backendBatchLimit,
    backendBatchIntervalMs: cfg.backendBatchIntervalMs,
    raftReadTimeoutMs: cfg.raftReadTimeoutMs,
    raftWriteTimeoutMs: cfg.raftWriteTimeoutMs,
    bootstrapDefragThresholdMegabytes: cfg.bootstrapDefragThresholdMegabytes,
    compactionSleepMs: cfg.compactionSleepMs,
    v2Deprecation: cfg.v2Deprecation,
    strictReconfigCheck: cfg.strictReconfigCheck,
    forceNewCluster: cfg.forceNewCluster,
    versionMonitorMs: 4000,
    peerTls: peerTls ? { ...peerTls, allowedCNs: names(cfg.peerTls.allowedCn), allowedHostnames: names(cfg.peerTls.allowedHostname), ...versions } : undefined,
    clientTls: clientTls ? { cert: clientTls.cert, key: clientTls.key, ca: clientTls.ca, crl: clientTls.crl, requestCert: clientTls.clientCertAuth, rejectUnauthorized: clientTls.clientCertAuth, allowedHostnames: names(cfg.clientTls.allowedHostname), ...versions } : undefined,
    release,
    logger: logger.withPackage('etcdserver'),
    embedLogger: embedLog,
    logFormat: cfg.logger,
    setLogLevel: (level: string) => logger.setLevel(parseLevel(level)),
  };
}

function urlText(u: URL): string {
  return u.toString().replace(/\/$/, '');
}

/** A test knob given in milliseconds through the environment; undefined unless a positive number. */
function positiveMs(v: string | undefined): number | undefined {
  const n = Number(v);
  return n > 0 ? n : undefined;
}
