// Continuous backup on Kubernetes: the backup agent (runtime/backup-agent.ts) runs as a Deployment
// `<cluster>-backup-agent` of the operator's image (`svc-operator backup-agent`, cli/backup-agent.ts), owned by the
// SvcCluster. What runs is a pure function of the spec (agentReplicas, agentDeployment: unit-tested); the controller
// applies it after each pass, or deletes it once continuous backup is off, as the local runtime starts and stops its
// child process after `local apply`.
import type { SvcClusterSpec } from '../../api/types.js';
import { JOB_SECRETS_MOUNT, s3Destinations } from '../../backup/destinations/index.js';
import { CONTAINER_SECURITY, POD_SECURITY, memberClientURL, owned, type ClusterRef, type KubeObject } from './manifests.js';

/** The Deployment's name: `<cluster>-backup-agent` (a cluster name is at most 63 - 13 characters here). */
export function agentName(cluster: string): string {
  return `${cluster.slice(0, 63 - '-backup-agent'.length).replace(/-+$/, '')}-backup-agent`;
}

/** Where a TLS cluster's client Secret is mounted in the agent (as in the backup Jobs). */
const CLIENT_TLS_MOUNT = '/etc/svc/client-tls';
/** Where full snapshots are staged (an emptyDir: the root filesystem is read-only). */
const WORK_MOUNT = '/work';

/**
 * The agent's replicas, or undefined when there is no agent (continuous backup off: the Deployment is deleted).
 * Hibernated: 0, the Deployment kept (nothing to watch; it resumes from the bucket on wake). A suspended cluster's
 * agent is left as it is: suspension stops the operator's changes, and the agent only reads the cluster.
 */
export function agentReplicas(spec: Pick<SvcClusterSpec, 'backup' | 'replicas'>, hibernated: boolean): 0 | 1 | undefined {
  if (spec.backup?.continuous !== true) return undefined;
  return hibernated || spec.replicas === 0 ? 0 : 1;
}

/**
 * The agent's Deployment: the members' client URLs (it snapshots the leader), the s3 destinations as JSON, their
 * Secrets (credentials, CA bundles) mounted under SVC_OPERATOR_SECRETS_DIR as the agent reads them, the client
 * certificate of a TLS cluster as the backup Jobs mount it. Recreate: never two agents writing segments at once.
 */
export function agentDeployment(c: ClusterRef, image: string, replicas: 0 | 1): KubeObject {
  const spec = c.spec;
  const dests = s3Destinations(spec);
  const secrets = [...new Set(dests.flatMap((d) => [d.s3.credentialsSecret, d.s3.caSecret]).filter((n): n is string => n !== undefined))].sort();
  const members = Array.from({ length: Math.max(1, spec.replicas) }, (_, i) => memberClientURL(c, `${c.name}-${i}`));
  const args = [
    'backup-agent', `--cluster=${c.name}`, `--endpoints=${members.join(',')}`, `--destinations=${JSON.stringify(dests)}`,
    `--release=${spec.version}`, `--work-dir=${WORK_MOUNT}/agent`,
    ...(spec.backup?.keep !== undefined ? [`--keep=${spec.backup.keep}`] : []),
    ...(spec.backup?.maxAge !== undefined ? [`--max-age=${spec.backup.maxAge}`] : []),
  ];
  const volumes: object[] = [{ name: 'work', emptyDir: {} }, ...secrets.map((s, i) => ({ name: `secret-${i}`, secret: { secretName: s } }))];
  const mounts: object[] = [{ name: 'work', mountPath: WORK_MOUNT }, ...secrets.map((s, i) => ({ name: `secret-${i}`, mountPath: `${JOB_SECRETS_MOUNT}/${s}`, readOnly: true }))];
  const clientSecret = spec.tls?.clientSecret;
  if (clientSecret) {
    volumes.push({ name: 'client-tls', secret: { secretName: clientSecret } });
    mounts.push({ name: 'client-tls', mountPath: CLIENT_TLS_MOUNT, readOnly: true });
    args.push(`--cacert=${CLIENT_TLS_MOUNT}/ca.crt`, `--cert=${CLIENT_TLS_MOUNT}/tls.crt`, `--key=${CLIENT_TLS_MOUNT}/tls.key`);
  }
  const podLabels = { 'app.kubernetes.io/name': 'svc-backup-agent', 'app.kubernetes.io/instance': c.name, 'app.kubernetes.io/managed-by': 'svc-operator' };
  const pt = spec.podTemplate;
  return owned(c, 'apps/v1', 'Deployment', agentName(c.name), {
    spec: {
      replicas,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: { 'app.kubernetes.io/name': 'svc-backup-agent', 'app.kubernetes.io/instance': c.name } },
      template: {
        metadata: { labels: podLabels },
        spec: {
          automountServiceAccountToken: false,
          securityContext: POD_SECURITY,
          // SIGTERM: the agent writes its pending segment and exits
          terminationGracePeriodSeconds: 30,
          containers: [{
            name: 'backup-agent',
            image,
            command: ['svc-operator'],
            args,
            env: [{ name: 'SVC_OPERATOR_SECRETS_DIR', value: JOB_SECRETS_MOUNT }],
            volumeMounts: mounts,
            securityContext: CONTAINER_SECURITY,
          }],
          volumes,
          ...(pt?.nodeSelector ? { nodeSelector: pt.nodeSelector } : {}),
          ...(pt?.tolerations ? { tolerations: pt.tolerations } : {}),
          ...(spec.image?.pullSecrets ? { imagePullSecrets: spec.image.pullSecrets.map((n) => ({ name: n })) } : {}),
        },
      },
    },
  }, { labels: { 'app.kubernetes.io/component': 'backup-agent' } });
}
