// The objects an SvcCluster owns, built from its spec: pure functions, no API calls. The StatefulSet's image
// is an argument, not spec.version: the template moves to a new release only when the upgrade says so.
import { createHash } from 'node:crypto';
import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';
import { API_VERSION, KIND, type SvcClusterSpec } from '../../api/types.js';
import { memberArgs, memberConfig } from '../../api/member-config.js';
import { FORCE_ANNOTATION } from './kube-recovery.js';

/** The identity of an SvcCluster and its spec as stored (with defaults; never edited with what is observed). */
export interface ClusterRef {
  name: string;
  namespace: string;
  uid: string;
  spec: SvcClusterSpec;
}

/** What a pass observed that shapes the owned objects besides the spec (runtime/kubernetes/desired.ts gathers it). */
export interface LiveShape {
  /** Members the StatefulSet runs (default spec.replicas: a cluster being created). Scaling changes it one at a time. */
  replicas?: number;
  /**
   * Set once the cluster was scaled: the initial cluster (member names, itself last) of the member that joined
   * last. New members start with it and --initial-cluster-state=existing; members with data ignore both.
   */
  join?: string[];
  /** Every initial member has started once (the record document's `formed`): members with no data join (existing), never bootstrap. */
  formed?: boolean;
  /** Fingerprint of the TLS Secrets' contents: a renewed certificate changes it (and so rolls the members). */
  tlsHash?: string;
  /**
   * A quorum-loss recovery's forced start under way: the survivor's replacement pod starts with --force-new-cluster
   * (the template carries the flag and names the survivor in svc.dev/force-new-cluster only until the next step).
   */
  force?: string;
  /**
   * The token of the rolling restart asked for (svc.dev/restart-request): pods started from the template carry it in
   * svc.dev/restart-token, so a member whose pod does not is restarted once (reason RestartRequested).
   */
  restart?: string;
  /**
   * Hibernation (spec.replicas 0): the StatefulSet runs no pod and keeps every claim (whenScaled Retain while it
   * sleeps: the usual Delete would drop a removed member's data with its pod).
   */
  hibernated?: boolean;
  /**
   * The size of the StatefulSet's claim template (the members' volumes): kept until the expandVolumes step grows it,
   * and what a derived quota is computed from (a larger spec.storage.size reaches members only once they have it).
   */
  storage?: string;
}

/** The spec as members on the live volumes see it: spec.storage.size is the live claim template's until it grew. */
export function onLiveVolumes(spec: SvcClusterSpec, live: LiveShape): SvcClusterSpec {
  return live.storage === undefined ? spec : { ...spec, storage: { ...spec.storage, size: live.storage } };
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
/** Pod template annotation: the restart request (LiveShape.restart) the pod was started under. */
export const RESTART_TOKEN_ANNOTATION = 'svc.dev/restart-token';
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

/**
 * Label of a member pod the client Service selects on ("true"): the operator sets it "false" while the member is
 * defragmented (its backend blocks), so clients are not sent to it, and back after. Not in the StatefulSet's
 * selector: a pod labelled out stays the StatefulSet's.
 */
export const SERVING_LABEL = 'svc.dev/serving';

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
function versionOfImage(image: string | undefined): string | undefined {
  const m = image === undefined ? null : /:v(\d+\.\d+\.\d+)$/.exec(image);
  return m ? m[1] : undefined;
}

/** Pod template label: the release the pods run (read back instead of parsing the image tag). */
export const RELEASE_LABEL = 'svc.dev/release';

/**
 * The release of a pod or pod template: its svc.dev/release label; for pods made by an operator older than the
 * label, the image tag.
 */
export function releaseOf(o: { metadata?: { labels?: Record<string, string> }; spec?: { containers: Array<{ name: string; image?: string }> } } | undefined): string | undefined {
  return o?.metadata?.labels?.[RELEASE_LABEL] ?? versionOfImage(o?.spec?.containers.find((c) => c.name === 'svc')?.image);
}

/**
 * The revision of members of `release` (the pod template's svc.dev/config-hash): their configuration
 * (memberConfig's revision) and what of the spec shapes their pod. Not the release: that is an upgrade.
 */
export function configRevision(spec: SvcClusterSpec, release: string): string {
  // an empty block is the same as none (a field added to the spec must not roll every cluster)
  const set = <T extends object>(o: T | undefined): T | undefined => (o && Object.values(o).some((v) => v !== undefined) ? o : undefined);
  const pod = { image: set(spec.image), resources: set(spec.resources), podTemplate: set(spec.podTemplate), tls: set(spec.tls) };
  return createHash('sha256').update(JSON.stringify({ member: memberConfig(spec, release).revision, pod })).digest('hex').slice(0, 16);
}

/** Builds of the StatefulSet by this process (tests count them: one per pass). */
export const statefulSetBuilds = { count: 0 };

/** An object owned by the SvcCluster (its owner reference, the operator's labels), annotated with the hash of its content. */
export function owned(c: ClusterRef, apiVersion: string, kind: string, name: string, rest: Record<string, unknown>, extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): KubeObject {
  const obj: KubeObject = {
    apiVersion, kind,
    metadata: {
      // the operator's own labels win over the user's
      name, namespace: c.namespace, labels: { ...(extra.labels ?? {}), ...labels(c.name) },
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: c.name, uid: c.uid, controller: true, blockOwnerDeletion: true }],
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    ...rest,
  };
  obj.metadata.annotations = { ...(extra.annotations ?? {}), [HASH_ANNOTATION]: createHash('sha256').update(JSON.stringify(obj)).digest('hex').slice(0, 16) };
  return obj;
}

