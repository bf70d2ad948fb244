// kubectl svc backups <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--output json]
//   the restore points in each object-store destination of an SvcCluster (spec.backup.destinations[].s3, and its
//   spec.restore.source): every full snapshot, the oldest and newest restorable revision and time. The bucket is
//   listed from here with the credentials of the Secrets the destinations name (read as the kubeconfig's user: get
//   secrets in the namespace). The same listing as `svc-operator local backups` (backups-view.ts).
// Exit codes: 0 listed, 1 no such cluster or a destination that cannot be listed, 2 usage.
import * as k8s from '@kubernetes/client-node';
import { API_VERSION, PLURAL, type SvcClusterSpec } from '../api/types.js';
import { restoreSourcePoints, s3Destinations } from '../backup/destinations/index.js';
import { isStatus } from '../runtime/kubernetes/kube-api.js';
import { kubeDestinationAccess } from '../runtime/kubernetes/destination-access.js';
import { memberClientURL } from '../runtime/kubernetes/manifests.js';
import { parseArgs, UsageError } from './args.js';
import { backupSources, listBackups, namedMembers, printBackups } from './backups-view.js';
import { contextNamespace, loadKubeConfig } from './status-view.js';

const [GROUP, VERSION] = API_VERSION.split('/');

/** Usage after `kubectl svc`. */
export const BACKUPS_USAGE = 'backups <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--output json]\n      the restore points in each object-store destination (and spec.restore.source): every full snapshot, the oldest and newest restorable revision and time';

/** Runs `kubectl svc backups ...` (argv[0] is `backups`); resolves with the exit code. */
export async function kubeBackupsMain(argv: string[], out: (s: string) => void = (s) => void process.stdout.write(s)): Promise<number> {
  // the S3 SDK's notice about future Node releases is not the user's business here (as svc-operator's main.ts)
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  try {
    const { words, flags } = parseArgs(argv.slice(1), { string: ['namespace', 'kubeconfig', 'output'] });
    if (words.length !== 1) throw new UsageError('backups needs exactly one SvcCluster name');
    const output = flags.get('output');
    if (output !== undefined && output !== 'json') throw new UsageError('--output takes json');
    const name = words[0];
    const kc = loadKubeConfig(flags.get('kubeconfig'));
    const namespace = flags.get('namespace') ?? contextNamespace(kc);
    let spec: SvcClusterSpec;
    try {
      spec = (await kc.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }) as { spec: SvcClusterSpec }).spec;
    } catch (e) {
      if (isStatus(e, 404)) {
        process.stderr.write(`kubectl svc: no SvcCluster "${name}" in namespace "${namespace}" (kubectl get svcc -A lists them)\n`);
        return 1;
      }
      throw e;
    }
    const dests = [...s3Destinations(spec).map((d) => d.s3), ...(spec.restore?.source?.s3 ? [spec.restore.source.s3] : [])];
    const access = await kubeDestinationAccess(kc.makeApiClient(k8s.CoreV1Api), namespace, dests);
    const listed = await listBackups(name, backupSources(name, spec, true), (restore) => restoreSourcePoints(restore, spec, access));
    // the agent's older snapshots name the member's client host:port (the agent's --endpoints): by pod name
    const pods = Array.from({ length: 7 }, (_, i) => `${name}-${i}`); // spec.replicas is at most 7
    const listings = namedMembers(listed, new Map(pods.map((pod) => [new URL(memberClientURL({ name, namespace, spec }, pod)).host, pod])));
    printBackups(out, name, listings, output, `${namespace}/${name} has no object-store destinations (spec.backup.destinations[].s3 or spec.restore.source.s3); its claim's backups: kubectl svc status ${name} -n ${namespace}`);
    return listings.some((l) => l.error) ? 1 : 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`kubectl svc: ${e.message}\nusage: kubectl svc ${BACKUPS_USAGE}\n`);
      return 2;
    }
    process.stderr.write(`kubectl svc: ${(e as Error).message}\n`);
    return 1;
  }
}
