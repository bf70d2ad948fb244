// The on-call verbs of the kubectl plugin: `kubectl svc suspend|resume <cluster>` (the break-glass annotation
// svc.dev/reconcile: suspended, which the operator reads at every reconcile), `defrag|compact|move-leader` and
// `restart` (a request annotation the operator carries out through the planner's gates, after the planner's on-call
// rule refused what it would refuse), `alarm list|disarm` (read from the members; disarm decided by the on-call rule,
// recorded as an Event on the SvcCluster, then sent to a member, as `svc-operator local` does), and `kubectl svc report <cluster>` (one tar.gz for a bug report). Each takes
// -n/--namespace and --kubeconfig; every mutation takes --dry-run, which prints what would change and changes nothing.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import { API_VERSION, PLURAL } from '../api/types.js';
import { isStatus, KubeApi } from '../runtime/kubernetes/kube-api.js';
import { maintenanceRequestValue, RECORDS_ANNOTATION, REQUESTS, requestsOf, SUSPENDED } from '../runtime/kubernetes/kube-records.js';
import { CLUSTER_LABEL, memberClientURL, memberHost } from '../runtime/kubernetes/manifests.js';
import { quotaBytes } from '../api/maintenance.js';
import { MemberClient } from '../members/index.js';
import { disarmDecision, moveLeaderDecision, restartDecision } from '../planner/oncall.js';
import { hexMemberId } from '../api/member-id.js';
import { describeStep } from '../planner/steps.js';
import type { RestartRequest } from '../planner/types.js';
import { observedOf } from './recover-kube.js';
import { parseArgs, UsageError } from './args.js';
import { REPORT_LOG_LINES } from './oncall.js';
import { contextNamespace, gatherView, loadKubeConfig, pinHosts, renderView, StatusError, type ClusterView } from './status-view.js';
import { tarArchive, type TarEntry } from './tar.js';
import { upgradePlanText } from './upgrade-plan.js';
import { parseRecords } from '../planner/records.js';
import { withDefaults } from '../api/validate.js';
import type { SvcClusterSpec } from '../api/types.js';

const [GROUP, VERSION] = API_VERSION.split('/');

/** The kubectl verbs of this file: their usage after `kubectl svc`. */
export const KUBE_ONCALL_USAGE: Record<string, string> = {
  suspend: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      break-glass: annotation svc.dev/reconcile: suspended; the operator changes nothing (status, conditions and Events keep flowing; condition Suspended)',
  resume: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      removes the annotation: what was held back carries on',
  defrag: '<cluster> [MEMBER] [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      asks for a defragmentation of every member (or MEMBER): annotation svc.dev/maintenance-request; the operator defragments one member at a time through its gates (Events MemberDefragmented)',
  compact: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      asks for a compaction of the history, keeping what spec.maintenance.autoCompaction keeps (annotation svc.dev/maintenance-request)',
  'move-leader': '<cluster> [--to MEMBER] [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      asks for leadership to move to MEMBER (else the most up-to-date follower): annotation svc.dev/maintenance-request; the operator moves it once every member is healthy and caught up (Event MoveLeader)',
  restart: '<cluster> [MEMBER] [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      a rolling restart of every member (or MEMBER): annotation svc.dev/restart-request; the operator restarts each once, followers first, the leader last after moving leadership (reason RestartRequested)',
  alarm: 'list|disarm <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      the alarms the members raised; disarm is refused while a cause persists (NOSPACE: a database still over the quota; CORRUPT: KV hashes that differ)',
  'upgrade-plan': '<cluster> [--to VERSION] [-n NAMESPACE] [--kubeconfig FILE]\n      the hops from the release the members run to VERSION (else spec.version) and the checks each begins with, read from the members; exit 1 when one refuses; changes nothing',
  report: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--file F.tar.gz] [--dry-run]\n      one archive for a bug report: the resource and status, Events, owned objects, each member\'s status, the last logs of members and operator',
};

