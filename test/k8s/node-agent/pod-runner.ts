// Runs one pod's containers as local processes: init containers in order, then the containers, restarted per
// restartPolicy with a short back-off; startup/readiness/liveness probes as declared; the pod's status
// (phase, conditions, containerStatuses) pushed to the apiserver whenever it changes.
import type { V1Container, V1ContainerState, V1Pod, V1PodCondition, V1Probe } from '@kubernetes/client-node';
import { appendFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess } from '../proc.js';
import { planContainer, type PlanContext, type ProcessPlan } from './container-command.js';
import { execExitCode, runProbe } from './probes.js';
import { containerMounts } from './volumes.js';
import { terminationFile, terminationMessage } from './termination.js';

/** What a PodRunner needs from its agent. */
export interface PodHost {
  nodeName: string;
  repoRoot: string;
  logDir: string;
  baseEnv(podDir: string, hostname: string): Record<string, string>;
  resolveRef: PlanContext['resolveRef'];
  /** Sends a status (strategic merge patch of pod status); errors are the host's to log. */
  pushStatus(namespace: string, name: string, status: object): Promise<void>;
  /** Called when the pod's readiness or running set changed (the hosts file depends on it). */
  changed(): void;
  log(msg: string): void;
}

type State = V1ContainerState;

interface ContainerRun {
  spec: V1Container;
  init: boolean;
  proc?: ManagedProcess;
  plan?: ProcessPlan;
  restartCount: number;
  started: boolean;
  ready: boolean;
  state: State;
  lastState?: State;
  timers: NodeJS.Timeout[];
  /** bumped at each start, so late probe results of an old process are dropped */
  generation: number;
  startedAt?: string;
  /** Host file standing for terminationMessagePath, and where this life's output begins in the log. */
  termination?: { file: string; logFile: string; logOffset: number };
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The runner of one pod on this node. */
export class PodRunner {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly podDir: string;
  terminating = false;
  private pod: V1Pod;
  private readonly containers: ContainerRun[];
  private readonly inits: ContainerRun[];
  private initialized = false;
  private startTime = now();
  private transitions = new Map<string, { status: string; time: string }>();
  private dirty = false;
  private pushing: Promise<void> | undefined;
  private failedToStart: string | undefined;

  constructor(pod: V1Pod, readonly ip: string, readonly volumeDirs: Map<string, string>, podDir: string, private readonly host: PodHost) {
    this.pod = pod;
    this.uid = pod.metadata?.uid ?? '';
    this.namespace = pod.metadata?.namespace ?? 'default';
    this.name = pod.metadata?.name ?? '';
    this.podDir = podDir;
    const mk = (spec: V1Container, init: boolean): ContainerRun => ({
      spec, init, restartCount: 0, started: false, ready: false, timers: [], generation: 0,
      state: { waiting: { reason: init ? 'PodInitializing' : 'ContainerCreating' } },
    });
    this.inits = (pod.spec?.initContainers ?? []).map((c) => mk(c, true));
    this.containers = (pod.spec?.containers ?? []).map((c) => mk(c, false));
  }

  /** True when every container is ready (the pod's Ready condition). */
  get ready(): boolean {
    return this.initialized && this.containers.every((c) => c.ready);
  }

  /** Hostname of the pod (spec.hostname or its name). */
  get hostname(): string { return this.pod.spec?.hostname || this.name; }

  /** The latest pod object seen. */
  get object(): V1Pod { return this.pod; }

  /** Takes a newer version of the pod object. */
  update(pod: V1Pod): void { this.pod = pod; }

  /** Starts the pod: init containers in order, then all containers. */
  start(): void {
    this.schedulePush();
    void this.runInits().catch((e: unknown) => this.fail(e));
  }

  private fail(e: unknown): void {
    this.failedToStart = e instanceof Error ? e.message : String(e);
    this.host.log(`pod ${this.namespace}/${this.name}: ${this.failedToStart}`);
    for (const c of [...this.inits, ...this.containers]) {
      if (!c.proc) c.state = { waiting: { reason: 'CreateContainerError', message: this.failedToStart } };
    }
    this.schedulePush();
  }

  private async runInits(): Promise<void> {
    for (const c of this.inits) {
      for (;;) {
        if (this.terminating) return;
        const code = await (await this.launch(c)).exited;
        if (this.terminating) return;
        if (code.code === 0) break;
        if (this.restartPolicy() === 'Never') { this.schedulePush(); return; }
        await this.backoff(c);
      }
    }
    this.initialized = true;
    for (const c of this.containers) await this.launch(c);
    this.schedulePush();
  }

  private restartPolicy(): string { return this.pod.spec?.restartPolicy ?? 'Always'; }

