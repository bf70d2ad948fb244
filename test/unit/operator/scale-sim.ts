// The simulated cluster of sim.ts with a member list: MemberAdd registers a member that has not started (no
// name in the list until it runs), the runtime starts the next ordinal, MemberRemove takes a member out (it
// shuts itself down), the runtime retires the highest ordinal. A leader exists only with a quorum of the
// registered voters up. Safety rules broken by an action are recorded in `violations`.
import type { ObservedCluster } from '../../../operator/planner/types.js';
import { CATCH_UP_SLACK } from '../../../operator/planner/plan.js';
import { Sim, type SimMember } from './sim.js';

export class ScaleSim extends Sim {
  /** The cluster's member list (id, name); a name is "started" once the member ran. */
  cluster: Array<{ id: string; name: string }>;
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
    const up = this.cluster.filter((c) => this.members.some((m) => m.name === c.name && this.up(m))).length;
    return up > this.cluster.length / 2;
  }

  override observe(): ObservedCluster {
    const o = super.observe();
    if (!this.quorum()) for (const m of o.members) m.leader = false;
    const leader = o.members.some((m) => m.leader);
    if (!leader && !o.members.some((m) => m.running && m.release !== undefined)) return o;
    return { ...o, clusterMembers: this.cluster.map((c) => ({ id: c.id, member: c.name, started: this.started.has(c.name) })), clusterMembersByLeader: leader };
  }

  override tick(ms = 1000): void {
    super.tick(ms);
    for (const m of this.members) if (m.running && m.downTicks === 0 && this.cluster.some((c) => c.name === m.name)) this.started.add(m.name);
    if (!this.quorum()) for (const m of this.members) m.leader = false;
    else if (!this.members.some((m) => m.leader)) this.elect();
  }

  /** MemberAdd (through the leader). */
  memberAdd(name: string): void {
    this.adds[name] = (this.adds[name] ?? 0) + 1;
    if (this.cluster.some((c) => c.name === name)) this.violations.push(`${name} added twice`);
    if (this.cluster.some((c) => !this.started.has(c.name))) this.violations.push(`${name} added while another added member has not started`);
    const leader = this.members.find((m) => m.leader && this.up(m));
    if (!leader || !this.quorum()) this.violations.push(`${name} added without a leader`);
    const down = this.members.filter((m) => !this.up(m));
    if (down.length > 0) this.violations.push(`${name} added while ${down.map((m) => m.name).join(',')} down`);
    const lagging = this.members.filter((m) => leader && leader.applied - m.applied > CATCH_UP_SLACK);
    if (lagging.length > 0) this.violations.push(`${name} added while ${lagging.map((m) => m.name).join(',')} lag`);
    if (new Set(this.members.map((m) => m.release)).size > 1) this.violations.push(`${name} added during an upgrade`);
    this.cluster.push({ id: String(this.nextId++), name });
  }

  /** The runtime starts a registered member (the next ordinal); idempotent. */
  startMember(name: string): void {
    if (this.members.some((m) => m.name === name)) return;
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
    const down = this.members.filter((x) => !this.up(x));
    if (down.length > 0) this.violations.push(`${reg.name} removed while ${down.map((x) => x.name).join(',')} down`);
    if (new Set(this.members.map((x) => x.release)).size > 1) this.violations.push(`${reg.name} removed during an upgrade`);
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
