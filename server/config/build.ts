// Settings (from flags + SVC_* variables, or from a config file) -> a validated ServerConfig.
// Release differences come from the release table (which flags exist, defaults, deprecations).
import type { Release } from '../releases.js';
import type { LogLevel } from '../log/logger.js';
import { parseLevel } from '../log/levels.js';
import { parseLogRotation, type LogRotation } from '../log/rotate.js';
import { ConfigError } from './errors.js';
import { featureGatesOf } from './feature-gates.js';
import { defaultText, enumValues, FLAGS, type FlagSpec } from './flag-table.js';
import type { Setting } from './settings.js';
import type { ServerConfig, TlsConfig } from './types.js';
import { asText, invalid, isBindableHost, parseBool, parseCluster, parseDurationMs, parseEnum, parseInteger, parseList, parseUrls, urlText, type Origin } from './values.js';

const DEFAULT_QUOTA = 2 * 1024 * 1024 * 1024;
const MAX_RECOMMENDED_QUOTA = 8 * 1024 * 1024 * 1024;
const MAX_ELECTION_MS = 50000;

export interface BuildOptions {
  /** 'flags': command line + environment; 'file': a config file (no advertise-client-urls requirement, as the reference). */
  mode: 'flags' | 'file';
  configFile: string;
}