  private backoff(c: ContainerRun): Promise<void> {
    c.lastState = c.state;
    c.state = { waiting: { reason: 'CrashLoopBackOff' } };
    this.schedulePush();
    const ms = Math.min(10_000, 500 * 2 ** Math.min(c.restartCount, 5));
    return new Promise((r) => { const t = setTimeout(r, ms); c.timers.push(t); }).then(() => { c.restartCount++; });
  }

  private clearTimers(c: ContainerRun): void {
    for (const t of c.timers) clearTimeout(t);
    c.timers = [];
  }

  private async plan(c: ContainerRun, termination?: { path: string; file: string }): Promise<ProcessPlan> {
    const mounts = containerMounts(c.spec, this.volumeDirs);
    if (termination) mounts.set(termination.path, termination.file);
    return planContainer(this.pod, c.spec, {
      repoRoot: this.host.repoRoot, podIP: this.ip, nodeName: this.host.nodeName,
      mounts,
      baseEnv: this.host.baseEnv(this.podDir, this.hostname), resolveRef: this.host.resolveRef,
    });
  }

  /** Starts c's process; resolves the process (whose exit is handled here). */
  private async launch(c: ContainerRun): Promise<ManagedProcess> {
    const tf = terminationFile(this.podDir, c.spec);
    const plan = await this.plan(c, tf);
    c.plan = plan;
    const logFile = join(this.host.logDir, `${this.namespace}_${this.name}_${c.spec.name}.log`);
    c.termination = { file: tf.file, logFile, logOffset: existsSync(logFile) ? statSync(logFile).size : 0 };
    appendFileSync(logFile, `=== ${now()} start #${c.restartCount} pod ${this.namespace}/${this.name} ip ${this.ip}: ${plan.argv.join(' ')}\n`);
    const cwd = plan.cwd && existsSync(plan.cwd) ? plan.cwd : this.podDir;
    mkdirSync(cwd, { recursive: true });
    const proc = new ManagedProcess(`${this.name}/${c.spec.name}`, plan.argv, logFile, { env: plan.env, cwd });
    c.proc = proc;
    c.generation++;
    c.startedAt = now();
    c.state = { running: { startedAt: c.startedAt as unknown as Date } };
    c.started = !c.spec.startupProbe;
    c.ready = false;
    if (!c.init) this.startProbes(c);
    this.schedulePush();
    this.host.changed();
    void proc.exited.then((r) => this.exited(c, proc, r.code, r.signal));
    return proc;
  }

  private exited(c: ContainerRun, proc: ManagedProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (c.proc !== proc) return;
    this.clearTimers(c);
    c.ready = false;
    const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
    const message = c.termination ? terminationMessage(c.spec, c.termination.file, exitCode, c.termination.logFile, c.termination.logOffset) : undefined;
    c.state = { terminated: { exitCode, signal: undefined, reason: exitCode === 0 ? 'Completed' : 'Error', message,
      startedAt: c.startedAt as unknown as Date, finishedAt: now() as unknown as Date, containerID: `svc-test://${proc.pid ?? 0}` } };
    this.host.changed();
    this.schedulePush();
    if (this.terminating || c.init) return;
    const policy = this.restartPolicy();
    if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) {
      void this.backoff(c).then(() => {
        if (!this.terminating) return this.launch(c);
        return undefined;
      }).catch((e: unknown) => this.fail(e));
    }
  }

  private startProbes(c: ContainerRun): void {
    const gen = c.generation;
    const loop = (kind: 'startup' | 'readiness' | 'liveness', probe: V1Probe, onResult: (ok: boolean, streak: number) => boolean): void => {
      let okStreak = 0;
      let failStreak = 0;
      const tick = async (): Promise<void> => {
        if (gen !== c.generation || this.terminating) return;
        const r = await runProbe(probe, c.spec, this.ip, (cmd, timeoutMs) => this.execIn(c, cmd, timeoutMs));
        if (gen !== c.generation || this.terminating) return;
        if (r.ok) { okStreak++; failStreak = 0; } else { failStreak++; okStreak = 0; }
        const again = onResult(r.ok, r.ok ? okStreak : failStreak);
        if (!r.ok && failStreak === 1) this.host.log(`${kind} probe of ${this.namespace}/${this.name}/${c.spec.name} failed: ${r.message}`);
        if (again) c.timers.push(setTimeout(() => void tick(), (probe.periodSeconds ?? 10) * 1000));
      };
      c.timers.push(setTimeout(() => void tick(), (probe.initialDelaySeconds ?? 0) * 1000));
    };
    const afterStartup = (): void => {
      const rp = c.spec.readinessProbe;
      if (rp) {
        loop('readiness', rp, (ok, streak) => {
          const before = c.ready;
          if (ok && streak >= (rp.successThreshold ?? 1)) c.ready = true;
          if (!ok && streak >= (rp.failureThreshold ?? 3)) c.ready = false;
          if (before !== c.ready) { this.schedulePush(); this.host.changed(); }
          return true;
        });
      } else {
        c.ready = true;
        this.schedulePush();
        this.host.changed();
      }
      const lp = c.spec.livenessProbe;
      if (lp) {
        loop('liveness', lp, (ok, streak) => {
          if (!ok && streak >= (lp.failureThreshold ?? 3)) { this.restartUnhealthy(c, 'liveness'); return false; }
          return true;
        });
      }
    };
    const sp = c.spec.startupProbe;
    if (sp) {
      loop('startup', sp, (ok, streak) => {
        if (ok) { c.started = true; this.schedulePush(); afterStartup(); return false; }
        if (streak >= (sp.failureThreshold ?? 3)) { this.restartUnhealthy(c, 'startup'); return false; }
        return true;
      });
    } else {
      afterStartup();
    }
  }