/** Runs `kubectl svc <verb> ...` for the verbs of KUBE_ONCALL_USAGE; resolves with the exit code. */
export async function kubeOnCallMain(argv: string[], out: (s: string) => void = (s) => void process.stdout.write(s)): Promise<number> {
  const verb = argv[0];
  try {
    const { words, flags } = parseArgs(argv.slice(1), { string: ['namespace', 'kubeconfig', ...(verb === 'report' ? ['file'] : []), ...(verb === 'move-leader' || verb === 'upgrade-plan' ? ['to'] : [])], boolean: ['dry-run'] });
    const sub = verb === 'alarm' ? words.shift() : undefined;
    if (verb === 'alarm' && sub !== 'list' && sub !== 'disarm') throw new UsageError('alarm needs list or disarm, then the SvcCluster name');
    const withMember = verb === 'defrag' || verb === 'restart';
    if (words.length < 1 || words.length > (withMember ? 2 : 1)) throw new UsageError(withMember ? `${verb} needs the SvcCluster name and at most one member` : `${verb} needs exactly one SvcCluster name`);
    const name = words[0];
    const kc = loadKubeConfig(flags.get('kubeconfig'));
    const namespace = flags.get('namespace') ?? contextNamespace(kc);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    let stored: { metadata: k8s.V1ObjectMeta; spec?: unknown; status?: unknown };
    try {
      stored = await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }) as typeof stored;
    } catch (e) {
      if (isStatus(e, 404)) throw new StatusError(`no SvcCluster "${name}" in namespace "${namespace}" (kubectl get svcc -A lists them)`);
      throw e;
    }
    if (verb === 'upgrade-plan') {
      const view = await gatherView(kc, namespace, name);
      const records = parseRecords(stored.metadata.annotations?.[RECORDS_ANNOTATION]) ?? {};
      const r = upgradePlanText(`${namespace}/${name}`, withDefaults(stored.spec as SvcClusterSpec), observedOf(view), records.progress, flags.get('to'));
      out(r.text);
      return r.ok ? 0 : 1;
    }
    if (verb === 'report') return await report(kc, namespace, name, stored, flags.get('file'), flags.has('dry-run'), out);
    if (verb === 'defrag' || verb === 'compact') return await askMaintenance(kc, verb, namespace, name, words[1], stored, flags.has('dry-run'), out);
    const target = { namespace, name, uid: stored.metadata.uid ?? '' };
    if (verb === 'restart') return await askRestart(kc, namespace, name, words[1], flags.has('dry-run'), out);
    if (verb === 'move-leader') return await moveLeader(kc, namespace, name, flags.get('to'), flags.has('dry-run'), out);
    if (sub === 'list' || sub === 'disarm') return await alarm(kc, target, sub, flags.has('dry-run'), out);
    const on = verb === 'suspend';
    const now = requestsOf(stored.metadata.annotations ?? {}).suspended === true;
    if (now === on) {
      out(`${namespace}/${name} is already ${on ? 'suspended' : 'not suspended'}; nothing to do\n`);
      return 0;
    }
    if (flags.has('dry-run')) {
      out(`dry run: would ${on ? `set the annotation ${REQUESTS.suspended.annotation}=${SUSPENDED} on` : `remove the annotation ${REQUESTS.suspended.annotation} from`} ${namespace}/${name}; nothing was changed\n`);
      return 0;
    }
    await new KubeApi(kc).patchClusterAnnotation(namespace, name, REQUESTS.suspended.annotation, on ? SUSPENDED : null);
    out(on
      ? `${namespace}/${name} suspended: the operator changes nothing until \`kubectl svc resume ${name} -n ${namespace}\` (condition Suspended; status and Events keep flowing)\n`
      : `${namespace}/${name} resumed: the operator carries on with what was held back\n`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`kubectl svc ${verb}: ${e.message}\nusage: kubectl svc ${verb} ${KUBE_ONCALL_USAGE[verb]}\n`);
      return 2;
    }
    process.stderr.write(`kubectl svc ${verb}: ${(e as Error).message}\n`);
    return 1;
  }
}

/**
 * `kubectl svc defrag|compact`: the annotation svc.dev/maintenance-request with a new token (the operator carries the
 * round out through the planner's gates and reports each member with an Event). A member the status does not list is
 * refused, nothing changed.
 */