function configMap(c: ClusterRef, live: LiveShape): KubeObject {
  const { name, namespace, spec } = c;
  const peer = scheme(spec.tls?.peerSecret);
  const names = live.join ?? Array.from({ length: live.replicas ?? spec.replicas }, (_, i) => `${name}-${i}`);
  const initialCluster = names.map((n) => `${n}=${peer}://${memberHost(name, namespace, n)}:${PEER_PORT}`).join(',');
  return owned(c, 'v1', 'ConfigMap', configMapName(name), {
    data: {
      INITIAL_CLUSTER: initialCluster,
      INITIAL_CLUSTER_STATE: live.join || live.formed ? 'existing' : 'new',
      INITIAL_CLUSTER_TOKEN: `${namespace}-${name}`,
      // the flags are the template's own now; pods of an older operator still read these at a container restart
      ...(spec.enableV2 !== undefined ? { ENABLE_V2: String(spec.enableV2) } : {}),
      ...(spec.logging?.logger ? { LOGGER: spec.logging.logger } : {}),
      ...(spec.logging?.level ? { LOG_LEVEL: spec.logging.level } : {}),
    },
  });
}

function statefulSet(c: ClusterRef, release: string, live: LiveShape): KubeObject {
  statefulSetBuilds.count++;
  const { name, spec } = c;
  const client = scheme(spec.tls?.clientSecret);
  const peer = scheme(spec.tls?.peerSecret);
  const host = `$(POD_NAME).${peerServiceName(name)}.$(POD_NAMESPACE).svc`;
  const fromConfig = (env: string) => ({ name: env, valueFrom: { configMapKeyRef: { name: configMapName(name), key: env } } });
  const member = memberConfig(spec, release);
  const args = memberArgs({
    name: '$(POD_NAME)', dataDir: `${DATA_MOUNT}/data`,
    listenClientUrl: `${client}://0.0.0.0:${CLIENT_PORT}`, clientUrl: `${client}://${host}:${CLIENT_PORT}`,
    listenPeerUrl: `${peer}://0.0.0.0:${PEER_PORT}`, peerUrl: `${peer}://${host}:${PEER_PORT}`,
    initialCluster: '$(INITIAL_CLUSTER)', token: '$(INITIAL_CLUSTER_TOKEN)', state: '$(INITIAL_CLUSTER_STATE)',
    tls: {
      ...(spec.tls?.clientSecret ? { clientDir: '/etc/svc/client-tls', metricsUrl: `http://0.0.0.0:${METRICS_PORT}` } : {}),
      ...(spec.tls?.peerSecret ? { peerDir: '/etc/svc/peer-tls' } : {}),
    },
  }, member);
  // (a pod of another member created meanwhile starts empty with the survivor alone as the cluster to join: refused)
  if (live.force) args.push('--force-new-cluster');
  const volumes: object[] = [];
  const mounts: object[] = [{ name: 'data', mountPath: DATA_MOUNT }];
  if (spec.tls?.clientSecret) {
    volumes.push({ name: 'client-tls', secret: { secretName: spec.tls.clientSecret } });
    mounts.push({ name: 'client-tls', mountPath: '/etc/svc/client-tls', readOnly: true });
  }
  // with --client-cert-auth the kubelet cannot GET /health on the client port (no certificate): probe the
  // plain metrics port instead, as etcd's own manifests do
  const probePort = spec.tls?.clientSecret ? { port: 'metrics', scheme: 'HTTP' } : { port: 'client', scheme: client.toUpperCase() };
  if (spec.tls?.peerSecret) {
    volumes.push({ name: 'peer-tls', secret: { secretName: spec.tls.peerSecret } });
    mounts.push({ name: 'peer-tls', mountPath: '/etc/svc/peer-tls', readOnly: true });
  }
  const pt = spec.podTemplate ?? {};
  const podSpec: Record<string, unknown> = {
    terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
    securityContext: POD_SECURITY,
    containers: [{
      name: 'svc',
      image: memberImage(spec, release),
      imagePullPolicy: spec.image?.pullPolicy ?? 'IfNotPresent',
      args,
      ports: [{ name: 'client', containerPort: CLIENT_PORT }, { name: 'peer', containerPort: PEER_PORT },
        ...(spec.tls?.clientSecret ? [{ name: 'metrics', containerPort: METRICS_PORT }] : [])],
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        fromConfig('INITIAL_CLUSTER'), fromConfig('INITIAL_CLUSTER_STATE'), fromConfig('INITIAL_CLUSTER_TOKEN'),
        ...Object.entries(member.env).map(([k, value]) => ({ name: k, value })),
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
      // a member that exits on error leaves its last log lines in its status: the operator quotes them and finds a
      // member that lost its data ("has already been bootstrapped") or whose database is corrupt (healing)
      terminationMessagePolicy: 'FallbackToLogsOnError',
    }],
    ...(volumes.length > 0 ? { volumes } : {}),
    affinity: pt.affinity ?? defaultAffinity(name),
    ...(pt.tolerations ? { tolerations: pt.tolerations } : {}),
    ...(pt.nodeSelector ? { nodeSelector: pt.nodeSelector } : {}),
    ...(pt.topologySpreadConstraints ? { topologySpreadConstraints: pt.topologySpreadConstraints } : {}),
    ...(pt.priorityClassName ? { priorityClassName: pt.priorityClassName } : {}),
    ...(spec.image?.pullSecrets ? { imagePullSecrets: spec.image.pullSecrets.map((n) => ({ name: n })) } : {}),
  };
  const annotations: Record<string, string> = { ...(pt.annotations ?? {}), [CONFIG_HASH_ANNOTATION]: configRevision(spec, release) };
  if (live.tlsHash) annotations[TLS_HASH_ANNOTATION] = live.tlsHash;
  if (live.force) annotations[FORCE_ANNOTATION] = live.force;
  if (live.restart) annotations[RESTART_TOKEN_ANNOTATION] = live.restart;
  return owned(c, 'apps/v1', 'StatefulSet', name, {
    spec: {
      replicas: live.hibernated ? 0 : live.replicas ?? spec.replicas,
      serviceName: peerServiceName(name),
      // members must all start to reach quorum; OnDelete: the operator decides when a pod takes a new template
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'OnDelete' },
      // a removed member's data goes with its pod (a member re-added on old data would be refused); deleting
      // the SvcCluster keeps the data
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: live.hibernated ? 'Retain' : 'Delete' },
      selector: { matchLabels: selectorLabels(name) },
      template: { metadata: { labels: { ...(pt.labels ?? {}), ...labels(name), [RELEASE_LABEL]: release, [SERVING_LABEL]: 'true' }, annotations }, spec: podSpec },
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

/** Every owned object of the cluster; the StatefulSet runs `release`. Order: what others refer to first. */
export function ownedObjects(c: ClusterRef, release: string, live: LiveShape = {}): KubeObject[] {
  const { name } = c;
  const ports = [{ name: 'client', port: CLIENT_PORT, targetPort: 'client' }, { name: 'peer', port: PEER_PORT, targetPort: 'peer' }];
  return [
    configMap(c, live),
    // peers must find each other before they are ready (quorum comes first), hence publishNotReadyAddresses
    owned(c, 'v1', 'Service', peerServiceName(name), {
      spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: selectorLabels(name), ports },
    }),
    owned(c, 'v1', 'Service', clientServiceName(name), {
      spec: { ...(c.spec.service?.type && c.spec.service.type !== 'ClusterIP' ? { type: c.spec.service.type } : {}), selector: { ...selectorLabels(name), [SERVING_LABEL]: 'true' }, ports: [ports[0]] },
    }, { labels: c.spec.service?.labels, annotations: c.spec.service?.annotations }),
    owned(c, 'policy/v1', 'PodDisruptionBudget', name, {
      spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(name) } },
    }),
    statefulSet(c, release, live),
  ];
}

/** The revision members of `release` start with now (what the StatefulSet template at that release carries). */
export function revisionOf(spec: SvcClusterSpec, release: string, live: LiveShape): { config: string; tls?: string } {
  return { config: configRevision(spec, release), ...(live.tlsHash ? { tls: live.tlsHash } : {}) };
}
