// The objects an SvcCluster owns, built from its spec: pure functions, no API calls. The StatefulSet's image
// is an argument, not spec.version: the template moves to a new release only when the upgrade says so.
import { createHash } from 'node:crypto';
import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';
import { API_VERSION, KIND, type SvcClusterSpec } from '../../api/types.js';

/** The identity of an SvcCluster that owned objects need. */
export interface ClusterRef {
  name: string;
  namespace: string;
  uid: string;
  spec: SvcClusterSpec;
  /**
   * Set once the cluster was scaled: the initial cluster (member names, itself last) of the member that joined
   * last. New members start with it and --initial-cluster-state=existing; members with data ignore both.
   */
  join?: string[];
  /** Fingerprint of the TLS Secrets' contents: a renewed certificate changes it (and so rolls the members). */
  tlsHash?: string;
}

/** A Kubernetes object as applied (apiVersion, kind, metadata, the rest). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: object[] };
  [field: string]: unknown;
}

export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;
/** Plain-http /health and /metrics of TLS members (--listen-metrics-urls): probes carry no client certificate. */
export const METRICS_PORT = 2381;
/** Pod template annotation: hash of the members' configuration without the release (a change is rolled out). */
export const CONFIG_HASH_ANNOTATION = 'svc.dev/config-hash';
/** Pod template annotation: fingerprint of the TLS Secrets the pod started with (a renewal is rolled out). */
export const TLS_HASH_ANNOTATION = 'svc.dev/tls-hash';
/** Annotation holding the hash of what the operator last applied (equal hash: nothing to write). */
export const HASH_ANNOTATION = 'svc.dev/applied-hash';
/** Label every owned object carries: the SvcCluster's name. */
export const CLUSTER_LABEL = 'svc.dev/cluster';
export const MANAGED_BY = 'app.kubernetes.io/managed-by=svc-operator';
/** Data dir mount of the members. */
const DATA_MOUNT = '/var/lib/svc';
/** SIGTERM grace: a leader hands leadership over before it exits. */
export const TERMINATION_GRACE_SECONDS = 30;

const scheme = (secret: string | undefined): string => (secret ? 'https' : 'http');

/** Labels that select the member pods of a cluster. */
export function selectorLabels(name: string): Record<string, string> {
  return { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/instance': name };
}

function labels(name: string): Record<string, string> {
  return { ...selectorLabels(name), 'app.kubernetes.io/managed-by': 'svc-operator', [CLUSTER_LABEL]: name };
}

/**
 * Where members go unless spec.podTemplate.affinity says otherwise (it replaces this whole): preferably each on its
 * own node, then in its own zone, so that losing a node (or a zone) costs at most one member and quorum survives.
 * Preferred, not required: a one-node cluster still schedules every member.
 */
export function defaultAffinity(cluster: string): object {
  const term = (topologyKey: string) => ({ labelSelector: { matchLabels: selectorLabels(cluster) }, topologyKey });
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, podAffinityTerm: term('kubernetes.io/hostname') },
        { weight: 50, podAffinityTerm: term('topology.kubernetes.io/zone') },
      ],
    },
  };
}

/** Headless Service of the peers (its name is the pods' DNS subdomain). */
export const peerServiceName = (cluster: string): string => cluster;
/** Client Service. */
export const clientServiceName = (cluster: string): string => `${cluster}-client`;
export const configMapName = (cluster: string): string => `${cluster}-config`;

/** Stable DNS name of member `pod`. */
export function memberHost(cluster: string, namespace: string, pod: string): string {
  return `${pod}.${peerServiceName(cluster)}.${namespace}.svc`;
}

/** Peer URL of member `pod`. */
export function memberPeerURL(c: Pick<ClusterRef, 'name' | 'namespace' | 'spec'>, pod: string): string {
  return `${scheme(c.spec.tls?.peerSecret)}://${memberHost(c.name, c.namespace, pod)}:${PEER_PORT}`;
}

/** Client URL of member `pod`. */
export function memberClientURL(c: Pick<ClusterRef, 'name' | 'namespace' | 'spec'>, pod: string): string {
  return `${scheme(c.spec.tls?.clientSecret)}://${memberHost(c.name, c.namespace, pod)}:${CLIENT_PORT}`;
}

/** Image of the members for `version`. */
export function memberImage(spec: SvcClusterSpec, version: string): string {
  return `${spec.image?.repository ?? 'svc'}:v${version}`;
}

/**
 * Pod Security `restricted`, which member and Job pods meet: a fixed non-root user (the image's), the runtime's
 * default seccomp profile, and volumes chowned to the group only when their root is not already its.
 */
