// The on-call verbs of the kubectl plugin that act through the SvcCluster itself: `kubectl svc suspend|resume
// <cluster>` (the break-glass annotation svc.dev/reconcile: suspended, which the operator reads at every reconcile)
// and `kubectl svc report <cluster>` (one tar.gz for a bug report). Each takes -n/--namespace and --kubeconfig;
// suspend and resume take --dry-run, which prints what would change and changes nothing.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import { API_VERSION, PLURAL } from '../api/types.js';
import { isStatus, KubeApi } from '../runtime/kubernetes/kube-api.js';
import { MAINTENANCE_REQUEST_ANNOTATION, maintenanceRequestValue, RECONCILE_ANNOTATION, SUSPENDED } from '../runtime/kubernetes/kube-runtime.js';
import { CLUSTER_LABEL } from '../runtime/kubernetes/manifests.js';
import { parseArgs, UsageError } from './args.js';
import { REPORT_LOG_LINES } from './oncall.js';
import { contextNamespace, gatherView, loadKubeConfig, renderView, StatusError } from './status-view.js';
import { tarArchive, type TarEntry } from './tar.js';

const [GROUP, VERSION] = API_VERSION.split('/');

/** The kubectl verbs of this file: their usage after `kubectl svc`. */
export const KUBE_ONCALL_USAGE: Record<string, string> = {
  suspend: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      break-glass: annotation svc.dev/reconcile: suspended; the operator changes nothing (status, conditions and Events keep flowing; condition Suspended)',
  resume: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      removes the annotation: what was held back carries on',
  defrag: '<cluster> [MEMBER] [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      asks for a defragmentation of every member (or MEMBER): annotation svc.dev/maintenance-request; the operator defragments one member at a time through its gates (Events MemberDefragmented)',
  compact: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run]\n      asks for a compaction of the history, keeping what spec.maintenance.autoCompaction keeps (annotation svc.dev/maintenance-request)',
  report: '<cluster> [-n NAMESPACE] [--kubeconfig FILE] [--file F.tar.gz]\n      one archive for a bug report: the resource and status, Events, owned objects, each member\'s status, the last logs of members and operator',
};

/** Runs `kubectl svc <verb> ...` for the verbs of KUBE_ONCALL_USAGE; resolves with the exit code. */
export async function kubeOnCallMain(argv: string[], out: (s: string) => void = (s) => void process.stdout.write(s)): Promise<number> {
  const verb = argv[0];
  try {
    const { words, flags } = parseArgs(argv.slice(1), { string: ['namespace', 'kubeconfig', ...(verb === 'report' ? ['file'] : [])], boolean: verb === 'report' ? [] : ['dry-run'] });
    if (words.length < 1 || words.length > (verb === 'defrag' ? 2 : 1)) throw new UsageError(verb === 'defrag' ? 'defrag needs the SvcCluster name and at most one member' : `${verb} needs exactly one SvcCluster name`);
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
    if (verb === 'report') return await report(kc, namespace, name, stored, flags.get('file'), out);
    if (verb === 'defrag' || verb === 'compact') return await askMaintenance(kc, verb, namespace, name, words[1], stored, flags.has('dry-run'), out);
    const on = verb === 'suspend';
    const now = stored.metadata.annotations?.[RECONCILE_ANNOTATION] === SUSPENDED;
    if (now === on) {
      out(`${namespace}/${name} is already ${on ? 'suspended' : 'not suspended'}; nothing to do\n`);
      return 0;
    }
    if (flags.has('dry-run')) {
      out(`dry run: would ${on ? `set the annotation ${RECONCILE_ANNOTATION}=${SUSPENDED} on` : `remove the annotation ${RECONCILE_ANNOTATION} from`} ${namespace}/${name}; nothing was changed\n`);
      return 0;
    }
    await new KubeApi(kc).patchClusterAnnotation(namespace, name, RECONCILE_ANNOTATION, on ? SUSPENDED : null);
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
    out(`dry run: would ask for ${what} of ${namespace}/${name} (annotation ${MAINTENANCE_REQUEST_ANNOTATION}=${value}); nothing was changed\n`);
    return 0;
  }
  await new KubeApi(kc).patchClusterAnnotation(namespace, name, MAINTENANCE_REQUEST_ANNOTATION, value);
  out(`asked for ${what} of ${namespace}/${name}: the operator carries it out one member at a time once every member is healthy and caught up (Events ${action === 'compact' ? 'Compact' : 'MemberDefragmented'})\n`);
  return 0;
}

/** Writes the report archive; a part that cannot be read is an entry saying why (the archive is still written). */
async function report(kc: k8s.KubeConfig, namespace: string, name: string, stored: { metadata: k8s.V1ObjectMeta }, file: string | undefined, out: (s: string) => void): Promise<number> {
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
  writeFileSync(path, gzipSync(tarArchive(entries)));
  out(`${path}: ${entries.length} entries (${entries.map((e) => e.name).join(', ')})\n`);
  return 0;
}
