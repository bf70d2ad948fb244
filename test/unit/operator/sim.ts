// A simulated cluster for planner tests: members that go down when restarted and come back on the new
// release a few ticks later, leadership that moves on request (or by election when a leader stops), a
// cluster version that follows the lowest member release, and transient unhealthiness on demand.
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { beginStep, noteMembersDone, plan, type Step, type UpgradeProgress } from '../../../operator/planner/index.js';
import type { LossCause, ObservedCluster, ObservedMember } from '../../../operator/planner/types.js';

export interface SimMember {
  name: string;
  id: string;
  configured: string;
  release: string;
  running: boolean;
  /** Ticks until a restarting member is up again (0: up). */
  downTicks: number;
  /** Ticks of a transient illness left. */
  sickTicks: number;
  leader: boolean;
  applied: number;
  /** Starts on the target (counted by tests). */
  starts: Record<string, number>;
  /** Its data is gone (the runtime's evidence): it cannot come back. */
  lost?: LossCause;
}

const minor = (v: string) => v.split('.').slice(0, 2).join('.');

/** The simulated cluster. */
export class Sim {
  members: SimMember[];
  /** Cluster version, "3.3". */
  cv: string;
  now = 1_000_000;
  leaderChanges = 0;
  auth = false;
  v2Bytes = 0;
  /** Set when an action broke a safety rule (two members down, leader stopped while leader...). */
  violations: string[] = [];

  constructor(n: number, version: string, leaderIndex = 0) {
    this.members = Array.from({ length: n }, (_, i) => ({
      name: `m${i}`,
      id: String(1000 + i),
      configured: version,
      release: version,
      running: true,
      downTicks: 0,
      sickTicks: 0,
      leader: i === leaderIndex % n,
      applied: 100,
      starts: {},
    }));
    this.cv = minor(version);
  }

  protected up(m: SimMember): boolean {
    return m.running && m.downTicks === 0 && m.sickTicks === 0;
  }

  /** What the planner would observe now. */
  observe(): ObservedCluster {
    const members: ObservedMember[] = this.members.map((m) => {
      const up = this.up(m);
      return {
        name: m.name,
        id: m.id,
        configuredVersion: m.configured,
        running: m.running,
        release: m.running && m.downTicks === 0 ? m.release : undefined,
        clusterVersion: m.running && m.downTicks === 0 ? `${this.cv}.0` : undefined,
        healthy: up,
        leader: up && m.leader,
        appliedIndex: m.running && m.downTicks === 0 ? m.applied : undefined,
      };
    });
    return { now: this.now, members, authEnabled: this.auth, v2DataBytes: this.v2Bytes };
  }

  /** Time passes: restarting members come up, illnesses heal, the cluster version follows the members. */
  tick(ms = 1000): void {
    this.now += ms;
    for (const m of this.members) {
      if (m.downTicks > 0) {
        m.downTicks--;
        if (m.downTicks === 0) m.applied = Math.max(...this.members.map((x) => x.applied));
      }
      if (m.sickTicks > 0) m.sickTicks--;
      if (this.up(m)) m.applied += 1;
    }
    if (!this.members.some((m) => m.leader && m.running && m.downTicks === 0)) this.elect();
    if (this.members.every((m) => this.up(m))) {
      const low = this.members.map((m) => minor(m.release)).sort()[0];
      if (low > this.cv) this.cv = low;
    }
  }

  protected elect(): void {
    const cand = this.members.filter((m) => this.up(m)).sort((a, b) => b.applied - a.applied)[0];
    if (!cand) return;
    for (const m of this.members) m.leader = m === cand;
    this.leaderChanges++;
  }

  /** A member falls ill for `ticks`. */
  sicken(i: number, ticks: number): void {
    this.members[i % this.members.length].sickTicks = ticks;
  }

  /** The runtime records the new release (the first half of a restart). */
  configure(name: string, version: string): void {
    this.member(name).configured = version;
  }

  /** The runtime stops the member and starts it on its configured release. */
  restart(name: string): void {
    const m = this.member(name);
    const othersDown = this.members.filter((x) => x !== m && !this.up(x));
    if (othersDown.length > 0) this.violations.push(`restart of ${name} while ${othersDown.map((x) => x.name).join(',')} down`);
    if (m.leader && this.members.length > 1) this.violations.push(`restart of ${name} while it is the leader`);
    if (minor(m.configured) > this.cv && Number(minor(m.configured).split('.')[1]) > Number(this.cv.split('.')[1]) + 1) this.violations.push(`${name} started more than one minor above the cluster`);
    if (m.leader) {
      m.leader = false;
      this.leaderChanges++;
    }
    m.release = m.configured;
    m.downTicks = 2;
    m.starts[m.configured] = (m.starts[m.configured] ?? 0) + 1;
  }

  /** MoveLeader to `to`. */
  moveLeader(from: string, to: string): void {
    const f = this.member(from);
    const t = this.member(to);
    if (!f.leader) throw new Error(`${from} is not the leader`);
    f.leader = false;
    t.leader = true;
    this.leaderChanges++;
  }

  member(name: string): SimMember {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`no member ${name}`);
    return m;
  }
}

/** Where the orchestrator dies around a step: before it acts, halfway through the act, or after it but before the next pass. */
export type Crash = 'before' | 'mid' | 'after';

/** A step as driveToSteady hands it over: its number, the crash planned in it (none before), the progress begun for it. */
export interface Taking {
  stepNo: number;
  crash: 'mid' | 'after' | undefined;
  stored: UpgradeProgress | undefined;
  /** The kinds of the steps so far, this one last (a test may note more). */
  kinds: string[];
}

/**
 * Runs the planner against `sim` until steady, for at most `ticks` ticks: each step is begun (write-ahead), then
 * `take` acts it on the sim, unless the orchestrator dies before it (`crashes`, by step number), and returns the
 * progress after it; the member `sick` names falls ill right after that step. A blocked plan is an error.
 */
export function driveToSteady(
  sim: Sim,
  s: SvcClusterSpec,
  faults: { crashes: Map<number, Crash>; sick: Map<number, number> },
  ticks: number,
  take: (step: Step, t: Taking) => UpgradeProgress | undefined,
): { kinds: string[]; stored: UpgradeProgress | undefined } {
  let stored: UpgradeProgress | undefined;
  let stepNo = 0;
  const kinds: string[] = [];
  for (let tick = 0; tick < ticks; tick++) {
    const o = sim.observe();
    stored = noteMembersDone(stored, o);
    const step = plan(s, o, stored);
    if (step.kind === 'blocked') throw new Error(`blocked: ${step.reason}`);
    if (step.kind === 'steady') return { kinds, stored };
    if (step.kind !== 'wait') {
      stepNo++;
      kinds.push(step.kind);
      stored = beginStep(stored, step, sim.now);
      const crash = faults.crashes.get(stepNo);
      if (crash !== 'before') stored = take(step, { stepNo, crash, stored, kinds });
      const sickMember = faults.sick.get(stepNo);
      if (sickMember !== undefined) sim.sicken(sickMember, 3);
    }
    sim.tick();
  }
  throw new Error(`the simulation did not reach steady in ${ticks} ticks: ${JSON.stringify(plan(s, sim.observe(), stored))}`);
}
