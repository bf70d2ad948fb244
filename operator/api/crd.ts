// The SvcCluster CustomResourceDefinition, generated from operator/api/types.ts. The schema objects below are
// typed by the TypeScript interfaces (Props<T> demands exactly one schema per field of T), so a field added to
// or removed from the types fails to compile until the schema follows. `svc-operator crd` prints the YAML;
// crds/svc.dev_svcclusters.yaml is its checked-in output (a test keeps them equal).
import { dump } from 'js-yaml';
import type {
  MaintenanceStatus, MemberDefragStatus, BackupDestination, BackupEntry, BackupSpec, BackupVerifySpec, BackupsStatus, DefragSpec, MaintenanceSpec, RestoreSource, S3Destination, Condition, MemberStatus, MemberReplacementStatus, RecoveryStatus, RolloutStatus, SnapshotRecord, SvcClusterSpec, SvcClusterStatus, UpgradeSpec, UpgradeStatus, VerifiedStatus,
} from './types.js';
import { API_VERSION, KIND, PLURAL } from './types.js';
import { SUPPORTED_MINORS } from './versions.js';

/** An OpenAPI v3 schema node as a CRD's structural schema allows it. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  format?: string;
  pattern?: string;
  anyOf?: Schema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-validations'?: Array<{ rule: string; message: string; reason?: string; fieldPath?: string }>;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
}

/** One schema per field of T, no more, no less (the compile-time link between the types and the CRD). */
type Props<T> = { [K in keyof Required<T>]: Schema };

const GROUP = API_VERSION.split('/')[0];
const VERSION = API_VERSION.split('/')[1];
/** Name of the CRD object. */
export const CRD_NAME = `${PLURAL}.${GROUP}`;

const str = (description: string, extra: Partial<Schema> = {}): Schema => ({ type: 'string', description, ...extra });
const bool = (description: string, extra: Partial<Schema> = {}): Schema => ({ type: 'boolean', description, ...extra });
const int = (description: string, extra: Partial<Schema> = {}): Schema => ({ type: 'integer', description, ...extra });
const obj = <T>(description: string, properties: Props<T>, extra: Partial<Schema> = {}): Schema => ({
  type: 'object', description, properties: properties as Record<string, Schema>, ...extra,
});
const stringMap = (description: string): Schema => ({ type: 'object', description, additionalProperties: { type: 'string' } });
const freeForm = (description: string): Schema => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });
// A resource.Quantity as Kubernetes' own types declare it: an integer or a string of the quantity grammar.
const QUANTITY_RE = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const quantity = (description: string, extra: Partial<Schema> = {}): Schema => ({
  description, anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: QUANTITY_RE, 'x-kubernetes-int-or-string': true, ...extra,
});
const quantityMap = (description: string): Schema => ({ type: 'object', description, additionalProperties: quantity('A quantity.') });

// [.] rather than \. : a backslash would need escaping again inside the CEL string literal.
const VERSION_RE = '^[0-9]+[.][0-9]+[.][0-9]+$';
const MINORS_RE = `^(${SUPPORTED_MINORS.map((m) => m.replace('.', '[.]')).join('|')})[.][0-9]+$`;

type Image = NonNullable<SvcClusterSpec['image']>;
type Storage = NonNullable<SvcClusterSpec['storage']>;
type Resources = NonNullable<SvcClusterSpec['resources']>;
type PodTemplate = NonNullable<SvcClusterSpec['podTemplate']>;
type Tls = NonNullable<SvcClusterSpec['tls']>;
type ClientService = NonNullable<SvcClusterSpec['service']>;
type Logging = NonNullable<SvcClusterSpec['logging']>;
type Restore = NonNullable<SvcClusterSpec['restore']>;
type AutoCompaction = NonNullable<MaintenanceSpec['autoCompaction']>;
type Threshold = NonNullable<DefragSpec['threshold']>;
type Window = NonNullable<DefragSpec['window']>;