export const POD_SECURITY: V1PodSecurityContext = {
  runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
};
/** The container half of `restricted`. */
export const CONTAINER_SECURITY: V1SecurityContext = {
  allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, runAsNonRoot: true,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** Release of an image "repo:v<x.y.z>"; undefined for other tags. */
export function versionOfImage(image: string | undefined): string | undefined {
  const m = image === undefined ? null : /:v(\d+\.\d+\.\d+)$/.exec(image);
  return m ? m[1] : undefined;
}

function owned(c: ClusterRef, apiVersion: string, kind: string, name: string, rest: Record<string, unknown>): KubeObject {
  const obj: KubeObject = {
    apiVersion, kind,
    metadata: {
      name, namespace: c.namespace, labels: labels(c.name),
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: c.name, uid: c.uid, controller: true, blockOwnerDeletion: true }],
    },
    ...rest,
  };
  obj.metadata.annotations = { [HASH_ANNOTATION]: createHash('sha256').update(JSON.stringify(obj)).digest('hex').slice(0, 16) };
  return obj;
}

function configMap(c: ClusterRef): KubeObject {
  const { name, namespace, spec } = c;
  const peer = scheme(spec.tls?.peerSecret);
  const names = c.join ?? Array.from({ length: spec.replicas }, (_, i) => `${name}-${i}`);
  const initialCluster = names.map((n) => `${n}=${peer}://${memberHost(name, namespace, n)}:${PEER_PORT}`).join(',');
  return owned(c, 'v1', 'ConfigMap', configMapName(name), {
    data: {
      INITIAL_CLUSTER: initialCluster,
      INITIAL_CLUSTER_STATE: c.join ? 'existing' : 'new',
      INITIAL_CLUSTER_TOKEN: `${namespace}-${name}`,
      ...(spec.enableV2 !== undefined ? { ENABLE_V2: String(spec.enableV2) } : {}),
      ...(spec.logging?.logger ? { LOGGER: spec.logging.logger } : {}),
      ...(spec.logging?.level ? { LOG_LEVEL: spec.logging.level } : {}),
    },
  });
}

