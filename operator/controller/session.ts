// Everything the controller remembers about one SvcCluster between reconciles, in one object: created on the
// cluster's first reconcile and dropped, whole, when the cluster is gone (Sessions.drop). None of it is needed to
// resume (the records are on the SvcCluster); it saves repeated work and keeps a write from being read back stale.
import type { BackupsStatus, RecoveryStatus } from '../api/types.js';
import { MemberClient, type MemberClientOptions, type MemberTls } from '../members/index.js';
import { newMemory, type EngineMemory } from '../orchestrator/engine.js';
import type { JobFailure } from '../runtime/kubernetes/backup-job.js';
import type { KubeApi } from '../runtime/kubernetes/kube-api.js';
import { KubeRecords } from '../runtime/kubernetes/kube-records.js';
import type { DesiredBuild } from '../runtime/kubernetes/kube-runtime.js';
import { tlsKey } from './tls.js';
import type { DestinationProblem } from './status.js';

/** One cluster's session. */
export class ClusterSession {
  /** The engine's memory (a leadership move under way, the crash points' numbers). */
  readonly memory: EngineMemory = newMemory();
  /** The record document, with what this process wrote last (an informer's copy may lag behind it). */
  private records?: KubeRecords;
  /** The desired state built last and its inputs (a pass whose inputs are unchanged does not build it again). */
  readonly desired: DesiredBuild = {};
  /** The step line of a step left under way (StepPending) by the last pass: announced once, not on every look. */
  pendingLine?: string;
  /** The step line planned last (a new one is logged). */
  lastStep?: string;
  /** Consecutive failures of the step carried out last. */
  stepFailures = 0;
  /** Pod problems already announced by a Warning Event ("<reason> <object>"). */
  podProblemsSeen = new Set<string>();
  /** The recovery request refused last (announced by one Warning Event). */
  recoverRefused?: string;
  /** status.recovery as this pass found it (the record's readable form, or a refusal). */
  recovery?: RecoveryStatus;
  /** The last backup/restore Job failure of a step (status shows it until a Job succeeds). */
  jobFailure?: JobFailure;
  /** continuous backup's progress read from the destination, and when (read again at most every AGENT_STATUS_MS). */
  continuous?: { at: number; status: Pick<BackupsStatus, 'continuousRevision' | 'continuousTime'>; problems: DestinationProblem[] };
  /** The status this process published last and the resourceVersion the write returned (read-your-writes). */
  status?: { canonical: string; rv: string | undefined };
  /** The member client of a TLS cluster (its CA and client certificate) and the key of that material. */
  private tls?: { key: string; client: MemberClient };

  constructor(readonly key: string) {}

  /** The cluster's record document (kube-records.ts), made on first use. */
  recordsOf(api: KubeApi): KubeRecords {
    const [namespace, name] = this.key.split('/');
    return (this.records ??= new KubeRecords(api, namespace, name));
  }

  /** The member client: `plain` (shared by every plain-http cluster), or this cluster's own for `tls`, renewed with it. */
  memberClient(tls: MemberTls | undefined, plain: MemberClient, opts: MemberClientOptions): MemberClient {
    if (!tls) {
      this.close();
      return plain;
    }
    const key = tlsKey(tls);
    if (this.tls?.key === key) return this.tls.client;
    this.close();
    this.tls = { key, client: new MemberClient({ ...opts, tls }) };
    return this.tls.client;
  }

  /** Closes this cluster's own connections. */
  close(): void {
    this.tls?.client.close();
    this.tls = undefined;
  }
}

/** The sessions of every cluster this process reconciles. */
export class Sessions {
  private readonly byKey = new Map<string, ClusterSession>();

  /** @param dropped what else forgets a cluster (the API module's bookkeeping, metrics) */
  constructor(private readonly dropped: (key: string) => void) {}

  /** The session of `key` ("namespace/name"), created on first use. */
  get(key: string): ClusterSession {
    let s = this.byKey.get(key);
    if (!s) this.byKey.set(key, (s = new ClusterSession(key)));
    return s;
  }

  /** The one place a cluster is forgotten: its session and everything else that keeps state about it. */
  drop(key: string): void {
    this.byKey.get(key)?.close();
    this.byKey.delete(key);
    this.dropped(key);
  }

  /** Closes every session (the controller stops). */
  close(): void {
    for (const s of this.byKey.values()) s.close();
  }
}