/** Convert and validate; warnings are appended to `warnings`. */
export function buildConfig(settings: ReadonlyMap<string, Setting>, known: ReadonlyMap<string, FlagSpec>, release: Release, warnings: string[], opts: BuildOptions): ServerConfig {
  const isSet = (name: string): boolean => settings.has(name);
  const raw = (name: string): { raw: unknown; o: Origin } => {
    const s = settings.get(name);
    if (s) return { raw: s.raw, o: s.origin };
    // A flag this release does not know still has the release's behaviour as its value (e.g. 3.3 has no
    // --pre-vote: pre-vote is simply off there).
    const spec = known.get(name) ?? FLAGS.find((f) => f.name === name);
    return { raw: spec ? defaultText(spec, release) : '', o: { flag: name, where: `--${name}` } };
  };
  const str = (n: string): string => {
    const r = raw(n);
    return asText(r.o, r.raw);
  };
  const bool = (n: string): boolean => {
    const r = raw(n);
    return parseBool(r.o, r.raw);
  };
  const uint = (n: string): number => {
    const r = raw(n);
    return parseInteger(r.o, r.raw, false);
  };
  const int = (n: string): number => {
    const r = raw(n);
    return parseInteger(r.o, r.raw, true);
  };
  const dur = (n: string): number => {
    const r = raw(n);
    return parseDurationMs(r.o, r.raw);
  };
  const list = (n: string): string[] => {
    const r = raw(n);
    return parseList(r.o, r.raw);
  };
  const oneOf = <T extends string>(n: string): T => {
    const r = raw(n);
    // (as raw(): a flag this release does not know has its table default, which its table values allow)
    const spec = known.get(n) ?? FLAGS.find((f) => f.name === n);
    return parseEnum(r.o, r.raw, (spec ? enumValues(spec, release) : []) as readonly T[]);
  };
  const urls = (n: string, bind: boolean, required: boolean): URL[] => {
    const r = raw(n);
    const us = parseUrls(r.o, r.raw);
    if (required && us.length === 0) throw invalid(r.o, r.raw, 'at least one URL is required');
    if (bind) {
      for (const u of us) {
        if (u.protocol !== 'unix:' && u.protocol !== 'unixs:' && !isBindableHost(u.hostname)) throw invalid(r.o, r.raw, `a URL to listen on needs an IP address or localhost as host (got "${u.hostname}")`);
      }
    }
    return us;
  };

  // Member and timing.
  const name = str('name');
  const tickMs = uint('heartbeat-interval');
  const electionMs = uint('election-timeout');
  if (tickMs <= 0) throw new ConfigError(`--heartbeat-interval must be > 0 (set to ${tickMs}ms)`, 'heartbeat-interval');
  if (electionMs <= 0) throw new ConfigError(`--election-timeout must be > 0 (set to ${electionMs}ms)`, 'election-timeout');
  if (5 * tickMs > electionMs) {
    throw new ConfigError(`--election-timeout[${electionMs}ms] should be at least 5 times --heartbeat-interval[${tickMs}ms]`, 'election-timeout');
  }
  if (electionMs > MAX_ELECTION_MS) throw new ConfigError(`--election-timeout[${electionMs}ms] is too long; it must be at most ${MAX_ELECTION_MS}ms`, 'election-timeout');

  // URLs.
  const listenPeerUrls = urls('listen-peer-urls', true, true);
  const listenClientUrls = urls('listen-client-urls', true, true);
  const listenMetricsUrls = urls('listen-metrics-urls', true, false);
  const listenClientHttpUrls = known.has('listen-client-http-urls') ? urls('listen-client-http-urls', true, false) : [];
  for (const u of listenClientHttpUrls) {
    if (listenClientUrls.some((c) => c.host === u.host)) {
      throw new ConfigError(`cannot bind both --listen-client-urls and --listen-client-http-urls on the same URL ${urlText(u, u.href)}`, 'listen-client-http-urls');
    }
  }
  const initialAdvertisePeerUrls = urls('initial-advertise-peer-urls', false, true);
  const advertiseClientUrls = urls('advertise-client-urls', false, true);
  if (opts.mode === 'flags' && isSet('listen-client-urls') && !isSet('advertise-client-urls')) {
    throw new ConfigError('--advertise-client-urls is required when --listen-client-urls is set explicitly', 'advertise-client-urls');
  }

  // Bootstrap.
  const initialClusterState = oneOf<'new' | 'existing'>('initial-cluster-state');
  const apTexts = initialAdvertisePeerUrls.map((u) => urlText(u, u.href));
  let initialCluster: Map<string, string[]>;
  if (isSet('initial-cluster')) {
    const r = raw('initial-cluster');
    initialCluster = parseCluster(r.o, r.raw);
  } else {
    initialCluster = new Map([[name, apTexts]]);
  }
  if (initialClusterState === 'new') checkSelfInCluster(name, initialCluster, apTexts);

  // Storage and limits.
  const quotaGiven = int('quota-backend-bytes');
  const quotaBackendBytes = quotaGiven === 0 ? DEFAULT_QUOTA : quotaGiven;
  if (quotaBackendBytes > MAX_RECOMMENDED_QUOTA) warnings.push(`--quota-backend-bytes=${quotaBackendBytes} exceeds the maximum recommended quota of ${MAX_RECOMMENDED_QUOTA} bytes (8 GiB)`);
  const autoCompactionMode = oneOf<'periodic' | 'revision'>('auto-compaction-mode');
  const autoCompactionRetention = str('auto-compaction-retention').trim();
  checkRetention(autoCompactionMode, autoCompactionRetention, raw('auto-compaction-retention').o);

  // TLS.
  const clientTls = tlsOf('', known, str, bool, warnings);
  const peerTls = tlsOf('peer-', known, str, bool, warnings);
  requireTlsForHttps('--listen-client-urls', listenClientUrls, clientTls);
  requireTlsForHttps('--listen-client-http-urls', listenClientHttpUrls, clientTls);
  requireTlsForHttps('--listen-peer-urls', listenPeerUrls, peerTls);
  // (Node's names for the reference's TLS1.2 / TLS1.3)
  const tlsVersion = (n: string): '' | 'TLSv1.2' | 'TLSv1.3' => ({ '': '', 'TLS1.2': 'TLSv1.2', 'TLS1.3': 'TLSv1.3' } as const)[oneOf<'' | 'TLS1.2' | 'TLS1.3'>(n)];
  const tlsMinVersion = tlsVersion('tls-min-version') || 'TLSv1.2';
  const tlsMaxVersion = tlsVersion('tls-max-version');
  if (tlsMaxVersion !== '' && tlsMinVersion > tlsMaxVersion) {
    throw new ConfigError(`min version (${str('tls-min-version')}) is greater than max version (${str('tls-max-version')})`, 'tls-min-version');
  }

  // v2 deprecation (3.5): from write-only on, the v2 API is gone. 3.6 runs write-only unless write-only-skip-check
  // is given, 3.7 always.
  const given = oneOf<ServerConfig['v2Deprecation']>('v2-deprecation');
  const forced = release.v2Deprecation.forced;
  const v2Deprecation = forced === 'always' || (forced === 'unless-skip-check' && given !== 'write-only-skip-check') ? 'write-only' : given;
  if (v2Deprecation !== 'not-yet' && known.has('enable-v2') && bool('enable-v2')) throw new ConfigError(`--enable-v2 and --v2-deprecation=${v2Deprecation} are mutually exclusive`, 'v2-deprecation');
  if (release.discoveryFallback.proxyRefused && str('discovery-fallback') === 'proxy') {
    throw new ConfigError('v2 proxy is deprecated, and --discovery-fallback can\'t be configured as "proxy"', 'discovery-fallback');
  }

  // Feature gates (3.6), or the experimental flags that were their only names before.
  const gates = featureGatesOf(release, settings);
  const gate = (name: string): boolean => gates.get(name) ?? parseBool({ flag: name, where: name }, FLAGS.find((f) => f.gate === name)?.def ?? 'false');
  if (gate('LeaseCheckpointPersist') && !gate('LeaseCheckpoint')) {
    throw new ConfigError('enabling feature gate LeaseCheckpointPersist requires enabling feature gate LeaseCheckpoint', 'feature-gates');
  }

  const compactionBatchLimit = int('compaction-batch-limit');
  const batchFlag = raw('compaction-batch-limit').o.flag;
  if (compactionBatchLimit <= 0) throw new ConfigError(`--${batchFlag} must be > 0 (set to ${compactionBatchLimit})`, batchFlag);

  // 0 and empty: the backend's own defaults
  const backendBatch: { backendBatchLimit?: number; backendBatchIntervalMs?: number } = {};
  const batchLimit = int('backend-batch-limit');
  if (batchLimit < 0) throw new ConfigError(`--backend-batch-limit must not be negative (set to ${batchLimit})`, 'backend-batch-limit');
  if (batchLimit > 0) backendBatch.backendBatchLimit = batchLimit;
  const batchInterval = str('backend-batch-interval').trim() === '' ? 0 : dur('backend-batch-interval');
  if (batchInterval > 0) backendBatch.backendBatchIntervalMs = batchInterval;
  const raftTimeout = (n: string): number => {
    const ms = dur(n);
    if (ms <= 0) throw new ConfigError(`--${n} must be > 0 (set to ${str(n)})`, n);
    return ms;
  };

  // Logging.
  const logger = known.has('logger') ? oneOf<'capnslog' | 'zap'>('logger') : release.loggerDefault;
  const logOutputs = logOutputsOf(release, known, isSet, str, list, logger);
  const logRotation = bool('enable-log-rotation') ? logRotationOf(logOutputs, str('log-rotation-config-json')) : undefined;
  let logLevel: LogLevel = 'info';
  if (known.has('log-level')) logLevel = zapLevel(oneOf<string>('log-level'));
  if (known.has('debug') && bool('debug')) logLevel = 'debug';
  const logPackageLevels = new Map<string, LogLevel>();
  if (known.has('log-package-levels')) {
    const text = str('log-package-levels').trim();
    if (text !== '') {
      const o = raw('log-package-levels').o;
      for (const entry of text.split(',')) {
        const [pkg, lvl, extra] = entry.split('=').map((x) => x.trim());
        if (!pkg || lvl === undefined || extra !== undefined) throw invalid(o, text, `entry "${entry}" must have the form <package>=<LEVEL> (e.g. etcdserver=DEBUG)`);
        try {
          logPackageLevels.set(pkg, parseLevel(lvl));
        } catch (e) {
          throw invalid(o, text, (e as Error).message);
        }
      }
      if (logger === 'zap') warnings.push('--log-package-levels only applies to --logger=capnslog; it is ignored with zap (use --log-level)');
      else warnings.push('--log-package-levels is not applied by svc: every package logs at --log-level (or --debug)');
    }
  }

  return {
    name,
    dataDir: str('data-dir') || `${name}.svc`,
    walDir: str('wal-dir'),
    snapshotCount: uint('snapshot-count'),
    maxSnapshots: uint('max-snapshots'),
    maxWals: uint('max-wals'),
    tickMs,
    electionMs,
    initialElectionTickAdvance: bool('initial-election-tick-advance'),
    listenPeerUrls,
    listenClientUrls,
    listenMetricsUrls,
    listenClientHttpUrls,
    initialAdvertisePeerUrls,
    advertiseClientUrls,
    initialCluster,
    initialClusterToken: str('initial-cluster-token'),
    initialClusterState,
    strictReconfigCheck: bool('strict-reconfig-check'),
    enableV2: bool('enable-v2'),
    v2Deprecation,
    preVote: bool('pre-vote'),
    forceNewCluster: bool('force-new-cluster'),
    unsafeNoFsync: known.has('unsafe-no-fsync') && bool('unsafe-no-fsync'),
    maxConcurrentStreams: maxStreams(uint('max-concurrent-streams'), raw('max-concurrent-streams')),
    selfSignedCertValidity: selfSignedValidity(uint('self-signed-cert-validity'), raw('self-signed-cert-validity')),
    quotaBackendBytes,
    maxRequestBytes: uint('max-request-bytes'),
    maxTxnOps: uint('max-txn-ops'),
    grpcKeepaliveMinTimeMs: dur('grpc-keepalive-min-time'),
    grpcKeepaliveIntervalMs: dur('grpc-keepalive-interval'),
    grpcKeepaliveTimeoutMs: dur('grpc-keepalive-timeout'),
    autoCompactionMode,
    autoCompactionRetention,
    clientTls,
    peerTls,
    cipherSuites: list('cipher-suites'),
    cors: list('cors'),
    hostWhitelist: list('host-whitelist'),
    authToken: str('auth-token'),
    authTokenTtlSeconds: uint('auth-token-ttl'),
    tlsMinVersion,
    tlsMaxVersion,
    bcryptCost: uint('bcrypt-cost'),
    logger,
    logOutputs,
    ...(logRotation ? { logRotation } : {}),
    logLevel,
    logPackageLevels,
    metrics: oneOf<'basic' | 'extensive'>('metrics'),
    enablePprof: bool('enable-pprof'),
    enableGrpcGateway: bool('enable-grpc-gateway'),
    experimentalInitialCorruptCheck: gate('InitialCorruptCheck'),
    experimentalCorruptCheckTimeMs: dur('corrupt-check-time'),
    experimentalCompactHashCheckTimeMs: gate('CompactHashCheck') ? dur('compact-hash-check-time') : 0,
    featureGates: gates,
    maxLearners: uint('max-learners'),
    logFormat: oneOf<'json' | 'console'>('log-format'),
    ...(settings.has('snapshot-catchup-entries') ? { snapshotCatchUpEntries: uint('snapshot-catchup-entries') } : {}),
    downgradeCheckTimeMs: dur('downgrade-check-time'),
    warningUnaryRequestMs: dur('warning-unary-request-duration'),
    compactionBatchLimit,
    ...backendBatch,
    raftReadTimeoutMs: raftTimeout('raft-read-timeout'),
    raftWriteTimeoutMs: raftTimeout('raft-write-timeout'),
    bootstrapDefragThresholdMegabytes: uint('bootstrap-defrag-threshold-megabytes'),
    compactionSleepMs: dur('compaction-sleep-interval'),
    warningApplyMs: dur('warning-apply-duration'),
    watchProgressNotifyMs: dur('watch-progress-notify-interval'),
    configFile: opts.configFile,
  };
}