const DESTINATION_NAME_RE = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const s3Schema = obj<S3Destination>('An S3-compatible bucket: objects <prefix>/<cluster>/full/<revision>-<time>.db (the reference\'s snapshot format) with a .json manifest each.', {
  endpoint: str('https://host[:port] of the store (default AWS S3 of the region).', { pattern: '^https?://' }),
  bucket: str('Bucket name.', { minLength: 3, maxLength: 63 }),
  prefix: str('Key prefix inside the bucket (no leading or trailing "/").', { pattern: '^([^/].*[^/]|[^/])?$' }),
  region: str('Region (default us-east-1).'),
  forcePathStyle: bool('Path-style URLs (<endpoint>/<bucket>/<key>), as most self-hosted stores want.'),
  caBundle: str('PEM CA bundle the endpoint\'s certificate is checked against (besides the system\'s).'),
  caSecret: str('Secret whose key ca.crt is the CA bundle.'),
  credentialsSecret: str('Secret with the keys accessKeyId and secretAccessKey (sessionToken optional); without it the operator\'s AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.'),
}, { required: ['bucket'] });

const specSchema: Schema = obj<SvcClusterSpec>('Desired state of an SvcCluster.', {
  version: str('Release every member should run, "<major>.<minor>.<patch>"; picks the image tag v<version>.', {
    'x-kubernetes-validations': [
      { rule: `self.matches('${VERSION_RE}')`, message: 'spec.version must be "<major>.<minor>.<patch>"' },
      { rule: `self.matches('${MINORS_RE}')`, message: `spec.version must be of a supported release line (${SUPPORTED_MINORS.join(', ')})` },
    ],
    maxLength: 32,
  }),
  replicas: int('Members: odd, 1 to 7; 0 hibernates (every member stopped, its data kept; a count again wakes the same data).', {
    default: 3,
    'x-kubernetes-validations': [{ rule: 'self == 0 || (self >= 1 && self <= 7 && self % 2 == 1)', message: 'spec.replicas must be an odd integer from 1 to 7, or 0 to hibernate (members stopped, data kept)' }],
  }),
  image: obj<Image>('Image of the members (the tag is always v<spec.version>).', {
    repository: str('Image repository; the tag is v<spec.version>.', { default: 'svc' }),
    pullPolicy: str('Image pull policy.', { enum: ['Always', 'IfNotPresent', 'Never'], default: 'IfNotPresent' }),
    pullSecrets: { type: 'array', description: 'Names of image pull secrets.', items: { type: 'string' } },
  }),
  storage: obj<Storage>('Storage of each member\'s data dir.', {
    size: quantity('Requested size of each member\'s volume: a larger one grows the volumes in place when the class allows expansion; smaller than the volumes is refused (checked by the operator).', { default: '1Gi' }),
    storageClassName: str('Storage class of the members\' volumes (immutable).'),
  }),
  resources: obj<Resources>('Compute resources of each member.', {
    requests: quantityMap('Resource requests.'),
    limits: quantityMap('Resource limits.'),
  }),
  podTemplate: obj<PodTemplate>('Overrides of the members\' pod template.', {
    affinity: freeForm('Pod affinity (core/v1 Affinity).'),
    tolerations: { type: 'array', description: 'Pod tolerations (core/v1 Toleration).', items: freeForm('A toleration.') },
    nodeSelector: stringMap('Node selector.'),
    labels: stringMap('Extra labels of the member pods.'),
    annotations: stringMap('Extra annotations of the member pods (the operator\'s own svc.dev/ keys win).'),
    topologySpreadConstraints: { type: 'array', description: 'How member pods spread over nodes and zones (core/v1 TopologySpreadConstraint).', items: freeForm('A topology spread constraint.') },
    priorityClassName: str('PriorityClass of the member pods.'),
    env: {
      type: 'array', description: 'Extra environment variables of the svc container (core/v1 EnvVar), after the operator\'s own; a change rolls the members.',
      items: {
        type: 'object', required: ['name'],
        properties: { name: { type: 'string', description: 'Variable name.' }, value: { type: 'string', description: 'Its value.' }, valueFrom: freeForm('Where its value comes from (core/v1 EnvVarSource).') },
      },
    },
  }),
  service: obj<ClientService>('The client Service (<cluster>-client).', {
    type: str('Service type.', { enum: ['ClusterIP', 'NodePort', 'LoadBalancer'], default: 'ClusterIP' }),
    labels: stringMap('Extra labels of the client Service (the operator\'s own keys win).'),
    annotations: stringMap('Extra annotations of the client Service (a cloud load balancer\'s settings; svc.dev/ keys are reserved).'),
  }),
  tls: obj<Tls>('Secret names of the client and peer certificates (tls.crt, tls.key, ca.crt).', {
    clientSecret: str('Secret of the client certificate.'),
    peerSecret: str('Secret of the peer certificate.'),
  }),
  enableV2: bool('--enable-v2 for every member.'),
  logging: obj<Logging>('Member logging.', {
    logger: str('Logger.', { enum: ['capnslog', 'zap'] }),
    level: str('Log level.', { enum: ['debug', 'info', 'warn', 'error'] }),
  }),
  backup: obj<BackupSpec>('Where backups go (a claim: spec.backup.pvc or <cluster>-backups, which the operator creates), when they are taken and how many are kept.', {
    pvc: str('An existing PersistentVolumeClaim that holds backups; without it the operator creates <cluster>-backups.'),
    size: str('Size of the claim the operator creates (default spec.storage.size).'),
    storageClassName: str('Storage class of the claim the operator creates (default spec.storage.storageClassName).'),
    deleteWithCluster: bool('True: the claim the operator creates is deleted with the SvcCluster (default: kept).'),
    schedule: str('Cron schedule of backups, e.g. "0 3 * * *" (checked by the operator: a bad one shows as Blocked).', { maxLength: 128 }),
    timeZone: str('IANA time zone of the schedule (default UTC).'),
    keep: int('Backups to keep, of every kind; older files are removed.', { minimum: 1, default: 3 }),
    verify: obj<BackupVerifySpec>('Restore drills: the newest backup restored into a scratch member, its KV hash compared with the one recorded at backup time (status.backups.lastVerified, the BackupVerified condition).', {
      schedule: str('Cron schedule of drills, e.g. "30 3 * * *", in spec.backup.timeZone.', { maxLength: 128 }),
    }, { required: ['schedule'] }),
    continuous: bool('Continuous backup: a backup agent writes every change after the newest full snapshot as delta segments (every 2 s or 1000 revisions) to every object-store destination; a restore then reaches any revision since.'),
    credentialsSecret: str('For a cluster with authentication on and no client certificates: a Secret with the keys username and password of a user with the root role, whom backups are taken as.'),
    maxAge: str('Full snapshots older than this ("168h", "90m", "7d") are removed from every object-store destination (the newest one stays).', { pattern: '^([0-9]+(d|h|m|s))+$' }),
    destinations: {
      type: 'array', description: 'Where every backup goes besides the cluster\'s claim: S3-compatible object stores, several at once.',
      'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], maxItems: 8,
      items: obj<BackupDestination>('A destination: exactly one of pvc and s3.', {
        name: str('Unique among the destinations; names it in status, Events and spec.restore.source.destination.', { pattern: DESTINATION_NAME_RE, maxLength: 63 }),
        pvc: str('A PersistentVolumeClaim, like spec.backup.pvc.'),
        s3: s3Schema,
      }, { required: ['name'], 'x-kubernetes-validations': [{ rule: 'has(self.pvc) != has(self.s3)', message: 'a destination has exactly one of pvc and s3' }] }),
    },
  }, { default: {} }),
  upgrade: obj<UpgradeSpec>('How the rolling upgrade behaves.', {
    paused: bool('True: the upgrade stops before its next step.', { default: false }),
    waitBetweenMembersSeconds: int('Minimum seconds between one member\'s restart and the next one\'s.', { minimum: 0, maximum: 3600, default: 0 }),
    acknowledgeLargeV2Data: bool('Required to start an upgrade when the v2 data is 100 MB or more.', { default: false }),
  }, { default: {} }),
  maintenance: obj<MaintenanceSpec>('Quota, compaction and defragmentation (the operator compacts, defragments and disarms NOSPACE by itself).', {
    quotaBackendBytes: quantity('--quota-backend-bytes of every member; default half of spec.storage.size, at most 8Gi (checked by the operator: larger than the volume is refused).'),
    autoCompaction: obj<AutoCompaction>('The members\' own compaction; also the history the operator keeps when it compacts.', {
      mode: str('How retention is read.', { enum: ['periodic', 'revision'] }),
      retention: str('periodic: hours ("1") or a duration ("30m"); revision: a revision count ("1000").'),
    }),
    defrag: obj<DefragSpec>('When members are defragmented (one at a time, followers first, the leader last after moving leadership).', {
      schedule: str('Cron schedule, e.g. "0 3 * * 0" (checked by the operator).', { maxLength: 128 }),
      timeZone: str('IANA time zone of the schedule and the window (default UTC).'),
      threshold: obj<Threshold>('Defragment when a member passes a share.', {
        fragmentation: str('Share of the database file unused, e.g. "40%".'),
        quotaUsage: str('The database file as a share of the quota, e.g. "80%".'),
      }),
      window: obj<Window>('Only start inside this daily window.', {
        start: str('"HH:MM" in timeZone.'),
        duration: str('"3h", "90m" or "1h30m".'),
      }, { required: ['start', 'duration'] }),
    }),
  }),
  restore: obj<Restore>('Create the cluster from a snapshot file or from the restore points of an object-store destination.', {
    snapshot: str('Backup to start from: pvc://<claim>/<path> as status.backups.items[].location shows it (any claim of the namespace), or a path inside this cluster\'s backup claim.', { minLength: 1 }),
    source: obj<RestoreSource>('The restore points of a destination: one of spec.backup.destinations by name, or a bucket.', {
      destination: str('Name of a destination of spec.backup.destinations.'),
      s3: s3Schema,
      cluster: str('Whose backups (the folder under the prefix); default the only cluster there.'),
    }, { 'x-kubernetes-validations': [{ rule: 'has(self.destination) != has(self.s3)', message: 'spec.restore.source names exactly one of destination and s3' }] }),
    revision: int('The newest restore point at or before this revision.', { minimum: 1 }),
    time: str('The newest restore point taken at or before this time.', { format: 'date-time' }),
  }, {
    'x-kubernetes-validations': [
      { rule: 'has(self.snapshot) != has(self.source)', message: 'spec.restore needs exactly one of snapshot and source' },
      { rule: '!(has(self.revision) && has(self.time))', message: 'spec.restore takes a revision or a time, not both' },
      { rule: 'has(self.source) || !(has(self.revision) || has(self.time))', message: 'spec.restore.revision and time go with spec.restore.source' },
    ],
  }),
}, {
  required: ['version'],
  'x-kubernetes-validations': [{
    rule: "(has(self.storage) && has(self.storage.storageClassName) ? self.storage.storageClassName : '') == " +
      "(has(oldSelf.storage) && has(oldSelf.storage.storageClassName) ? oldSelf.storage.storageClassName : '')",
    message: 'spec.storage.storageClassName is immutable',
  }],
});

