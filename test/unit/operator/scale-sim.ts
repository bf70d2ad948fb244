// The simulated cluster of sim.ts with a member list: MemberAdd registers a member that has not started (no
// name in the list until it runs), the runtime starts the next ordinal, MemberRemove takes a member out (it
// shuts itself down), the runtime retires the highest ordinal. A leader exists only with a quorum of the
// registered voters up. Safety rules broken by an action are recorded in `violations`.
import type { LossCause, ObservedCluster } from '../../../operator/planner/types.js';
import { CATCH_UP_SLACK } from '../../../operator/planner/plan.js';
import { Sim, type SimMember } from './sim.js';

export class ScaleSim extends Sim {
  /** The cluster's member list (id, name, learner); a name is "started" once the member ran. */
  cluster: Array<{ id: string; name: string; learner?: boolean }>;
  promotes: Record<string, number> = {};
  /** Members given a fresh data dir (replacements). */
  resets: Record<string, number> = {};
  started = new Set<string>();
  adds: Record<string, number> = {};
  removes: Record<string, number> = {};
  private nextId = 2000;

  constructor(n: number, version: string, leaderIndex = 0) {
    super(n, version, leaderIndex);
    this.cluster = this.members.map((m) => ({ id: m.id, name: m.name }));
    for (const m of this.members) this.started.add(m.name);
  }

  private quorum(): boolean {
    const voters = this.cluster.filter((c) => !c.learner);
    const up = voters.filter((c) => this.members.some((m) => m.name === c.name && this.up(m))).length;
    return up > voters.length / 2;
  }

  /** Only a voting member is elected (never a learner). */
  protected override elect(): void {
    const cand = this.members.filter((m) => this.up(m) && this.cluster.some((c) => c.name === m.name && !c.learner)).sort((a, b) => b.applied - a.applied)[0];
    if (!cand) return;
    for (const m of this.members) m.leader = m === cand;
    this.leaderChanges++;
  }

  override observe(): ObservedCluster {
    const o = super.observe();
    if (!this.quorum()) for (const m of o.members) m.leader = false;
    const leader = o.members.some((m) => m.leader);
    if (!leader && !o.members.some((m) => m.running && m.release !== undefined)) return o;
    for (const m of o.members) {
      const sm = this.members.find((x) => x.name === m.name)!;
      if (sm.lost) m.lost = { cause: sm.lost, detail: 'simulated' };
    }
    return { ...o, clusterMembers: this.cluster.map((c) => ({ id: c.id, member: c.name, started: this.started.has(c.name), ...(c.learner ? { isLearner: true } : {}) })), clusterMembersByLeader: leader };
  }

  override tick(ms = 1000): void {
    super.tick(ms);
    for (const m of this.members) if (m.running && m.downTicks === 0 && this.cluster.some((c) => c.name === m.name)) this.started.add(m.name);
    if (!this.quorum()) for (const m of this.members) m.leader = false;
    else if (!this.members.some((m) => m.leader)) this.elect();
  }

  /** MemberAdd (through the leader); `learner`: counted in no quorum until promoted. */
  memberAdd(name: string, learner = false): void {
    this.adds[name] = (this.adds[name] ?? 0) + 1;
    if (this.cluster.some((c) => c.name === name)) this.violations.push(`${name} added twice`);
    if (this.cluster.some((c) => !this.started.has(c.name))) this.violations.push(`${name} added while another added member has not started`);
    if (this.cluster.some((c) => c.learner)) this.violations.push(`${name} added while a learner is not yet promoted`);
    if (!learner) this.violations.push(`${name} added as a voting member (not as a learner)`);
    const leader = this.members.find((m) => m.leader && this.up(m));
    if (!leader || !this.quorum()) this.violations.push(`${name} added without a leader`);
    // (a member being replaced is itself down: only the others count)
    const down = this.members.filter((m) => m.name !== name && !this.up(m));
    if (down.length > 0) this.violations.push(`${name} added while ${down.map((m) => m.name).join(',')} down`);
    const lagging = this.members.filter((m) => m.name !== name && leader && leader.applied - m.applied > CATCH_UP_SLACK);
    if (lagging.length > 0) this.violations.push(`${name} added while ${lagging.map((m) => m.name).join(',')} lag`);
    if (new Set(this.members.filter((m) => m.name !== name).map((m) => m.release)).size > 1) this.violations.push(`${name} added during an upgrade`);
    const reset = this.members.find((m) => m.name === name);
    if (reset && (reset.running || reset.lost)) this.violations.push(`${name} added back before its data dir was reset`);
    this.started.delete(name);
    this.cluster.push({ id: String(this.nextId++), name, learner });
  }