function maxStreams(n: number, r: { raw: unknown; o: Origin }): number {
  if (n < 1 || n > 4294967295) throw invalid(r.o, r.raw, 'must be between 1 and 4294967295');
  return n;
}

function selfSignedValidity(years: number, r: { raw: unknown; o: Origin }): number {
  if (years < 1) throw invalid(r.o, r.raw, 'the validity of self-signed certificates is at least 1 year');
  return years;
}

function zapLevel(name: string): LogLevel {
  return name === 'panic' ? 'fatal' : (name as LogLevel);
}

// Hosts that name this machine's loopback are treated as equal when matching URLs.
function sameUrl(a: string): string {
  return a.replace(/\/\/(localhost|\[::1\]|127\.0\.0\.1):/, '//127.0.0.1:');
}

function checkSelfInCluster(name: string, cluster: Map<string, string[]>, advertised: string[]): void {
  const text = [...cluster].flatMap(([n, us]) => us.map((u) => `${n}=${u}`)).join(',');
  const mine = cluster.get(name);
  if (mine === undefined) {
    throw new ConfigError(
      `the member's own name "${name}" is missing from --initial-cluster (${text === '' ? 'empty' : text}); add ${name}=<its peer URL>, or set --name to one of the names listed`,
      'initial-cluster',
    );
  }
  const a = [...new Set(mine.map(sameUrl))].sort();
  const b = [...new Set(advertised.map(sameUrl))].sort();
  if (a.length !== b.length || a.some((u, i) => u !== b[i])) {
    throw new ConfigError(
      `--initial-cluster has ${name}=${mine.join(',')} but --initial-advertise-peer-urls is ${advertised.join(',')}; the member's entry must list the same peer URLs`,
      'initial-cluster',
    );
  }
}