const snapshotSchema = obj<SnapshotRecord>('The pre-upgrade snapshot.', {
  location: str('Where the snapshot file is.'),
  member: str('Member it was taken from (the leader).'),
  revision: int('Revision of the snapshot.'),
  size: int('Database bytes.'),
  sha256: str('sha256 of the database bytes, hex.'),
  time: str('When it was taken.', { format: 'date-time' }),
  kvHash: int('KV hash (HashKV) of the member at the revision when it was taken: what a restore drill compares.', { minimum: 0 }),
  compactRevision: int('Compaction revision that KV hash was taken over.'),
});

const backupsSchema = obj<BackupsStatus>('Where backups go and the ones kept.', {
  claim: str('The claim every backup is written to.'),
  items: {
    type: 'array', description: 'Backups kept on the claim, oldest first.', 'x-kubernetes-list-type': 'atomic',
    items: obj<BackupEntry>('A backup.', {
      kind: str('What made it.', { enum: ['scheduled', 'pre-upgrade', 'on-demand'] }),
      location: str('pvc://<claim>/<path> of the file (spec.restore.snapshot takes it as it is).'),
      member: str('Member it was taken from (the leader).'),
      revision: int('Revision of the snapshot.'),
      size: int('Database bytes.'),
      sha256: str('sha256 of the database bytes, hex.'),
      time: str('When it was taken.', { format: 'date-time' }),
      kvHash: int('KV hash (HashKV) of the member at the revision when it was taken: what a restore drill compares.', { minimum: 0 }),
      compactRevision: int('Compaction revision that KV hash was taken over.'),
    }),
  },
  lastScheduleTime: str('Scheduled time of the last scheduled backup.', { format: 'date-time' }),
  nextScheduleTime: str('When the next scheduled backup is due.', { format: 'date-time' }),
  lastRequest: str('svc.dev/backup-request token of the last on-demand backup taken.'),
  lastVerified: obj<VerifiedStatus>('The last restore drill.', {
    time: str('When it finished.', { format: 'date-time' }),
    location: str('The backup it restored.'),
    revision: int('The revision whose KV hash was compared.'),
    result: str('Passed or Failed.', { enum: ['Passed', 'Failed'] }),
    message: str('What was compared, or why it failed.'),
  }),
  lastVerifyScheduleTime: str('Scheduled time of the last scheduled drill.', { format: 'date-time' }),
  nextVerifyTime: str('When the next scheduled drill is due.', { format: 'date-time' }),
  lastVerifyRequest: str('svc.dev/verify-request token of the last drill asked for and run.'),
  continuousRevision: int('Continuous backup: the newest revision the backup agent has made durable in every destination.'),
  continuousTime: str('When the agent saw that revision.', { format: 'date-time' }),
  continuousFull: obj<NonNullable<BackupsStatus['continuousFull']>>('The last full snapshot the backup agent took itself, and why (compaction passed it, or it was away too long).', {
    revision: int('Its revision.'),
    time: str('When it was taken.', { format: 'date-time' }),
    reason: str('Why.'),
  }),
});

