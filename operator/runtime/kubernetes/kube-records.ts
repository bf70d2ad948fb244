// The record document of an SvcCluster on Kubernetes: one annotation (svc.dev/records, the exact ClusterRecords),
// written with a resourceVersion precondition, so that two writers never overwrite each other unseen. The requests
// are the annotations a person writes (kubectl svc ..., GitOps); the operator only reads them. An SvcCluster of an
// earlier operator, whose records were annotations of their own (and status.backups), is moved over on its first
// read, and those annotations go with the first save.
import type { SvcClusterStatus } from '../../api/types.js';
import type { ClusterRecords, ClusterRequests, RecordsDocument } from '../../planner/records.js';
import { parseRecords } from '../../planner/records.js';
import type { MaintenanceRequest, RestartRequest } from '../../planner/types.js';
import { RuntimeError, type RecordStore } from '../runtime.js';
import { isAtLeast, isStatus, type KubeApi } from './kube-api.js';

/** Annotation on the SvcCluster holding the exact ClusterRecords (status is their readable form). */
export const RECORDS_ANNOTATION = 'svc.dev/records';

/** The value of the svc.dev/reconcile annotation that suspends (break-glass: kubectl svc suspend|resume). */
export const SUSPENDED = 'suspended';

/** A request annotation: its key, and its value read back (undefined: no request; a hand-written typo is ignored). */
interface RequestAnnotation<K extends keyof ClusterRequests> {
  annotation: string;
  read(value: string): ClusterRequests[K] | undefined;
}

const token = (v: string): string => v;

/**
 * The annotations a person writes to ask for something (kubectl svc ..., GitOps), by the field of ClusterRequests
 * each becomes. Backup, verify and recover hold a token, restart and maintenance JSON with a token (the RestartRequest
 * {"token", "members"}, as `local restart` writes it into the state file; {"token", "action":
 * "defrag"|"compact"|"move-leader", "member"?}): a new token asks again. svc.dev/reconcile=suspended stops every
 * mutation of the cluster.
 */
export const REQUESTS: { [K in keyof ClusterRequests]-?: RequestAnnotation<K> } = {
  backup: { annotation: 'svc.dev/backup-request', read: token },
  verify: { annotation: 'svc.dev/verify-request', read: token },
  recover: { annotation: 'svc.dev/recover', read: token },
  restart: { annotation: 'svc.dev/restart-request', read: parseRestartRequest },
  maintenance: { annotation: 'svc.dev/maintenance-request', read: parseMaintenanceRequest },
  suspended: { annotation: 'svc.dev/reconcile', read: (v) => (v === SUSPENDED ? true : undefined) },
};

/** The annotations an earlier operator kept its records in, by the field of ClusterRecords each became. */
const EARLIER: Record<Exclude<keyof ClusterRecords, 'backups' | 'agent'>, string> = {
  progress: 'svc.dev/upgrade-progress',
  rollout: 'svc.dev/rollout',
  scaling: 'svc.dev/scaling',
  replacements: 'svc.dev/replacements',
  recovery: 'svc.dev/recovery',
  maintenance: 'svc.dev/maintenance',
  hibernated: 'svc.dev/hibernated',
  formed: 'svc.dev/formed',
};

