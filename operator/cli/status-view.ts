// The on-call view of one SvcCluster: `kubectl svc status <cluster>` and `svc-operator status <cluster>`.
// What the operator recorded (status, the upgrade, the last backup), read live from the members as the operator's
// member client reads them (role, release, health, raft index and lag, DB size, alarms), the pods as Kubernetes
// sees them, recent Events and, for TLS clusters, certificate expiry. gatherView() does the I/O, renderView() is
// pure text.
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client } from '../../server/client/index.js';
import { API_VERSION, PLURAL, type SvcCluster, type SvcClusterStatus } from '../api/types.js';
import { MemberClient, type MemberTls } from '../members/index.js';
import { memberClientURL, memberHost, selectorLabels } from '../runtime/kubernetes/manifests.js';
import { RECORDS_ANNOTATION } from '../runtime/kubernetes/kube-records.js';
import { parseRecords } from '../planner/records.js';
import { checkTlsData } from '../controller/tls.js';
import { describePod } from '../controller/pod-diagnostics.js';
import { hexMemberId } from '../api/member-id.js';

const [GROUP, VERSION] = API_VERSION.split('/');

/** A failure of the status command that the user can act on (exit status 1, one line). */
export class StatusError extends Error {}

/** One member as the view shows it. */
export interface MemberView {
  name: string;
  /** leader, follower, or unknown (unreachable). */
  role: string;
  release?: string;
  healthy: boolean;
  reachable: boolean;
  raftIndex?: number;
  appliedIndex?: number;
  /** Leader's raft index minus this member's applied index. */
  lag?: number;
  /** The member's store revision (Maintenance.Status; served without quorum). */
  revision?: number;
  dbSize?: number;
  dbSizeInUse?: number;
  id?: string;
  /** The pod: phase and readiness, or what keeps it from running (ImagePullBackOff, ...). */
  pod: string;
  podIP?: string;
  image?: string;
  error?: string;
}

/** A certificate of spec.tls. */
export interface CertView {
  secret: string;
  use: 'client' | 'peer';
  notAfter?: string;
  daysLeft?: number;
  error?: string;
}

export interface EventView {
  time: string;
  type: string;
  reason: string;
  object: string;
  message: string;
  count: number;
}

/** Everything the view shows. */
export interface ClusterView {
  namespace: string;
  name: string;
  generation?: number;
  spec: SvcCluster['spec'];
  status: SvcClusterStatus;
  members: MemberView[];
  alarms: Array<{ member: string; alarm: string }>;
  /** Why alarms could not be read, if they could not. */
  alarmsError?: string;
  certificates: CertView[];
  events: EventView[];
  /** The operator's scaling record (the record document), when one is under way. */
  scaling?: { from?: number; to?: number; member?: string };
  /** The quorum-loss recovery request (annotation svc.dev/recover), if any. */
  recoverRequest?: string;
  /** The client certificate the members were read with (TLS clusters): an on-call action reaches them the same way. */
  memberTls?: MemberTls;
  /** The SvcCluster's annotations as read. */
  annotations?: Record<string, string>;
  at: Date;
}

/** Loads the kubeconfig as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster); a clear error when there is none. */
export function loadKubeConfig(file: string | undefined): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (file !== undefined) {
    if (!existsSync(file)) throw new StatusError(`kubeconfig ${file} does not exist`);
    kc.loadFromFile(file);
  } else if (process.env.KUBECONFIG) {
    const files = process.env.KUBECONFIG.split(':').filter(Boolean);
    const missing = files.filter((f) => !existsSync(f));
    if (missing.length === files.length) throw new StatusError(`no kubeconfig: KUBECONFIG names ${missing.join(', ')}, which does not exist`);
    kc.loadFromDefault();
  } else if (existsSync(join(homedir(), '.kube', 'config'))) {
    kc.loadFromDefault();
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster();
  } else {
    throw new StatusError('no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or create ~/.kube/config');
  }
  if (!kc.getCurrentCluster()) throw new StatusError('the kubeconfig has no current context with a cluster');
  return kc;
}

/** The namespace of the kubeconfig's current context (kubectl's default), else "default". */
export function contextNamespace(kc: k8s.KubeConfig): string {
  const ctx = kc.getContextObject(kc.getCurrentContext());
  return ctx?.namespace || 'default';
}