function checkRetention(mode: 'periodic' | 'revision', retention: string, o: Origin): void {
  if (/^\d+$/.test(retention)) return;
  if (mode === 'revision') throw invalid(o, retention, 'with --auto-compaction-mode=revision the retention must be a revision count (e.g. 1000)');
  try {
    parseDurationMs(o, retention);
  } catch {
    throw invalid(o, retention, 'with --auto-compaction-mode=periodic the retention must be a number of hours (e.g. 1) or a duration (e.g. 30m)');
  }
}

function tlsOf(
  prefix: '' | 'peer-',
  known: ReadonlyMap<string, FlagSpec>,
  str: (n: string) => string,
  bool: (n: string) => boolean,
  warnings: string[],
): TlsConfig {
  const tls: TlsConfig = {
    certFile: str(`${prefix}cert-file`),
    keyFile: str(`${prefix}key-file`),
    clientCertAuth: bool(`${prefix}client-cert-auth`),
    trustedCaFile: str(`${prefix}trusted-ca-file`),
    autoTls: bool(`${prefix}auto-tls`),
    crlFile: str(prefix === '' ? 'client-crl-file' : 'peer-crl-file'),
    allowedCn: prefix === '' ? '' : str('peer-cert-allowed-cn'),
    allowedHostname: str(`${prefix === '' ? 'client' : 'peer'}-cert-allowed-hostname`),
    clientCertFile: str(`${prefix}client-cert-file`),
    clientKeyFile: str(`${prefix}client-key-file`),
  };
  const caFlag = `${prefix}ca-file`;
  const caFile = known.has(caFlag) ? str(caFlag) : '';
  if (caFile !== '') {
    // The old CA flag always meant "verify client certificates against this CA".
    tls.clientCertAuth = true;
    if (tls.trustedCaFile === '') tls.trustedCaFile = caFile;
    else if (tls.trustedCaFile !== caFile) warnings.push(`both --${caFlag} and --${prefix}trusted-ca-file are set; using --${prefix}trusted-ca-file=${tls.trustedCaFile}`);
  }
  if ((tls.certFile === '') !== (tls.keyFile === '')) {
    throw new ConfigError(`--${prefix}cert-file and --${prefix}key-file must be given together`, `${prefix}cert-file`);
  }
  if ((tls.clientCertFile === '') !== (tls.clientKeyFile === '')) {
    throw new ConfigError(`--${prefix}client-cert-file and --${prefix}client-key-file must be given together`, `${prefix}client-cert-file`);
  }
  if (tls.autoTls && tls.certFile !== '') warnings.push(`ignoring --${prefix}auto-tls since --${prefix}cert-file and --${prefix}key-file are given`);
  return tls;
}