/** JSON of an annotation, or undefined (absent or malformed: the planner re-observes). */
function json(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The records of an SvcCluster an earlier operator annotated (each annotation of its own; backups in status). */
export function migrateRecords(annotations: Record<string, string>, status: SvcClusterStatus | undefined): ClusterRecords {
  const out: Record<string, unknown> = {};
  for (const [field, key] of Object.entries(EARLIER)) {
    const text = annotations[key];
    if (text === undefined) continue;
    if (field === 'formed') out.formed = text;
    else if (field === 'hibernated') {
      if (/^[1-9]\d*$/.test(text)) out.hibernated = Number(text);
    } else {
      const v = json(text);
      if (isObject(v)) out[field] = v;
    }
  }
  if (status?.backups) out.backups = status.backups;
  return out as ClusterRecords;
}

/** The svc.dev/maintenance-request value of a request (what `kubectl svc defrag|compact|move-leader` writes). */
export function maintenanceRequestValue(r: MaintenanceRequest): string {
  return JSON.stringify(r);
}

/** A svc.dev/maintenance-request value read back; undefined when it is not one (a hand-written typo is ignored). */
export function parseMaintenanceRequest(v: string | undefined): MaintenanceRequest | undefined {
  const r = json(v);
  if (!isObject(r) || typeof r.token !== 'string' || r.token === '' || (r.action !== 'defrag' && r.action !== 'compact' && r.action !== 'move-leader')) return undefined;
  return { token: r.token, action: r.action, ...(typeof r.member === 'string' ? { member: r.member } : {}) };
}

/** A svc.dev/restart-request value read back; undefined when it is not one (a hand-written typo is ignored). */
export function parseRestartRequest(v: string | undefined): RestartRequest | undefined {
  const r = json(v);
  if (!isObject(r) || typeof r.token !== 'string' || r.token === '' || !Array.isArray(r.members) || !r.members.every((m) => typeof m === 'string')) return undefined;
  return { token: r.token, members: r.members as string[] };
}

/** What a person asked for, from the request annotations. */
export function requestsOf(annotations: Record<string, string>): ClusterRequests {
  const asked = Object.entries(REQUESTS).map(([field, r]: [string, RequestAnnotation<keyof ClusterRequests>]) => {
    const v = annotations[r.annotation];
    return [field, v === undefined ? undefined : r.read(v)] as const;
  });
  return Object.fromEntries(asked.filter(([, v]) => v !== undefined)) as ClusterRequests;
}

/** The SvcCluster as the records are read from (an informer's copy). */
export interface StoredRecords {
  metadata: { name: string; namespace?: string; resourceVersion?: string; creationTimestamp?: Date | string; annotations?: Record<string, string> };
  status?: SvcClusterStatus;
}

/**
 * The record document of one SvcCluster, kept by the controller's session across reconciles: what this process wrote
 * last wins over an informer's copy older than that write. `at(stored)` is the store one pass uses.
 */
export class KubeRecords {
  /** This process's last write: the records and the resourceVersion the write returned. */
  private mine?: { records: ClusterRecords; rv: string };

  constructor(private readonly api: KubeApi, private readonly namespace: string, private readonly name: string) {}

  /** The store of one pass over `stored`. */
  at(stored: StoredRecords): RecordStore & { current(): RecordsDocument } {
    const annotations = stored.metadata.annotations ?? {};
    const earlier = annotations[RECORDS_ANNOTATION] === undefined;
    const cached = parseRecords(annotations[RECORDS_ANNOTATION]) ?? (earlier ? migrateRecords(annotations, stored.status) : {});
    const rv = stored.metadata.resourceVersion ?? '';
    const fresh = this.mine === undefined || isAtLeast(rv, this.mine.rv);
    const doc: RecordsDocument = {
      records: fresh ? cached : this.mine!.records,
      requests: requestsOf(annotations),
      version: fresh ? rv : this.mine!.rv,
      cluster: { name: this.name, created: new Date(stored.metadata.creationTimestamp ?? 0).getTime() },
    };
    // the annotations of an earlier operator go with the first save
    const drop = Object.fromEntries(Object.values(EARLIER).filter((k) => annotations[k] !== undefined).map((k) => [k, null]));
    return {
      current: () => doc,
      load: async () => ({ ...doc }),
      save: async (records, version) => {
        const next = await this.write(records, version, doc.records, drop);
        doc.records = records;
        doc.version = next;
        return next;
      },
    };
  }

  /**
   * Writes `records` at `version`. A conflict with a write that left the records as `base` (a status write, a request
   * annotated) is taken again at the newer version; one that changed them (another operator) fails the pass.
   */
  private async write(records: ClusterRecords, version: string, base: ClusterRecords, drop: Record<string, null>): Promise<string> {
    const text = JSON.stringify(records);
    for (let attempt = 0; ; attempt++) {
      try {
        const rv = await this.api.patchClusterRecords(this.namespace, this.name, { ...drop, [RECORDS_ANNOTATION]: text }, version);
        this.mine = { records, rv };
        return rv;
      } catch (e) {
        if (!isStatus(e, 409) || attempt >= 3) throw e;
        const now = await this.api.readCluster(this.namespace, this.name);
        const theirs = now?.metadata?.annotations?.[RECORDS_ANNOTATION];
        const same = theirs === undefined ? JSON.stringify(migrateRecords(now?.metadata?.annotations ?? {}, now?.status)) === JSON.stringify(base) : theirs === JSON.stringify(base);
        if (!now || !same) {
          throw new RuntimeError('STATE_IO', `the records of SvcCluster ${this.namespace}/${this.name} were changed by another writer since this pass read them (another operator replica?); the next pass reads them again`, { cause: e });
        }
        version = now.metadata?.resourceVersion ?? version;
      }
    }
  }
}
