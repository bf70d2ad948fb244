// Pod-level failures of a cluster's members, which the members cannot report because they never ran: image pulls,
// scheduling, pods the apiserver refused (FailedCreate: Pod Security, quotas), a claim that stays Pending, an
// out-of-memory kill, a crash loop. Pure: the controller reads the pods, the members' claims and the StatefulSet's
// Warning Events, and status shows what this finds (condition Stalled, status.lastError, the STEP column) with a
// Warning Event.
import type { CoreV1Api, CoreV1Event, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { PodProblem } from './status.js';

/** How long a pod may be unschedulable, or a claim Pending, before it is a problem (normal provisioning is quicker). */
export const PENDING_GRACE_MS = 20_000;

/** Waiting reasons of a container that need a person. */
const STUCK_WAITING = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CrashLoopBackOff', 'CreateContainerConfigError', 'CreateContainerError']);

export interface DiagnosticsInput {
  /** The StatefulSet's name (FailedCreate Events are about it). */
  statefulSet: string;
  /** Member pods by name. */
  pods: Iterable<V1Pod>;
  /** The members' claims (data-<pod>). */
  claims: Iterable<V1PersistentVolumeClaim>;
  /** Events of the namespace about the StatefulSet and the claims (others are ignored). */
  events: Iterable<CoreV1Event>;
  /** Pods the StatefulSet should have now. */
  replicas: number;
  now: Date;
}

const age = (t: Date | string | undefined, now: Date): number => (t === undefined ? 0 : now.getTime() - new Date(t).getTime());

function oneLine(s: string | undefined): string {
  return (s ?? '').replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** The problems, pod by pod in name order, then the StatefulSet's. */
export function podProblems(i: DiagnosticsInput): PodProblem[] {
  const out: PodProblem[] = [];
  const pods = [...i.pods].sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
  const claims = new Map([...i.claims].map((c) => [c.metadata!.name!, c]));
  const events = [...i.events];
  for (const p of pods) {
    const name = p.metadata!.name!;
    if (p.metadata?.deletionTimestamp) continue;
    const cs = p.status?.containerStatuses?.[0];
    const waiting = cs?.state?.waiting;
    const oom = cs?.lastState?.terminated?.reason === 'OOMKilled' || cs?.state?.terminated?.reason === 'OOMKilled';
    if (oom && (waiting?.reason === 'CrashLoopBackOff' || cs?.state?.terminated)) {
      const limit = p.spec?.containers?.[0]?.resources?.limits?.memory;
      out.push({ reason: 'OOMKilled', object: name, message: `the member was killed for using more memory than its limit${limit ? ` (${limit})` : ''}; raise spec.resources.limits.memory` });
      continue;
    }
    if (waiting?.reason && STUCK_WAITING.has(waiting.reason)) {
      const term = cs?.lastState?.terminated;
      const detail = waiting.reason === 'CrashLoopBackOff' && term
        // (no restart count: status changes only when what is wrong changes)
        ? `the member keeps exiting (status ${term.exitCode})${term.message ? `: ${oneLine(term.message)}` : ''}`
        : oneLine(waiting.message) || waiting.reason;
      // ErrImagePull and ImagePullBackOff alternate, each with its own message: one reason and one message for both
      // keeps status from flapping (the pull error itself is in the pod's Warning Events, which `kubectl svc status` shows)
      const pull = waiting.reason === 'ErrImagePull' || waiting.reason === 'ImagePullBackOff';
      const reason = pull ? 'ImagePullBackOff' : waiting.reason;
      const image = p.spec?.containers?.[0]?.image ?? cs?.image;
      out.push({ reason, object: name, message: pull ? `cannot pull image ${image}` : detail });
      continue;
    }
    const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' && age(scheduled.lastTransitionTime, i.now) >= PENDING_GRACE_MS) {
      const claimName = p.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;
      const claim = claimName ? claims.get(claimName) : undefined;
      // a claim waiting for its first consumer is Pending because the pod is not scheduled, not the other way
      // round: the claim is the problem only when it has a Warning of its own or the scheduler names it
      const claimWarned = claim !== undefined && events.some((e) => e.involvedObject.kind === 'PersistentVolumeClaim' && e.involvedObject.name === claim.metadata!.name && e.type === 'Warning');
      if (claim && claim.status?.phase === 'Pending' && (claimWarned || /persistentvolumeclaim|storageclass/i.test(scheduled.message ?? ''))) {
        out.push({ reason: 'ClaimPending', object: name, message: claimMessage(claim, events) });
      } else {
        out.push({ reason: 'Unschedulable', object: name, message: oneLine(scheduled.message) || 'no node fits the pod' });
      }
    }
  }
  // claims Pending without an unschedulable pod to tell (immediate binding: the pod waits unscheduled too)
  for (const c of claims.values()) {
    const pod = c.metadata!.name!.replace(/^data-/, '');
    if (c.status?.phase !== 'Pending' || out.some((o) => o.object === pod) || age(c.metadata?.creationTimestamp, i.now) < PENDING_GRACE_MS) continue;
    if (!pods.some((p) => p.metadata!.name === pod && p.spec?.nodeName === undefined)) continue;
    if (!events.some((e) => e.involvedObject.kind === 'PersistentVolumeClaim' && e.involvedObject.name === c.metadata!.name && e.type === 'Warning')) continue;
    out.push({ reason: 'ClaimPending', object: pod, message: claimMessage(c, events) });
  }
  // the StatefulSet could not create a pod (Pod Security, quota, a webhook): only its Events say why
  const have = pods.length;
  if (have < i.replicas) {
    const failed = events
      .filter((e) => e.involvedObject.kind === 'StatefulSet' && e.involvedObject.name === i.statefulSet && e.reason === 'FailedCreate' && e.type === 'Warning')
      .sort((a, b) => (String(last(a)) < String(last(b)) ? -1 : 1))
      .at(-1);
    if (failed && age(last(failed), i.now) < 10 * 60_000) {
      out.push({ reason: 'FailedCreate', object: i.statefulSet, message: oneLine(failed.message) });
    }
  }
  return out;
}

function last(e: CoreV1Event): Date | string | undefined {
  return e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
}

function claimMessage(c: V1PersistentVolumeClaim, events: CoreV1Event[]): string {
  const name = c.metadata!.name!;
  const ev = events.filter((e) => e.involvedObject.kind === 'PersistentVolumeClaim' && e.involvedObject.name === name && e.type === 'Warning').at(-1);
  const cls = c.spec?.storageClassName;
  return `claim ${name} is Pending${cls ? ` (storage class ${cls})` : ''}${ev ? `: ${oneLine(ev.message)}` : ''}`;
}

/** One word for the pod in the on-call view: what keeps it from running, else its phase and readiness. */
export function describePod(p: V1Pod): string {
  if (p.metadata?.deletionTimestamp) return 'Terminating';
  const cs = p.status?.containerStatuses?.[0];
  const waiting = cs?.state?.waiting?.reason;
  if (waiting && waiting !== 'ContainerCreating' && waiting !== 'PodInitializing') return waiting;
  if (cs?.lastState?.terminated?.reason === 'OOMKilled' && !cs.ready) return 'OOMKilled';
  const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') return scheduled.reason ?? 'Pending';
  const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const restarts = cs?.restartCount ? ` (${cs.restartCount} restarts)` : '';
  return `${p.status?.phase ?? 'Pending'}${p.status?.phase === 'Running' ? (ready ? ',ready' : ',not ready') : ''}${restarts}`;
}

/**
 * Reads what podProblems() needs beyond the pods: the claims of pods not scheduled (GET by name) and, only when a
 * pod is missing or a claim is Pending, the namespace's Warning Events (a 403 without `list events` leaves them out).
 */
export async function readPodProblems(reads: DiagnosticReads, namespace: string, statefulSet: string, pods: V1Pod[], replicas: number, now = new Date()): Promise<PodProblem[]> {
  const claims: V1PersistentVolumeClaim[] = [];
  for (const p of pods) {
    if (p.spec?.nodeName) continue;
    const claimName = p.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;
    if (!claimName) continue;
    const claim = await reads.claim(namespace, claimName);
    if (claim) claims.push(claim);
  }
  let events: CoreV1Event[] = [];
  const unscheduled = pods.some((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False'));
  if (pods.length < replicas || unscheduled || claims.some((c) => c.status?.phase === 'Pending')) {
    events = await reads.warnings(namespace);
  }
  return podProblems({ statefulSet, pods, claims, events, replicas, now });
}

/**
 * The reads pod diagnostics need beyond the pods, each kept for `ttlMs`: a namespace's Warning Events (every
 * cluster of a namespace with a Pending pod wants them: one list serves them all) and the claims of pods not
 * scheduled. With hundreds of such clusters, their passes would otherwise make thousands of requests a minute.
 */
export class DiagnosticReads {
  private readonly kept = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(private readonly core: CoreV1Api, private readonly ttlMs = 10_000) {}

  private read<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.kept.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value as Promise<T>;
    if (this.kept.size > 10_000) for (const [k, v] of this.kept) if (now - v.at >= this.ttlMs) this.kept.delete(k);
    const value = fetch();
    this.kept.set(key, { at: now, value });
    return value;
  }

  /** The namespace's Warning Events (none when they cannot be listed: a 403 without `list events`). */
  warnings(namespace: string): Promise<CoreV1Event[]> {
    return this.read(`events ${namespace}`, () => this.core.listNamespacedEvent({ namespace, fieldSelector: 'type=Warning' }).then((l) => l.items, () => []));
  }

  /** The claim, or undefined when it is not there yet (the StatefulSet makes it with the pod). */
  claim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined> {
    return this.read(`claim ${namespace}/${name}`, () => this.core.readNamespacedPersistentVolumeClaim({ namespace, name }).then((c) => c, () => undefined));
  }
}