/** An API failure as one line: unreachable apiserver, 403, other HTTP statuses. */
function apiError(kc: k8s.KubeConfig, what: string, e: unknown): StatusError {
  const code = (e as { code?: number }).code;
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  if (typeof code === 'number') {
    const body = (e as { body?: unknown }).body;
    let msg: string;
    try { msg = (typeof body === 'string' ? JSON.parse(body) as { message?: string } : body as { message?: string })?.message ?? ''; } catch { msg = String(body); }
    return new StatusError(`${what}: the apiserver answered ${code}${msg ? `: ${msg}` : ''}`);
  }
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return new StatusError(`cannot reach the apiserver at ${server} (${what}): ${cause?.code ?? cause?.message ?? (e as Error).message}`);
}

/**
 * Makes this process resolve the members' DNS names (<pod>.<cluster>.<ns>.svc) to their pod addresses from the API,
 * so TLS still verifies the name the certificates carry. A process outside the cluster network cannot resolve
 * those names; it can reach pod addresses where they are routed (on a node, over a VPN, in a pod).
 */
export function pinHosts(hosts: Map<string, string>): () => void {
  const original = dns.lookup;
  const originalPromise = dns.promises.lookup;
  type Cb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
  const patched = (hostname: string, options: unknown, callback?: Cb): void => {
    const cb = (typeof options === 'function' ? options : callback) as Cb;
    const ip = typeof hostname === 'string' ? hosts.get(hostname.toLowerCase().replace(/\.$/, '')) : undefined;
    if (ip === undefined) { (original as (...a: unknown[]) => void).call(dns, hostname, options, callback); return; }
    const all = typeof options === 'object' && options !== null && (options as dns.LookupOptions).all;
    if (all) cb(null, [{ address: ip, family: 4 }]);
    else cb(null, ip, 4);
  };
  (dns as { lookup: unknown }).lookup = patched;
  (dns.promises as { lookup: unknown }).lookup = (hostname: string, options?: dns.LookupOptions) => new Promise((resolve, reject) => {
    patched(hostname, options ?? {}, (err, address, family) => (err ? reject(err) : resolve(Array.isArray(address) ? address : { address, family })));
  });
  syncBuiltinESMExports();
  // the addresses are of this moment: a pod that restarts comes back on another, so the pin ends with the reads
  // (a command that goes on waiting, or an operator in the same process, must resolve the names afresh)
  return () => {
    if ((dns as { lookup: unknown }).lookup !== patched) return;
    (dns as { lookup: unknown }).lookup = original;
    (dns.promises as { lookup: unknown }).lookup = originalPromise;
    syncBuiltinESMExports();
  };
}

function certView(secret: string, use: 'client' | 'peer', data: Record<string, string> | undefined, now: Date): CertView {
  const pem = data?.['tls.crt'];
  if (!pem) return { secret, use, error: 'no tls.crt' };
  try {
    const cert = new X509Certificate(Buffer.from(pem, 'base64'));
    const notAfter = new Date(cert.validTo);
    return { secret, use, notAfter: notAfter.toISOString(), daysLeft: Math.floor((notAfter.getTime() - now.getTime()) / 86_400_000) };
  } catch (e) {
    return { secret, use, error: `tls.crt unreadable: ${(e as Error).message}` };
  }
}