  private restartUnhealthy(c: ContainerRun, why: string): void {
    this.host.log(`${why} probe: restarting ${this.namespace}/${this.name}/${c.spec.name}`);
    void c.proc?.stop(this.graceMs());
  }

  private async execIn(c: ContainerRun, cmd: string[], timeoutMs: number): Promise<number> {
    const plan = await planContainer(this.pod, { ...c.spec, command: cmd, args: [] }, {
      repoRoot: this.host.repoRoot, podIP: this.ip, nodeName: this.host.nodeName,
      mounts: containerMounts(c.spec, this.volumeDirs),
      baseEnv: this.host.baseEnv(this.podDir, this.hostname), resolveRef: this.host.resolveRef,
    });
    return execExitCode(plan.argv, plan.env, existsSync(plan.cwd ?? '') ? plan.cwd : this.podDir, timeoutMs);
  }

  private graceMs(): number {
    return (this.pod.metadata?.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
  }

  /** Stops every process: SIGTERM, then SIGKILL after graceSeconds (default: the pod's grace period). */
  async terminate(graceSeconds?: number): Promise<void> {
    this.terminating = true;
    const ms = graceSeconds !== undefined ? graceSeconds * 1000 : this.graceMs();
    const all = [...this.inits, ...this.containers];
    for (const c of all) { this.clearTimers(c); c.ready = false; }
    this.host.changed();
    await Promise.all(all.map((c) => c.proc?.stop(ms)));
    await this.pushing;
  }

  private condition(type: string, ok: boolean): V1PodCondition {
    const status = ok ? 'True' : 'False';
    let t = this.transitions.get(type);
    if (!t || t.status !== status) { t = { status, time: now() }; this.transitions.set(type, t); }
    return { type, status, lastTransitionTime: t.time as unknown as Date, lastProbeTime: null as unknown as Date };
  }

  private containerStatus(c: ContainerRun): object {
    return {
      name: c.spec.name, image: c.spec.image ?? '', imageID: `svc-test://${c.spec.image ?? ''}`,
      containerID: c.proc?.pid ? `svc-test://${c.proc.pid}` : undefined,
      ready: c.ready, started: c.init ? undefined : c.started && c.state.running !== undefined,
      restartCount: c.restartCount, state: c.state, lastState: c.lastState ?? {},
    };
  }

  /** The pod status as this runner sees it. */
  status(): object {
    const main = this.containers;
    const policy = this.restartPolicy();
    const done = (c: ContainerRun): boolean => c.state.terminated !== undefined &&
      (policy === 'Never' || (policy === 'OnFailure' && c.state.terminated.exitCode === 0));
    let phase = 'Pending';
    if (this.initialized && main.every(done)) {
      phase = main.every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
    } else if (this.initialized && main.some((c) => c.proc)) {
      phase = 'Running';
    } else if (!this.initialized && policy === 'Never' && this.inits.some((c) => (c.state.terminated?.exitCode ?? 0) !== 0)) {
      phase = 'Failed';
    }
    const ready = this.ready;
    return {
      phase,
      hostIP: '127.0.0.1', hostIPs: [{ ip: '127.0.0.1' }],
      podIP: this.ip, podIPs: [{ ip: this.ip }],
      startTime: this.startTime,
      conditions: [
        this.condition('Initialized', this.initialized),
        this.condition('ContainersReady', ready),
        this.condition('Ready', ready),
      ],
      message: this.failedToStart,
      initContainerStatuses: this.inits.length ? this.inits.map((c) => this.containerStatus(c)) : undefined,
      containerStatuses: main.map((c) => this.containerStatus(c)),
    };
  }

  /** Pushes the status soon, coalescing bursts of changes. */
  private schedulePush(): void {
    this.dirty = true;
    if (this.pushing) return;
    this.pushing = (async () => {
      while (this.dirty) {
        this.dirty = false;
        try {
          await this.host.pushStatus(this.namespace, this.name, this.status());
        } catch (e) {
          this.host.log(`status of ${this.namespace}/${this.name}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      this.pushing = undefined;
    })();
  }
}
