// The configuration of one member, decided in one place: memberConfig(spec, release) says which flags and which
// environment a member of that release runs with; memberArgs() renders it with what only a runtime knows (names,
// ports or hostnames, the data dir, certificate files). The local runtime, the Kubernetes StatefulSet and the test
// harness all render it, so they cannot disagree. A spec field a release has no flag for is refused by validation
// (memberConfigProblems, called by specProblems) before anything runs; memberConfig itself only leaves such a flag
// out, which matters mid-upgrade: members of the old release keep running without the new release's flags.
import { createHash } from 'node:crypto';
import { releaseFor, SUPPORTED_RELEASES, type Release } from '../../server/releases.js';
import { maintenanceFlags } from './maintenance.js';
import type { SvcClusterSpec } from './types.js';

/** What a member of one release runs with, besides where it runs. */
export interface MemberConfig {
  /** The release (SVC_VERSION) the member runs. */
  release: string;
  /** Flags decided by the spec, e.g. --enable-v2=true, --logger=zap. */
  flags: string[];
  /** Environment of the member process. */
  env: Record<string, string>;
  /** Hash of the flags and environment besides the release: a changed revision rolls the members. */
  revision: string;
}

/** A flag the spec sets: the field that sets it, the flag's name (as the release table lists it) and its argument. */
interface SpecFlag {
  field: string;
  flag: string;
  value: string;
}

/** Every flag a spec field sets, in the order members get them. Only what the spec sets: each release keeps its own defaults. */
function specFlags(spec: SvcClusterSpec): SpecFlag[] {
  const out: SpecFlag[] = [];
  if (spec.enableV2 !== undefined) out.push({ field: 'spec.enableV2', flag: 'enable-v2', value: String(spec.enableV2) });
  const l = spec.logging;
  if (l?.logger) {
    out.push({ field: 'spec.logging.logger', flag: 'logger', value: l.logger });
    // zap writes to stderr only when told (the runtimes collect stderr)
    if (l.logger === 'zap') out.push({ field: 'spec.logging.logger', flag: 'log-outputs', value: 'stderr' });
  }
  if (l?.level) out.push({ field: 'spec.logging.level', flag: 'log-level', value: l.level });
  // the quota always (derived from the volume when not given): the member's own 2 GiB default may exceed the volume
  out.push(...maintenanceFlags(spec));
  return out;
}

const knows = (r: Release, flag: string): boolean => !r.unknownFlags.includes(flag);

/** The flags, environment and revision of a member of `release` (a full version) under `spec`. */
export function memberConfig(spec: SvcClusterSpec, release: string): MemberConfig {
  const r = releaseFor(release);
  const flags = specFlags(spec).filter((f) => knows(r, f.flag)).map((f) => `--${f.flag}=${f.value}`);
  const env = { SVC_VERSION: r.version };
  // the release is not part of the revision: a version change is an upgrade, not a configuration change
  const revision = createHash('sha256').update(JSON.stringify({ flags })).digest('hex').slice(0, 16);
  return { release: r.version, flags, env, revision };
}

/**
 * Spec fields the release of spec.version has no flag for, each with one message naming the field, the release
 * and the way out. Empty for a version that is not a release (specProblems reports that itself).
 */
export function memberConfigProblems(spec: SvcClusterSpec): string[] {
  let r: Release;
  try {
    r = releaseFor(spec.version);
  } catch {
    return [];
  }
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of specFlags(spec)) {
    if (knows(r, f.flag) || seen.has(f.field)) continue;
    seen.add(f.field);
    const able = SUPPORTED_RELEASES.filter((v) => knows(releaseFor(v), f.flag)).map((v) => releaseFor(v).minor);
    out.push(`${f.field}: release ${r.version} has no --${f.flag} flag; remove ${f.field}, or set spec.version to a release that has it (${able.join(', ')})`);
  }
  return out;
}

/** Where one member runs: what only its runtime knows. */
export interface MemberPlacement {
  name: string;
  dataDir: string;
  /** Listened on (default: the advertised one). */
  listenClientUrl?: string;
  /** Advertised to clients. */
  clientUrl: string;
  /** Listened on (default: the advertised one). */
  listenPeerUrl?: string;
  /** Listened on and, unless advertisedPeerUrl says otherwise, advertised. */
  peerUrl: string;
  /** The peer URL the other members dial (a fault proxy in front of peerUrl, say); default peerUrl. */
  advertisedPeerUrl?: string;
  initialCluster: string;
  token: string;
  /** new or existing (Kubernetes: a reference to the ConfigMap's value). */
  state: string;
  /** Certificate files (tls.crt, tls.key, ca.crt) of the client and peer listeners; with client ones, plain /health and /metrics here. */
  tls?: { clientDir?: string; peerDir?: string; metricsUrl?: string };
}

/** The member's command line: its placement, then its configuration's flags. */
export function memberArgs(m: MemberPlacement, config?: MemberConfig): string[] {
  const a = [
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=${m.listenClientUrl ?? m.clientUrl}`,
    `--advertise-client-urls=${m.clientUrl}`,
    `--listen-peer-urls=${m.listenPeerUrl ?? m.peerUrl}`,
    `--initial-advertise-peer-urls=${m.advertisedPeerUrl ?? m.peerUrl}`,
    `--initial-cluster=${m.initialCluster}`,
    `--initial-cluster-token=${m.token}`,
    `--initial-cluster-state=${m.state}`,
  ];
  const t = m.tls;
  if (t?.clientDir) a.push(`--cert-file=${t.clientDir}/tls.crt`, `--key-file=${t.clientDir}/tls.key`, `--trusted-ca-file=${t.clientDir}/ca.crt`, '--client-cert-auth=true');
  if (t?.clientDir && t.metricsUrl) a.push(`--listen-metrics-urls=${t.metricsUrl}`);
  if (t?.peerDir) a.push(`--peer-cert-file=${t.peerDir}/tls.crt`, `--peer-key-file=${t.peerDir}/tls.key`, `--peer-trusted-ca-file=${t.peerDir}/ca.crt`, '--peer-client-cert-auth=true');
  return config ? [...a, ...config.flags] : a;
}