/** Reads everything the view shows. `timeoutMs` bounds each member call. */
export async function gatherView(kc: k8s.KubeConfig, namespace: string, name: string, timeoutMs = 3000): Promise<ClusterView> {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const now = new Date();
  let stored: SvcCluster & { metadata: k8s.V1ObjectMeta };
  try {
    stored = await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }) as typeof stored;
  } catch (e) {
    const code = (e as { code?: number }).code;
    if (code === 404) throw new StatusError(`no SvcCluster "${name}" in namespace "${namespace}" (kubectl get svcc -A lists them)`);
    throw apiError(kc, `reading svcclusters/${name} in ${namespace}`, e);
  }
  const spec = stored.spec;
  const selector = Object.entries(selectorLabels(name)).map(([k, v]) => `${k}=${v}`).join(',');
  const [pods, events] = await Promise.all([
    core.listNamespacedPod({ namespace, labelSelector: selector }).then((l) => l.items).catch((e: unknown) => { throw apiError(kc, 'listing pods', e); }),
    core.listNamespacedEvent({ namespace }).then((l) => l.items).catch(() => [] as k8s.CoreV1Event[]),
  ]);
  pods.sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));

  // TLS: the operator's client certificate, and every certificate's expiry
  const certificates: CertView[] = [];
  let tls: MemberTls | undefined;
  for (const [use, secret] of [['client', spec.tls?.clientSecret], ['peer', spec.tls?.peerSecret]] as const) {
    if (!secret) continue;
    try {
      const s = await core.readNamespacedSecret({ namespace, name: secret });
      certificates.push(certView(secret, use, s.data, now));
      if (use === 'client') {
        try { tls = checkTlsData('spec.tls.clientSecret', secret, s.data, true, now); } catch (e) { certificates.at(-1)!.error = (e as Error).message; }
      }
    } catch (e) {
      certificates.push({ secret, use, error: (e as { code?: number }).code === 404 ? 'Secret not found' : apiError(kc, `reading Secret ${secret}`, e).message });
    }
  }

  // members, live
  const ref = { name, namespace, spec };
  const hosts = new Map<string, string>();
  for (const p of pods) if (p.status?.podIP) hosts.set(memberHost(name, namespace, p.metadata!.name!), p.status.podIP);
  const unpin = pinHosts(hosts);
  const members: MemberView[] = [];
  const alarms: ClusterView['alarms'] = [];
  let alarmsError: string | undefined;
  try {
    const client = new MemberClient({ timeoutMs, attempts: 1, tls });
    try {
      await Promise.all(pods.map(async (p) => {
        const podName = p.metadata!.name!;
        const url = memberClientURL(ref, podName);
        const v: MemberView = {
          name: podName, role: 'unknown', healthy: false, reachable: false, pod: describePod(p), podIP: p.status?.podIP,
          image: p.spec?.containers?.[0]?.image,
        };
        members.push(v);
        if (!p.status?.podIP) { v.error = 'no pod address'; return; }
        const [st, ver, healthy] = await Promise.allSettled([client.status(url), client.version(url), client.healthy(url)]);
        if (st.status === 'fulfilled') {
          v.reachable = true;
          v.id = BigInt(st.value.id).toString(16);
          v.raftIndex = st.value.raftIndex;
          v.appliedIndex = st.value.appliedIndex;
          v.revision = st.value.revision;
          v.dbSize = st.value.dbSize;
          if (st.value.dbSizeInUse !== undefined) v.dbSizeInUse = st.value.dbSizeInUse;
          v.role = st.value.leader === st.value.id ? 'leader' : st.value.leader === '0' ? 'no leader' : 'follower';
        } else v.error = (st.reason as Error).message;
        if (ver.status === 'fulfilled') v.release = ver.value.etcdserver;
        v.healthy = healthy.status === 'fulfilled' && healthy.value;
      }));
    } finally {
      client.close();
    }
    members.sort((a, b) => (a.name < b.name ? -1 : 1));
    const leader = members.find((m) => m.role === 'leader');
    for (const m of members) if (leader?.raftIndex !== undefined && m.appliedIndex !== undefined) m.lag = Math.max(0, leader.raftIndex - m.appliedIndex);

    // alarms: one list for the whole cluster, from the leader (else any reachable member)
    const asked = leader ?? members.find((m) => m.reachable);
    if (asked) {
      const byId = new Map(members.filter((m) => m.id).map((m) => [m.id!, m.name]));
      const url = memberClientURL(ref, asked.name);
      const c = await Client.connect({ endpoints: [url], tls, commandTimeoutMs: timeoutMs, dialTimeoutMs: timeoutMs }).catch((e: unknown) => e as Error);
      if (c instanceof Client) {
        try {
          for (const a of (await c.alarmList()).alarms) {
            const id = BigInt(a.memberID).toString(16);
            alarms.push({ member: alarmMember(id, byId), alarm: a.alarm });
          }
        } catch (e) {
          alarmsError = (e as Error).message;
        } finally {
          c.close();
        }
      } else alarmsError = c.message;
    } else alarmsError = 'no member reachable';
  } finally {
    unpin();
  }

  const ours = new Set([name, ...pods.map((p) => p.metadata!.name!)]);
  const evs: EventView[] = events
    // the cluster's own Events, and the Warnings of its pods (their Normal ones, pulled/started, are noise here)
    .filter((e) => ours.has(e.involvedObject.name ?? '') && (e.involvedObject.kind === 'SvcCluster' || (e.involvedObject.kind === 'Pod' && e.type === 'Warning')))
    .map((e) => ({
      time: new Date(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? now).toISOString(),
      type: e.type ?? 'Normal', reason: e.reason ?? '', object: `${e.involvedObject.kind}/${e.involvedObject.name}`, message: e.message ?? '', count: e.count ?? 1,
    }))
    .sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0))
    .slice(-10);

  // the scaling step begun last (the record document), while the members are not yet as many as it pursues
  const rec = parseRecords(stored.metadata.annotations?.[RECORDS_ANNOTATION])?.scaling;
  const scaling: ClusterView['scaling'] = rec && rec.replicas !== members.length ? { from: members.length, to: rec.replicas, member: rec.member } : undefined;
  return {
    namespace, name, generation: stored.metadata.generation, spec, status: stored.status ?? {}, members, alarms, alarmsError,
    certificates, events: evs, scaling, at: now, annotations: stored.metadata.annotations ?? {}, ...(tls ? { memberTls: tls } : {}),
    ...(stored.metadata.annotations?.['svc.dev/recover'] ? { recoverRequest: stored.metadata.annotations['svc.dev/recover'] } : {}),
  };
}