async function askMaintenance(kc: k8s.KubeConfig, action: 'defrag' | 'compact', namespace: string, name: string, member: string | undefined, stored: { status?: unknown }, dryRun: boolean, out: (s: string) => void): Promise<number> {
  const members = ((stored.status as { members?: Array<{ name: string }> } | undefined)?.members ?? []).map((m) => m.name);
  if (member !== undefined && members.length > 0 && !members.includes(member)) {
    throw new StatusError(`cannot defragment ${member}: no member ${member} in ${namespace}/${name} (members: ${members.join(', ')}); nothing was changed`);
  }
  const what = action === 'compact' ? 'a compaction' : `a defragmentation of ${member ?? 'every member'}`;
  const value = maintenanceRequestValue({ token: new Date().toISOString(), action, ...(member !== undefined ? { member } : {}) });
  if (dryRun) {
    out(`dry run: would ask for ${what} of ${namespace}/${name} (annotation ${REQUESTS.maintenance.annotation}=${value}); nothing was changed\n`);
    return 0;
  }
  await new KubeApi(kc).patchClusterAnnotation(namespace, name, REQUESTS.maintenance.annotation, value);
  out(`asked for ${what} of ${namespace}/${name}: the operator carries it out one member at a time once every member is healthy and caught up (Events ${action === 'compact' ? 'Compact' : 'MemberDefragmented'})\n`);
  return 0;
}

/**
 * A member client that reaches the members of `view` as the view read them (their pod addresses pinned to the names
 * their certificates carry, the cluster's client certificate), and each member's client URL.
 */
async function withMembers<T>(view: ClusterView, fn: (client: MemberClient, url: (member: string) => string) => Promise<T>): Promise<T> {
  const ref = { name: view.name, namespace: view.namespace, spec: view.spec };
  const unpin = pinHosts(new Map(view.members.filter((m) => m.podIP).map((m) => [memberHost(view.name, view.namespace, m.name), m.podIP!])));
  const client = new MemberClient({ timeoutMs: 5000, attempts: 2, ...(view.memberTls ? { tls: view.memberTls } : {}) });
  try {
    return await fn(client, (m) => memberClientURL(ref, m));
  } finally {
    client.close();
    unpin();
  }
}

/**
 * `kubectl svc restart <cluster> [MEMBER]`: the annotation svc.dev/restart-request (the RestartRequest the local
 * runtime keeps in its state file); the operator restarts each member named once through its gates. A member the
 * cluster does not have, or a suspended cluster, is refused with nothing changed.
 */
async function askRestart(kc: k8s.KubeConfig, namespace: string, name: string, member: string | undefined, dryRun: boolean, out: (s: string) => void): Promise<number> {
  const d = restartDecision(observedOf(await gatherView(kc, namespace, name)), member);
  if ('refused' in d) throw new StatusError(`cannot restart ${member ?? `${namespace}/${name}`}: ${d.refused}; nothing was changed`);
  const request: RestartRequest = { token: new Date().toISOString(), members: d.members };
  const how = 'one at a time (followers first, the leader last after moving leadership; each once every member is healthy and caught up; reason RestartRequested)';
  if (dryRun) {
    out(`dry run: would restart ${d.members.join(', ')} ${how} (annotation ${REQUESTS.restart.annotation}=${JSON.stringify(request)}); nothing was changed\n`);
    return 0;
  }
  await new KubeApi(kc).patchClusterAnnotation(namespace, name, REQUESTS.restart.annotation, JSON.stringify(request));
  out(`asked for a restart of ${d.members.join(', ')}: the operator restarts them ${how}; \`kubectl svc status ${name} -n ${namespace}\` follows it\n`);
  return 0;
}

/** How long `move-leader` waits for the new leader to say so (the request stands after it). */
const MOVE_LEADER_WAIT_MS = 30_000;

/**
 * `kubectl svc move-leader <cluster> [--to MEMBER]`: decided by the planner's on-call rule on the members as read
 * live (every member healthy and caught up, not suspended; a member that does not exist or leads already refused),
 * then asked for through the svc.dev/maintenance-request annotation naming the member decided: the operator records
 * the request answered and moves leadership through the same gate. Waits for the new leader to say so.
 */