function statefulSet(c: ClusterRef, version: string): KubeObject {
  const { name, spec } = c;
  const client = scheme(spec.tls?.clientSecret);
  const peer = scheme(spec.tls?.peerSecret);
  const host = `$(POD_NAME).${peerServiceName(name)}.$(POD_NAMESPACE).svc`;
  const fromConfig = (env: string) => ({ name: env, valueFrom: { configMapKeyRef: { name: configMapName(name), key: env } } });
  const args = [
    '--name=$(POD_NAME)', `--data-dir=${DATA_MOUNT}/data`,
    `--listen-client-urls=${client}://0.0.0.0:${CLIENT_PORT}`, `--advertise-client-urls=${client}://${host}:${CLIENT_PORT}`,
    `--listen-peer-urls=${peer}://0.0.0.0:${PEER_PORT}`, `--initial-advertise-peer-urls=${peer}://${host}:${PEER_PORT}`,
    '--initial-cluster=$(INITIAL_CLUSTER)', '--initial-cluster-token=$(INITIAL_CLUSTER_TOKEN)', '--initial-cluster-state=$(INITIAL_CLUSTER_STATE)',
  ];
  // only what the spec sets: each release keeps its own defaults (and 3.3 has no --logger)
  const optional: Array<[string, string]> = [];
  if (spec.enableV2 !== undefined) optional.push(['ENABLE_V2', '--enable-v2=$(ENABLE_V2)']);
  if (spec.logging?.logger) optional.push(['LOGGER', '--logger=$(LOGGER)']);
  if (spec.logging?.level) optional.push(['LOG_LEVEL', '--log-level=$(LOG_LEVEL)']);
  args.push(...optional.map(([, flag]) => flag));
  const volumes: object[] = [];
  const mounts: object[] = [{ name: 'data', mountPath: DATA_MOUNT }];
  if (spec.tls?.clientSecret) {
    volumes.push({ name: 'client-tls', secret: { secretName: spec.tls.clientSecret } });
    mounts.push({ name: 'client-tls', mountPath: '/etc/svc/client-tls', readOnly: true });
    args.push('--cert-file=/etc/svc/client-tls/tls.crt', '--key-file=/etc/svc/client-tls/tls.key', '--trusted-ca-file=/etc/svc/client-tls/ca.crt', '--client-cert-auth=true');
    args.push(`--listen-metrics-urls=http://0.0.0.0:${METRICS_PORT}`);
  }
  // with --client-cert-auth the kubelet cannot GET /health on the client port (no certificate): probe the
  // plain metrics port instead, as etcd's own manifests do
  const probePort = spec.tls?.clientSecret ? { port: 'metrics', scheme: 'HTTP' } : { port: 'client', scheme: client.toUpperCase() };
  if (spec.tls?.peerSecret) {
    volumes.push({ name: 'peer-tls', secret: { secretName: spec.tls.peerSecret } });
    mounts.push({ name: 'peer-tls', mountPath: '/etc/svc/peer-tls', readOnly: true });
    args.push('--peer-cert-file=/etc/svc/peer-tls/tls.crt', '--peer-key-file=/etc/svc/peer-tls/tls.key', '--peer-trusted-ca-file=/etc/svc/peer-tls/ca.crt', '--peer-client-cert-auth=true');
  }
  const pt = spec.podTemplate ?? {};
  const podSpec: Record<string, unknown> = {
    terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
    securityContext: POD_SECURITY,
    containers: [{
      name: 'svc',
      image: memberImage(spec, version),
      imagePullPolicy: spec.image?.pullPolicy ?? 'IfNotPresent',
      args,
      ports: [{ name: 'client', containerPort: CLIENT_PORT }, { name: 'peer', containerPort: PEER_PORT },
        ...(spec.tls?.clientSecret ? [{ name: 'metrics', containerPort: METRICS_PORT }] : [])],
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        fromConfig('INITIAL_CLUSTER'), fromConfig('INITIAL_CLUSTER_STATE'), fromConfig('INITIAL_CLUSTER_TOKEN'), ...optional.map(([env]) => fromConfig(env)),
        ...(spec.podTemplate?.env ?? []),
      ],
      volumeMounts: mounts,
      // /health answers within svc's own 1 s health timeout: the probe waits longer so the two never race.
      // Startup and liveness only ask that the port accepts: a member of a cluster without quorum is alive, and
      // restarting it would not bring quorum back. Startup allows 5 minutes for a long WAL replay.
      readinessProbe: { httpGet: { path: '/health', ...probePort }, periodSeconds: 2, timeoutSeconds: 3, failureThreshold: 3 },
      startupProbe: { tcpSocket: { port: 'client' }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 150 },
      livenessProbe: { tcpSocket: { port: 'client' }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
      ...(spec.resources ? { resources: spec.resources } : {}),
      securityContext: CONTAINER_SECURITY,
    }],
    ...(volumes.length > 0 ? { volumes } : {}),
    affinity: pt.affinity ?? defaultAffinity(name),
    ...(pt.tolerations ? { tolerations: pt.tolerations } : {}),
    ...(pt.nodeSelector ? { nodeSelector: pt.nodeSelector } : {}),
    ...(spec.image?.pullSecrets ? { imagePullSecrets: spec.image.pullSecrets.map((n) => ({ name: n })) } : {}),
  };
  // What reaches the members besides their release: the pod spec with the release's tag blanked out, the
  // template's labels and annotations, and the ConfigMap keys the flags read (not the initial cluster: only a first
  // start reads it).
  const unversioned = JSON.stringify({ podSpec, labels: pt.labels ?? {}, ...(pt.annotations ? { annotations: pt.annotations } : {}), enableV2: spec.enableV2 ?? null, logging: spec.logging ?? null })
    .replaceAll(memberImage(spec, version), memberImage(spec, '*'));
  const annotations: Record<string, string> = { ...(pt.annotations ?? {}), [CONFIG_HASH_ANNOTATION]: createHash('sha256').update(unversioned).digest('hex').slice(0, 16) };
  if (c.tlsHash) annotations[TLS_HASH_ANNOTATION] = c.tlsHash;
  return owned(c, 'apps/v1', 'StatefulSet', name, {
    spec: {
      replicas: spec.replicas,
      serviceName: peerServiceName(name),
      // members must all start to reach quorum; OnDelete: the operator decides when a pod takes a new template
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'OnDelete' },
      // a removed member's data goes with its pod (a member re-added on old data would be refused); deleting
      // the SvcCluster keeps the data
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
      selector: { matchLabels: selectorLabels(name) },
      template: { metadata: { labels: { ...(pt.labels ?? {}), ...labels(name) }, annotations }, spec: podSpec },
      volumeClaimTemplates: [{
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: spec.storage?.size ?? '1Gi' } },
          ...(spec.storage?.storageClassName ? { storageClassName: spec.storage.storageClassName } : {}),
        },
      }],
    },
  });
}

/** Every owned object of the cluster; the StatefulSet runs `version`. Order: what others refer to first. */
export function ownedObjects(c: ClusterRef, version: string): KubeObject[] {
  const { name } = c;
  const ports = [{ name: 'client', port: CLIENT_PORT, targetPort: 'client' }, { name: 'peer', port: PEER_PORT, targetPort: 'peer' }];
  return [
    configMap(c),
    // peers must find each other before they are ready (quorum comes first), hence publishNotReadyAddresses
    owned(c, 'v1', 'Service', peerServiceName(name), {
      spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: selectorLabels(name), ports },
    }),
    owned(c, 'v1', 'Service', clientServiceName(name), {
      spec: { selector: selectorLabels(name), ports: [ports[0]] },
    }),
    owned(c, 'policy/v1', 'PodDisruptionBudget', name, {
      spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(name) } },
    }),
    statefulSet(c, version),
  ];
}

/** The revision a member pod started now would run with (the StatefulSet template's annotations). */
export function targetRevisionOf(c: ClusterRef): { config: string; tls?: string } {
  const sts = statefulSet(c, c.spec.version) as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } };
  const a = sts.spec.template.metadata.annotations;
  return { config: a[CONFIG_HASH_ANNOTATION], ...(a[TLS_HASH_ANNOTATION] ? { tls: a[TLS_HASH_ANNOTATION] } : {}) };
}