const statusSchema: Schema = obj<SvcClusterStatus>('Observed state of an SvcCluster.', {
  observedGeneration: int('Generation of the spec last acted on.'),
  phase: str('Phase.', { enum: ['Creating', 'Running', 'Upgrading', 'Scaling', 'Blocked', 'Degraded', 'Deleting', 'Hibernated'] }),
  conditions: {
    type: 'array', description: 'Conditions: Ready, Reconciling, Stalled (kstatus), Available, Progressing, Upgrading, Degraded, BackupReady, BackupVerified, ContinuousBackup, Suspended, UpgradeBlocked, WritesRefused.',
    'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'],
    items: obj<Condition>('A condition.', {
      type: str('Condition type.'),
      status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
      reason: str('Typed reason.'),
      message: str('Message.'),
      lastTransitionTime: str('Last change of status.', { format: 'date-time' }),
      observedGeneration: int('metadata.generation the condition was computed for.'),
    }, { required: ['type', 'status'] }),
  },
  members: {
    type: 'array', description: 'Members.', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
    items: obj<MemberStatus>('A member.', {
      name: str('Member (pod) name.'),
      id: str('Member id.'),
      release: str('Release the member reports.'),
      image: str('Image of the member\'s pod.'),
      ready: bool('Pod ready.'),
      healthy: bool('/health answered.'),
      leader: bool('The member is the leader.'),
      learner: bool('A learner (being added, or replacing a lost member), not yet voting.'),
      replaced: obj<MemberReplacementStatus>('The last replacement of this member (it could not come back).', {
        cause: str('DataLost, AlreadyBootstrapped, DataCorrupt, MemberIdChanged, VolumeLost or NodeLost.'),
        detail: str('What showed it.'),
        time: str('When the replacement began.', { format: 'date-time' }),
        previousId: str('The member ID removed.'),
        finishedAt: str('When the successor became a voting member.', { format: 'date-time' }),
      }, { required: ['cause', 'time'] }),
    }, { required: ['name'] }),
  },
  leader: str('Name of the leader.'),
  clusterVersion: str('Cluster version.'),
  currentVersion: str('Lowest release a member runs.'),
  targetVersion: str('spec.version being pursued.'),
  ready: str('Ready members over desired ones (x/y).'),
  replicas: { type: 'integer', description: 'Members that exist (what `kubectl scale` reports as the current count).' },
  upgrade: obj<UpgradeStatus>('Progress of the last upgrade.', {
    from: str('Release upgraded from.'),
    to: str('Release upgraded to.'),
    step: str('Step under way or last finished.'),
    membersDone: { type: 'array', description: 'Members already on the target, in order.', items: { type: 'string' } },
    hops: { type: 'array', description: 'The hops of the path when this one began, this one first and spec.version last (a target more than one hop away: patch hops and minor lines passed through).', items: { type: 'string' } },
    startedAt: str('Start.', { format: 'date-time' }),
    finishedAt: str('End.', { format: 'date-time' }),
    snapshot: snapshotSchema,
  }),
  rollout: obj<RolloutStatus>('The rollout of a configuration or certificate change under way or finished last (one member at a time, the leader last).', {
    reason: str('Why the members restart: SpecChange or CertificateRenewed.'),
    revision: str('Fingerprint of the configuration and certificates rolled out.'),
    membersDone: { type: 'array', description: 'Members restarted onto it, in order.', items: { type: 'string' } },
    startedAt: str('Start.', { format: 'date-time' }),
    finishedAt: str('End.', { format: 'date-time' }),
  }),
  step: str('What the operator is doing or stuck on (the STEP column): a pod problem, the upgrade\'s step, a wait\'s code.'),
  backups: backupsSchema,
  recovery: obj<RecoveryStatus>('The quorum-loss recovery asked for last (annotation svc.dev/recover, `kubectl svc recover`).', {
    request: str('The request token answered or refused.'),
    survivor: str('The member whose data the cluster is recovered from (the highest applied index among those answering).'),
    step: str('The recovery step begun last.'),
    snapshot: str('Where the survivor\'s snapshot, taken before anything was touched, is.'),
    startedAt: str('Start.', { format: 'date-time' }),
    finishedAt: str('End.', { format: 'date-time' }),
    refused: str('Why the request was not acted on (the cluster has quorum...); nothing was touched.'),
  }, { required: ['request'] }),
  maintenance: obj<MaintenanceStatus>('Compaction, defragmentation and the quota in effect (spec.maintenance).', {
    quotaBackendBytes: int('The backend quota the members run with (bytes): spec.maintenance.quotaBackendBytes, else derived from their volumes.'),
    lastCompaction: obj<NonNullable<MaintenanceStatus['lastCompaction']>>('The last compaction the operator made.', {
      revision: int('Compacted up to this revision.'),
      reason: str('Why: NoSpace, Scheduled, Threshold or Requested.'),
      roundStartedAt: str('When its maintenance round began.', { format: 'date-time' }),
    }, { required: ['revision', 'reason', 'roundStartedAt'] }),
    members: {
      type: 'array', description: 'Each member\'s last defragmentation by the operator.', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
      items: obj<MemberDefragStatus>('A member\'s last defragmentation.', {
        name: str('The member.'),
        time: str('When it ended.', { format: 'date-time' }),
        reason: str('Why: NoSpace, Scheduled, Threshold or Requested.'),
        before: int('Bytes of its database file before.'),
        after: int('Bytes of its database file after.'),
      }, { required: ['name', 'time', 'reason'] }),
    },
  }),
  lastError: str('Last error of the operator on this cluster.'),
});