async function moveLeader(kc: k8s.KubeConfig, namespace: string, name: string, to: string | undefined, dryRun: boolean, out: (s: string) => void): Promise<number> {
  const view = await gatherView(kc, namespace, name);
  const d = moveLeaderDecision(observedOf(view), to);
  if ('refused' in d) throw new StatusError(`cannot move the leader of ${namespace}/${name}: ${d.refused}; nothing was changed`);
  const step = d.step;
  if (step.kind !== 'moveLeader') throw new Error(`unexpected step ${step.kind}`);
  const value = maintenanceRequestValue({ token: new Date().toISOString(), action: 'move-leader', member: step.to });
  if (dryRun) {
    out(`dry run: would ${describeStep(step)} (annotation ${REQUESTS.maintenance.annotation}=${value}); nothing was changed\n`);
    return 0;
  }
  await new KubeApi(kc).patchClusterAnnotation(namespace, name, REQUESTS.maintenance.annotation, value);
  return withMembers(view, async (client, url) => {
    const deadline = Date.now() + MOVE_LEADER_WAIT_MS;
    while (Date.now() < deadline) {
      if (await client.isLeader(url(step.to)).catch(() => false)) {
        out(`${describeStep(step)}: ${step.to} leads\n`);
        return 0;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    out(`asked to ${describeStep(step)}; ${step.to} does not lead yet after ${MOVE_LEADER_WAIT_MS / 1000} s: the operator moves it once every member is healthy and caught up (Event MoveLeader); \`kubectl svc status ${name} -n ${namespace}\` shows who leads\n`);
    return 0;
  });
}

/**
 * `kubectl svc alarm list|disarm <cluster>`: the alarms as the members report them; disarm decided by the planner's
 * rule (refused while a cause persists), recorded as an Event on the SvcCluster, then sent to a member.
 */
async function alarm(kc: k8s.KubeConfig, target: { namespace: string; name: string; uid: string }, sub: 'list' | 'disarm', dryRun: boolean, out: (s: string) => void): Promise<number> {
  const { namespace, name } = target;
  const view = await gatherView(kc, namespace, name);
  const observed = observedOf(view);
  const byId = (id: string) => observed.members.find((m) => m.id === id)?.name ?? (id === '0' ? 'the cluster' : `member ${hexMemberId(id)}`);
  return withMembers(view, async (client, url) => {
    const answering = view.members.filter((m) => m.reachable).sort((a, b) => Number(b.role === 'leader') - Number(a.role === 'leader')).map((m) => url(m.name));
    let alarms: Array<{ memberId: string; alarm: string }> | undefined;
    for (const u of answering) {
      alarms = await client.alarms(u).catch(() => undefined);
      if (alarms) break;
    }
    if (!alarms) throw new StatusError(`no member of ${namespace}/${name} answered the alarm list; \`kubectl svc status ${name} -n ${namespace}\` shows which members answer`);
    if (sub === 'list') {
      out(alarms.length === 0 ? `no alarm raised in ${namespace}/${name}\n` : alarms.map((a) => `${a.alarm}\t${byId(a.memberId)}\n`).join(''));
      return 0;
    }
    const dbSizes = Object.fromEntries(view.members.filter((m) => m.dbSize !== undefined).map((m) => [m.name, m.dbSize!]));
    const dbSizesInUse = Object.fromEntries(view.members.filter((m) => m.dbSizeInUse !== undefined).map((m) => [m.name, m.dbSizeInUse!]));
    const hashes: Record<string, number> = {};
    const revisions = view.members.flatMap((m) => (m.revision !== undefined ? [m.revision] : []));
    if (alarms.some((a) => a.alarm === 'CORRUPT') && revisions.length > 0) {
      const rev = Math.min(...revisions);
      for (const m of view.members) {
        const h = await client.hashKV(url(m.name), rev).catch(() => undefined);
        if (h) hashes[m.name] = h.hash;
      }
    }
    // the quota the members run with as the operator reports it (a grown volume's derived quota only once they have it)
    const d = disarmDecision({ alarms, dbSizes, dbSizesInUse, hashes, quotaBytes: view.status.maintenance?.quotaBackendBytes ?? quotaBytes(view.spec), members: view.members.map((m) => m.name) });
    if ('refused' in d) throw new StatusError(`cannot disarm in ${namespace}/${name}: ${d.refused}; nothing was changed`);
    const what = d.disarm.map((a) => `${a.alarm} (${byId(a.memberId)})`).join(', ');
    if (dryRun) {
      out(`dry run: would disarm ${what}; nothing was changed\n`);
      return 0;
    }
    await new KubeApi(kc).event(target, 'Normal', 'AlarmDisarmRequested', `disarm ${what} (kubectl svc alarm disarm)`);
    for (const a of d.disarm) await client.disarmAlarm(answering[0], a.memberId, a.alarm);
    out(`disarmed ${what}\n`);
    return 0;
  });
}

/** Writes the report archive; a part that cannot be read is an entry saying why (the archive is still written). */
async function report(kc: k8s.KubeConfig, namespace: string, name: string, stored: { metadata: k8s.V1ObjectMeta }, file: string | undefined, dryRun: boolean, out: (s: string) => void): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const policy = kc.makeApiClient(k8s.PolicyV1Api);
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  const entries: TarEntry[] = [];
  const add = async (entry: string, read: () => Promise<unknown>, asText = false) => {
    try {
      const v = await read();
      entries.push({ name: entry, data: asText ? String(v) : json(v) });
    } catch (e) {
      entries.push({ name: `${entry}.error`, data: `${(e as Error).message}\n` });
    }
  };
  const labelSelector = `${CLUSTER_LABEL}=${name}`;
  entries.push({ name: 'svccluster.json', data: json(stored) });
  await add('events.json', async () => (await core.listNamespacedEvent({ namespace })).items.filter((ev) => ev.involvedObject.name === name || ev.involvedObject.name?.startsWith(`${name}-`)));
  await add('status.txt', async () => renderView(await gatherView(kc, namespace, name)), true);
  await add('members.json', async () => (await gatherView(kc, namespace, name)).members);
  await add('objects/statefulsets.json', async () => (await apps.listNamespacedStatefulSet({ namespace, labelSelector })).items);
  await add('objects/services.json', async () => (await core.listNamespacedService({ namespace, labelSelector })).items);
  await add('objects/configmaps.json', async () => (await core.listNamespacedConfigMap({ namespace, labelSelector })).items);
  await add('objects/persistentvolumeclaims.json', async () => (await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector })).items);
  await add('objects/jobs.json', async () => (await batch.listNamespacedJob({ namespace, labelSelector })).items);
  await add('objects/poddisruptionbudgets.json', async () => (await policy.listNamespacedPodDisruptionBudget({ namespace, labelSelector })).items);
  const pods = await core.listNamespacedPod({ namespace, labelSelector }).then((l) => l.items).catch(() => [] as k8s.V1Pod[]);
  entries.push({ name: 'objects/pods.json', data: json(pods) });
  for (const p of pods) {
    const pod = p.metadata!.name!;
    await add(`logs/${pod}.log`, () => core.readNamespacedPodLog({ namespace, name: pod, container: 'svc', tailLines: REPORT_LOG_LINES }), true);
  }
  // the operator: its pods in any namespace the caller may list (the chart's label)
  const operators = await core.listPodForAllNamespaces({ labelSelector: 'app.kubernetes.io/name=svc-operator' }).then((l) => l.items).catch((e: Error) => {
    entries.push({ name: 'logs/operator.error', data: `cannot list the operator's pods: ${e.message}\n` });
    return [] as k8s.V1Pod[];
  });
  if (operators.length === 0 && !entries.some((e) => e.name === 'logs/operator.error')) {
    entries.push({ name: 'logs/operator.error', data: 'no operator pod found (label app.kubernetes.io/name=svc-operator) in the namespaces the caller may list\n' });
  }
  for (const p of operators) {
    await add(`logs/operator-${p.metadata!.namespace}-${p.metadata!.name}.log`, () => core.readNamespacedPodLog({ namespace: p.metadata!.namespace!, name: p.metadata!.name!, tailLines: REPORT_LOG_LINES }), true);
  }
  const path = resolve(file ?? `${name}-report-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`);
  if (dryRun) {
    out(`dry run: would write ${path}: ${entries.length} entries (${entries.map((e) => e.name).join(', ')}); nothing was written\n`);
    return 0;
  }
  writeFileSync(path, gzipSync(tarArchive(entries)));
  out(`${path}: ${entries.length} entries (${entries.map((e) => e.name).join(', ')})\n`);
  return 0;
}