function requireTlsForHttps(flag: string, urls: URL[], tls: TlsConfig): void {
  const https = urls.find((u) => u.protocol === 'https:' || u.protocol === 'unixs:');
  if (https && tls.certFile === '' && !tls.autoTls) {
    const p = flag.includes('peer') ? 'peer-' : '';
    throw new ConfigError(`${flag} has ${https.protocol}//${https.host}, which needs TLS: give --${p}cert-file and --${p}key-file, or --${p}auto-tls`, flag.slice(2));
  }
}

/** The rotation of the one file among the log outputs (--enable-log-rotation), or the reference's refusal. */
function logRotationOf(outputs: string[], json: string): LogRotation {
  const files = outputs.filter((o) => !['default', 'stderr', 'stdout'].includes(o)).length;
  if ((outputs.length === 1 && files === 0) || files > 1) {
    throw new ConfigError('--log-outputs requires a single file path when --log-rotate-config-json is defined', 'log-outputs');
  }
  const r = parseLogRotation(json);
  if (typeof r === 'string') throw new ConfigError(r, 'log-rotation-config-json');
  return r;
}

function logOutputsOf(
  release: Release,
  known: ReadonlyMap<string, FlagSpec>,
  isSet: (n: string) => boolean,
  str: (n: string) => string,
  list: (n: string) => string[],
  logger: 'capnslog' | 'zap',
): string[] {
  let outputs: string[];
  if (release.embed.logOutputField === 'logOutput' || !known.has('log-outputs')) {
    // Releases with the single-valued --log-output: the value is one output, as given.
    outputs = [str('log-output').trim() || 'default'];
  } else {
    const newSet = isSet('log-outputs');
    const oldSet = known.has('log-output') && isSet('log-output');
    const newer = newSet ? list('log-outputs') : ['default'];
    const older = oldSet ? list('log-output') : ['default'];
    if (newSet && oldSet && newer.join(',') !== older.join(',')) {
      throw new ConfigError(`both --log-output=${older.join(',')} and --log-outputs=${newer.join(',')} are set; only set --log-outputs`, 'log-outputs');
    }
    outputs = newSet ? newer : older;
  }
  if (outputs.length === 0) throw new ConfigError('--log-outputs needs at least one output (default, stderr, stdout or a file path)', 'log-outputs');
  if (outputs.includes('systemd/journal')) throw new ConfigError('--log-outputs=systemd/journal is not supported by svc; use default, stderr, stdout or a file path', 'log-outputs');
  if (outputs.length > 1 && logger !== 'zap') {
    throw new ConfigError(`--logger=${logger} supports only one log output, got ${outputs.join(',')}; several outputs need --logger=zap`, 'log-outputs');
  }
  if (outputs.length > 1 && outputs.includes('default')) {
    throw new ConfigError(`"default" cannot be combined with other log outputs (got ${outputs.join(',')}); use "stderr" instead`, 'log-outputs');
  }
  return outputs;
}