/** The schema of a whole SvcCluster (validate.ts walks it for unknown fields, as the apiserver's strict validation does). */
export const svcClusterSchema: Schema = {
  type: 'object',
  description: 'A clustered svc key-value store that svc-operator runs and upgrades.',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: specSchema,
    status: statusSchema,
  },
  'x-kubernetes-validations': [
    { rule: 'self.metadata.name.size() <= 50', message: 'metadata.name must be at most 50 characters' },
  ],
};

/** The CRD object. */
export function svcClusterCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: GROUP,
      names: { kind: KIND, listKind: `${KIND}List`, plural: PLURAL, singular: 'svccluster', shortNames: ['svcc'] },
      // no `categories: [all]`: `kubectl delete all --all` must not delete clusters (and, by garbage collection, their data)
      scope: 'Namespaced',
      versions: [{
        name: VERSION,
        served: true,
        storage: true,
        // scale: `kubectl scale svcc/x --replicas=N` sets spec.replicas; status.replicas counts the members that exist
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        additionalPrinterColumns: [
          { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'Desired release' },
          { name: 'Running', type: 'string', jsonPath: '.status.currentVersion', description: 'Lowest release a member runs' },
          { name: 'Cluster', type: 'string', jsonPath: '.status.clusterVersion', description: 'Cluster version' },
          { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'Ready members' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          { name: 'Step', type: 'string', jsonPath: '.status.step', description: 'Step under way, or the pod problem that stops it' },
          { name: 'Leader', type: 'string', jsonPath: '.status.leader' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: svcClusterSchema,
        },
      }],
    },
  };
}

/** The CRD as YAML (what `svc-operator crd` prints and crds/svc.dev_svcclusters.yaml holds). */
export function svcClusterCrdYaml(): string {
  return '# Generated by `svc-operator crd` from operator/api/types.ts; do not edit.\n---\n' +
    dump(svcClusterCrd(), { lineWidth: -1, noRefs: true, sortKeys: false });
}