  /** MemberPromote (through the leader): refused, as the server does, for a learner not in sync with the leader. */
  promote(id: string): void {
    const reg = this.cluster.find((c) => c.id === id);
    if (!reg) throw new Error(`etcdserver: member not found (${id})`);
    if (!reg.learner) throw new Error('etcdserver: can only promote a learner member');
    const m = this.members.find((x) => x.name === reg.name);
    const leader = this.members.find((x) => x.leader && this.up(x));
    if (!m || !leader || !this.up(m) || leader.applied - m.applied > CATCH_UP_SLACK) throw new Error('etcdserver: can only promote a learner member which is in sync with leader');
    this.promotes[reg.name] = (this.promotes[reg.name] ?? 0) + 1;
    reg.learner = false;
  }

  /** The member's data is lost: its process dies and it cannot come back with its data. */
  lose(name: string, cause: LossCause = 'DataLost'): void {
    const m = this.member(name);
    m.lost = cause;
    m.running = false;
    m.leader = false;
  }

  /** The runtime's resetMember: stopped, an empty data dir (no longer lost; it starts under a new ID once added). */
  reset(name: string): void {
    const m = this.member(name);
    if (this.cluster.some((c) => c.name === name && c.id === m.id)) this.violations.push(`${name} reset while its old ID is in the member list`);
    else if (this.cluster.some((c) => c.name === name)) this.violations.push(`${name} reset while its successor is in the member list`);
    this.resets[name] = (this.resets[name] ?? 0) + 1;
    m.lost = undefined;
    m.running = false;
    m.leader = false;
    m.applied = 0;
  }

  /** The runtime starts a registered member (the next ordinal, or one reset for its replacement); idempotent. */
  startMember(name: string): void {
    const existing = this.members.find((m) => m.name === name);
    if (existing) {
      if (existing.running) return;
      const reg = this.cluster.find((c) => c.name === name);
      if (!reg || existing.lost) this.violations.push(`${name} started again without being reset and added`);
      existing.id = reg?.id ?? existing.id;
      existing.running = true;
      existing.downTicks = 2;
      existing.starts[existing.configured] = (existing.starts[existing.configured] ?? 0) + 1;
      return;
    }
    const reg = this.cluster.find((c) => c.name === name);
    if (!reg) this.violations.push(`${name} started without being added`);
    const used = new Set(this.members.map((m) => Number(m.name.slice(1))));
    let k = 0;
    while (used.has(k)) k++;
    if (name !== `m${k}`) this.violations.push(`${name} is not the lowest free ordinal`);
    const version = this.members[0].configured;
    const m: SimMember = { name, id: reg?.id ?? '0', configured: version, release: version, running: true, downTicks: 2, sickTicks: 0, leader: false, applied: 0, starts: { [version]: 1 } };
    this.members.push(m);
    this.members.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
  }

  /**
   * A recovery's restart of `survivor` with --force-new-cluster: the runtime stops the members `lost` and drops them
   * (they join again later under new ids), or keeps them down (`keepLost`); the survivor restarts as the only member
   * of the list, its data kept.
   */
  forceNewCluster(survivor: string, lost: string[], keepLost = false): void {
    const s = this.member(survivor);
    if (this.members.some((m) => m !== s && m.running && this.cluster.some((c) => c.name === m.name) && m.leader)) this.violations.push(`force-new-cluster of ${survivor} while another member leads`);
    // (keepLost: a StatefulSet keeps their pods, which the survivor refuses)
    if (!keepLost) this.members = this.members.filter((m) => !lost.includes(m.name));
    for (const n of lost) this.started.delete(n);
    this.cluster = this.cluster.filter((c) => c.name === survivor);
    s.leader = false;
    s.running = true;
    s.downTicks = 2;
  }

  /** MemberRemove (through the leader): the member leaves the list and shuts down. */
  memberRemove(id: string): void {
    const reg = this.cluster.find((c) => c.id === id);
    if (!reg) {
      this.violations.push(`remove of unknown id ${id}`);
      return;
    }
    this.removes[reg.name] = (this.removes[reg.name] ?? 0) + 1;
    const m = this.members.find((x) => x.name === reg.name);
    if (m?.leader) this.violations.push(`${reg.name} removed while it is the leader`);
    const down = this.members.filter((x) => x.name !== reg.name && !this.up(x));
    if (down.length > 0) this.violations.push(`${reg.name} removed while ${down.map((x) => x.name).join(',')} down`);
    if (new Set(this.members.filter((x) => x.name !== reg.name).map((x) => x.release)).size > 1) this.violations.push(`${reg.name} removed during an upgrade`);
    if (m && !m.lost && m !== this.members.at(-1)) this.violations.push(`${reg.name} removed though its data is intact and it is not the highest ordinal`);
    this.cluster = this.cluster.filter((c) => c !== reg);
    if (m) {
      m.running = false;
      m.leader = false;
    }
  }

  /** The runtime stops the highest ordinal and drops its data; idempotent. */
  retire(name: string): void {
    const last = this.members.at(-1);
    if (!last || last.name !== name) {
      if (this.members.some((m) => m.name === name)) this.violations.push(`${name} retired but it is not the highest ordinal`);
      return;
    }
    if (this.cluster.some((c) => c.name === name)) this.violations.push(`${name} retired while still in the cluster`);
    this.members.pop();
    this.started.delete(name);
  }
}