function bytes(n: number | undefined): string {
  if (n === undefined) return '-';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

function age(from: string | undefined, now: Date): string {
  if (!from) return '-';
  const s = Math.max(0, Math.round((now.getTime() - new Date(from).getTime()) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** Left-aligned columns. */
function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd());
}

/** The view as text (pure). */
/** Who an alarm is raised for: a member's name, or the cluster for member 0 (CORRUPT: which member is not known). */
export function alarmMember(idHex: string, names: Map<string, string>): string {
  return idHex === '0' ? 'the cluster (member 0)' : (names.get(idHex) ?? idHex);
}

export function renderView(v: ClusterView): string {
  const st = v.status;
  const out: string[] = [];
  const cond = (t: string) => st.conditions?.find((c) => c.type === t);
  const ready = cond('Ready');
  out.push(`Cluster:        ${v.namespace}/${v.name}`);
  out.push(`Phase:          ${st.phase ?? '(no status yet)'}${ready ? `  (Ready ${ready.status}: ${ready.message})` : ''}`);
  out.push(`Versions:       spec ${v.spec.version}, members run ${st.currentVersion ?? '-'}, cluster version ${st.clusterVersion ?? '-'}`);
  out.push(`Members:        ${st.ready ?? '-'} ready, leader ${v.members.find((m) => m.role === 'leader')?.name ?? st.leader ?? 'none'}`);
  out.push(`Generation:     ${v.generation ?? '-'} (status observed ${st.observedGeneration ?? '-'})`);
  const stalled = cond('Stalled');
  if (stalled?.status === 'True') out.push(`Stalled:        ${stalled.reason}: ${stalled.message}`);
  const rec = cond('Reconciling');
  if (rec?.status === 'True') out.push(`Reconciling:    ${rec.reason}: ${rec.message}`);
  if (st.lastError) out.push(`Last error:     ${st.lastError}`);
  // what the members' health does not show: a raised alarm refuses every write; the agent's destination fails
  const writes = cond('WritesRefused');
  if (writes?.status === 'True') out.push(`Writes:         REFUSED (${writes.reason}): ${writes.message}`);
  const agent = cond('ContinuousBackup');
  if (agent?.status === 'False') out.push(`Continuous:     FAILING (${agent.reason}): ${agent.message}`);
  const up = st.upgrade;
  if (up && up.finishedAt === undefined) {
    out.push(`Upgrade:        ${up.from} -> ${up.to}${up.hops && up.hops.length > 1 ? ` (hops: ${up.hops[0]} now, then ${up.hops.slice(1).join(' -> ')})` : ''} in progress, step ${up.step}, ${up.membersDone.length}/${v.members.length} members done${up.membersDone.length ? ` (${up.membersDone.join(', ')})` : ''}, started ${age(up.startedAt, v.at)} ago${v.spec.upgrade?.paused ? ', PAUSED' : ''}`);
  } else if (up) {
    out.push(`Upgrade:        none in progress (last: ${up.from} -> ${up.to}, ${up.step}, finished ${age(up.finishedAt, v.at)} ago)`);
  } else out.push('Upgrade:        none in progress');
  if (v.scaling) out.push(`Scaling:        ${v.scaling.from ?? '?'} -> ${v.scaling.to} members${v.scaling.member ? ` (${v.scaling.member})` : ''}`);
  const r = v.status.recovery;
  if (r) {
    out.push(r.refused !== undefined
      ? `Recovery:       ${r.request} refused: ${r.refused}`
      : `Recovery:       ${r.request} from ${r.survivor ?? '?'}, ${r.finishedAt ? `finished ${r.finishedAt}` : `step ${r.step ?? '?'}`}${r.snapshot ? `; snapshot ${r.snapshot}` : ''}`);
  }
  const snap = up?.snapshot;
  out.push(snap
    ? `Last backup:    ${snap.location} from ${snap.member}, revision ${snap.revision}, ${bytes(snap.size)}, sha256 ${snap.sha256.slice(0, 12)}..., ${age(snap.time, v.at)} ago`
    : 'Last backup:    none recorded (a snapshot is taken before each upgrade)');
  const drill = st.backups?.lastVerified;
  if (drill || v.spec.backup?.verify) {
    out.push(drill
      ? `Last drill:     ${drill.result === 'Failed' ? 'FAILED' : 'passed'} ${age(drill.time, v.at)} ago, revision ${drill.revision}${drill.location ? ` of ${drill.location}` : ''}: ${drill.message}`
      : `Last drill:     none yet (spec.backup.verify "${v.spec.backup!.verify!.schedule}"${st.backups?.nextVerifyTime ? `, next ${st.backups.nextVerifyTime}` : ''})`);
  }
  const mt = st.maintenance;
  if (mt) {
    const compaction = mt.lastCompaction ? `last compaction to revision ${mt.lastCompaction.revision} (${mt.lastCompaction.reason}, its round began ${age(mt.lastCompaction.roundStartedAt, v.at)} ago)` : 'no compaction by the operator yet';
    const defrags = mt.members?.length ? `last defragmented: ${mt.members.map((m) => `${m.name} ${age(m.time, v.at)} ago (${m.reason}, ${bytes(m.before)} -> ${bytes(m.after)})`).join(', ')}` : 'no defragmentation by the operator yet';
    out.push(`Maintenance:    quota ${bytes(mt.quotaBackendBytes)}; ${compaction}; ${defrags}`);
  }
  for (const c of v.certificates) {
    out.push(`Certificate:    ${c.use} Secret ${c.secret}: ${c.error ? `PROBLEM: ${c.error}` : `expires ${c.notAfter} (${c.daysLeft! < 0 ? 'EXPIRED' : `in ${c.daysLeft} days`})`}`);
  }
  if (!v.spec.tls?.clientSecret && !v.spec.tls?.peerSecret) out.push('TLS:            off');
  out.push('');
  const rows = [['MEMBER', 'ROLE', 'RELEASE', 'HEALTH', 'RAFT INDEX', 'APPLIED', 'LAG', 'DB SIZE', 'POD', 'IMAGE']];
  const statusOf = (name: string) => st.members?.find((x) => x.name === name);
  for (const m of v.members) {
    rows.push([m.name, statusOf(m.name)?.learner ? `${m.role} (learner)` : m.role, m.release ?? '-', m.reachable ? (m.healthy ? 'healthy' : 'UNHEALTHY') : 'UNREACHABLE', m.raftIndex?.toString() ?? '-',
      m.appliedIndex?.toString() ?? '-', m.lag?.toString() ?? '-', bytes(m.dbSize), m.pod, m.image ?? '-']);
  }
  if (v.members.length === 0) out.push('No member pods.');
  else out.push(...table(rows));
  for (const m of st.members ?? []) {
    const r = m.replaced;
    if (!r) continue;
    out.push(`Replaced:       ${m.name} (${r.cause}) ${age(r.time, v.at)} ago, previous ID ${hexMemberId(r.previousId)}: ${r.finishedAt ? `a voting member again since ${r.finishedAt}` : 'under way, its successor joins as a learner'}`);
  }
  const unreachable = v.members.filter((m) => !m.reachable && m.podIP);
  if (unreachable.length > 0) out.push(`(not reachable at their pod addresses: ${unreachable.map((m) => `${m.name} ${m.podIP}: ${m.error ?? 'no answer'}`).join('; ')}; run this where pod addresses are routed)`);
  out.push('');
  if (v.alarmsError) out.push(`Alarms:         unknown (${v.alarmsError})`);
  else out.push(`Alarms:         ${v.alarms.length === 0 ? 'none' : v.alarms.map((a) => `${a.alarm} on ${a.member}`).join(', ')}`);
  out.push('');
  if (v.events.length === 0) out.push('Events:         none recent');
  else {
    out.push('Events:');
    out.push(...table([['AGE', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'], ...v.events.map((e) => [age(e.time, v.at), e.type, e.reason, e.object, `${e.message.replace(/\s+/g, ' ').slice(0, 120)}${e.count > 1 ? ` (x${e.count})` : ''}`])]).map((l) => `  ${l}`));
  }
  return `${out.join('\n')}\n`;
}
