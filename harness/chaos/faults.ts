// The faults a chaos run injects. Each takes the cluster from healthy to broken and back: inject, hold,
// heal. Targets are roles (the leader, a follower, a quorum), resolved when the fault fires, with the
// choices drawn from the run's seeded PRNG.

import { httpGet, sleep } from '../process.js';
import { HarnessError } from '../errors.js';
import type { ChaosCluster } from './cluster.js';
import type { Rng } from './rng.js';
import type { Workload } from './workload.js';

export const PROCESS_FAULTS = [
  'kill-follower',
  'term-follower',
  'kill-leader',
  'term-leader',
  'kill-quorum',
  'term-quorum',
  'kill-all',
  'term-all',
] as const;
export const NETWORK_FAULTS = ['blackhole-follower', 'blackhole-leader', 'delay-peer', 'drop-peer'] as const;
export const SPECIAL_FAULTS = ['snapshot-catchup', 'rolling-upgrade', 'nospace', 'defrag'] as const;

export type FaultKind = (typeof PROCESS_FAULTS)[number] | (typeof NETWORK_FAULTS)[number] | (typeof SPECIAL_FAULTS)[number];

/** One planned fault: what, how long it holds, and the quiet time before it. */
export interface FaultStep {
  kind: FaultKind;
  holdMs: number;
  pauseMs: number;
}

/** What happened when a fault ran. */
export interface FaultRecord {
  kind: FaultKind;
  detail: string;
  /** History times (ms). */
  injectedAt: number;
  healedAt: number;
  /** Time from heal until every running member answered /health 200. */
  recoveryMs: number;
}

export interface FaultContext {
  cluster: ChaosCluster;
  rand: Rng;
  workload: Workload;
  now: () => number;
  log: (line: string) => void;
  /** Versions of a rolling upgrade after the starting one. */
  upgradePath?: readonly string[];
  /** --snapshot-count of the run (the catch-up fault writes several times this many entries). */
  snapshotCount?: number;
}

const ALL_SIGNAL: Record<string, 'SIGKILL' | 'SIGTERM'> = { kill: 'SIGKILL', term: 'SIGTERM' };

/** Runs one fault through inject, hold and heal; returns what it did (recovery measured by the caller). */
export async function runFault(step: FaultStep, ctx: FaultContext): Promise<Omit<FaultRecord, 'recoveryMs'>> {
  const { cluster, rand } = ctx;
  const leader = await cluster.waitLeader(30000);
  const followers = cluster.running().filter((i) => i !== leader);
  const name = (i: number) => cluster.members[i].name;
  const injectedAt = ctx.now();
  let detail: string;

  if ((PROCESS_FAULTS as readonly string[]).includes(step.kind)) {
    const [how, whom] = step.kind.split('-') as [string, string];
    const sig = ALL_SIGNAL[how];
    const quorum = Math.floor(cluster.members.length / 2) + 1;
    let targets: number[];
    if (whom === 'follower') targets = [rand.pick(followers)];
    else if (whom === 'leader') targets = [leader];
    else if (whom === 'quorum') targets = rand.shuffle(cluster.running()).slice(0, quorum);
    else targets = cluster.running();
    detail = `${sig} ${targets.map(name).join(',')} (leader was ${name(leader)}), down ${step.holdMs} ms`;
    ctx.log(`fault ${step.kind}: ${detail}`);
    await Promise.all(targets.map((i) => cluster.signal(i, sig)));
    await sleep(step.holdMs);
    for (const i of targets) cluster.restart(i);
    return { kind: step.kind, detail, injectedAt, healedAt: ctx.now() };
  }

  if ((NETWORK_FAULTS as readonly string[]).includes(step.kind)) {
    const target = step.kind === 'blackhole-leader' ? leader : step.kind === 'blackhole-follower' ? rand.pick(followers) : rand.pick(cluster.running());
    const proxy = cluster.members[target].proxy;
    if (step.kind === 'delay-peer') {
      const ms = 50 + rand.int(400);
      proxy.setMode({ kind: 'delay', ms });
      detail = `inbound peer traffic of ${name(target)} delayed ${ms} ms for ${step.holdMs} ms`;
    } else if (step.kind === 'drop-peer') {
      const p = 0.05 + rand.next() * 0.3;
      proxy.setMode({ kind: 'drop', p });
      detail = `inbound peer connections of ${name(target)} reset with p=${p.toFixed(2)} per chunk for ${step.holdMs} ms`;
    } else {
      proxy.setMode({ kind: 'blackhole' });
      detail = `inbound peer traffic of ${name(target)}${target === leader ? ' (leader)' : ''} blackholed for ${step.holdMs} ms`;
    }
    ctx.log(`fault ${step.kind}: ${detail}`);
    await sleep(step.holdMs);
    proxy.setMode({ kind: 'pass' });
    return { kind: step.kind, detail, injectedAt, healedAt: ctx.now() };
  }

  switch (step.kind) {
    case 'snapshot-catchup':
      return snapshotCatchup(step, ctx, rand.pick(followers), injectedAt);
    case 'rolling-upgrade':
      return rollingUpgrade(step, ctx, injectedAt);
    case 'nospace':
      return noSpace(step, ctx, injectedAt);
    case 'defrag': {
      // Online defragmentation of every member, several rounds, while the clients keep going.
      const rounds = 3;
      for (let n = 0; n < rounds; n++) {
        for (const i of cluster.running()) {
          const a = await cluster.post(i, '/v3/maintenance/defragment', {}, 60000);
          if (a.status !== 200) throw new Error(`defragment ${cluster.members[i].name}: HTTP ${a.status} ${a.text}`);
        }
        await sleep(step.holdMs / rounds);
      }
      return { kind: 'defrag', detail: `${rounds} rounds of defragmenting every member under load`, injectedAt, healedAt: ctx.now() };
    }
    default:
      throw new Error(`unknown fault ${step.kind}`);
  }
}

/** Stops a follower, writes well past the snapshot threshold, restarts it: it must catch up from a snapshot. */
async function snapshotCatchup(step: FaultStep, ctx: FaultContext, target: number, injectedAt: number): Promise<Omit<FaultRecord, 'recoveryMs'>> {
  const { cluster } = ctx;
  const m = cluster.members[target];
  const sig = ctx.rand.next() < 0.5 ? 'SIGKILL' : 'SIGTERM';
  const entries = (ctx.snapshotCount ?? 100) * 4;
  ctx.log(`fault snapshot-catchup: ${sig} ${m.name}, ${entries} filler writes, restart`);
  const logFrom = cluster.logSize(target);
  await cluster.signal(target, sig);
  const t0 = Date.now();
  let written = 0;
  for (let n = 0; n < entries; n++) {
    const via = cluster.running();
    try {
      await ctx.workload.conn(via[n % via.length]).put(`fill/${n % 50}`, `filler-${n}`);
      written++;
    } catch {
      await sleep(20);
    }
  }
  if (Date.now() - t0 < step.holdMs) await sleep(step.holdMs - (Date.now() - t0));
  cluster.restart(target);
  const healedAt = ctx.now();
  // The restarted member logs 'applying snapshot' when the leader had to send it one.
  let viaSnapshot = false;
  for (let t = 0; t < 100 && !viaSnapshot; t++) {
    viaSnapshot = cluster.log(target).slice(logFrom).includes('applying snapshot');
    if (!viaSnapshot) await sleep(100);
  }
  const detail = `${sig} ${m.name}, ${written} writes while down, restarted; caught up ${viaSnapshot ? 'from a snapshot' : 'from the log (no snapshot seen)'}`;
  return { kind: step.kind, detail, injectedAt, healedAt };
}

/** Restarts members one at a time on each next release (followers first, leader last), killing one member in the middle. */
async function rollingUpgrade(step: FaultStep, ctx: FaultContext, injectedAt: number): Promise<Omit<FaultRecord, 'recoveryMs'>> {
  const { cluster, rand } = ctx;
  const path = ctx.upgradePath ?? ['3.4.34', '3.5.21'];
  const notes: string[] = [];
  const stepsTotal = path.length * cluster.members.length;
  const killAt = rand.int(stepsTotal);
  let stepNo = 0;
  for (const version of path) {
    const leader = await cluster.waitLeader(30000);
    const order = [...cluster.members.map((m) => m.index).filter((i) => i !== leader), leader];
    for (const i of order) {
      await cluster.signal(i, 'SIGTERM');
      await sleep(step.holdMs);
      cluster.restart(i, version);
      notes.push(`${cluster.members[i].name}->${version}`);
      ctx.log(`upgrade: ${cluster.members[i].name} restarted as ${version}`);
      if (stepNo++ === killAt) {
        const victim = rand.pick(cluster.members.map((m) => m.index));
        await sleep(200);
        await cluster.signal(victim, 'SIGKILL');
        await sleep(step.holdMs);
        cluster.restart(victim);
        notes.push(`SIGKILL ${cluster.members[victim].name}`);
        ctx.log(`upgrade: SIGKILL ${cluster.members[victim].name} (restarted as ${cluster.members[victim].version || 'newest'})`);
      }
      await cluster.waitHealthy(30000);
    }
    // Every member runs `version` now; the leader must move the cluster version up before the next
    // minor may start (a member two minors ahead of the cluster version refuses to run).
    const want = version.split('.').slice(0, 2).join('.');
    await waitClusterVersion(cluster, want, 30000);
    notes.push(`cluster version ${want}`);
  }
  return { kind: 'rolling-upgrade', detail: notes.join(', '), injectedAt, healedAt: ctx.now() };
}

/** Fills the backend past its quota (NOSPACE), holds, then recovers: delete, compact, defrag, disarm. */
async function noSpace(step: FaultStep, ctx: FaultContext, injectedAt: number): Promise<Omit<FaultRecord, 'recoveryMs'>> {
  const { cluster } = ctx;
  const big = Buffer.alloc(64 * 1024, 'x');
  let n = 0;
  let raised = false;
  for (; n < 2000 && !raised; n++) {
    const via = cluster.running()[n % cluster.running().length];
    try {
      await ctx.workload.conn(via).put(`fill/big/${n}`, big);
    } catch (e) {
      raised = /database space exceeded/.test((e as Error).message);
      if (!raised) await sleep(20);
    }
  }
  ctx.log(`fault nospace: ${n} x 64 KiB writes, alarm ${raised ? 'raised' : 'NOT raised'}`);
  await sleep(step.holdMs);
  const leader = await cluster.waitLeader(30000);
  const ok = (a: { status: number; text: string }, what: string) => {
    if (a.status !== 200) throw new Error(`nospace recovery: ${what}: HTTP ${a.status} ${a.text}`);
  };
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  ok(await cluster.post(leader, '/v3/kv/deleterange', { key: b64('fill/'), range_end: b64('fill0') }), 'delete fill/');
  const st = await cluster.post(leader, '/v3/maintenance/status', {});
  const rev = (st.body.header as { revision?: string } | undefined)?.revision ?? '0';
  ok(await cluster.post(leader, '/v3/kv/compaction', { revision: rev, physical: true }, 30000), `compact ${rev}`);
  for (const i of cluster.running()) ok(await cluster.post(i, '/v3/maintenance/defragment', {}, 60000), `defragment ${cluster.members[i].name}`);
  ok(await cluster.post(leader, '/v3/maintenance/alarm', { action: 'DEACTIVATE', memberID: '0', alarm: 'NOSPACE' }), 'alarm disarm');
  // Disarm each member's own alarm too (the gateway lists them; member id 0 may not match every alarm).
  const list = await cluster.post(leader, '/v3/maintenance/alarm', { action: 'GET' });
  for (const a of (list.body.alarms as Array<{ memberID?: string; alarm?: string }> | undefined) ?? []) {
    ok(await cluster.post(leader, '/v3/maintenance/alarm', { action: 'DEACTIVATE', memberID: a.memberID ?? '0', alarm: a.alarm ?? 'NOSPACE' }), 'alarm disarm');
  }
  return { kind: 'nospace', detail: `${n} big writes, alarm ${raised ? 'raised' : 'not raised'}, compacted at ${rev}, defragmented, disarmed`, injectedAt, healedAt: ctx.now() };
}

/** Waits until every running member's /version reports etcdcluster `<minor>.0`. */
async function waitClusterVersion(cluster: ChaosCluster, minor: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answers = await Promise.all(cluster.running().map((i) => httpGet(`${cluster.members[i].clientURL}/version`).then((r) => r.body, (e: Error) => e.message)));
    if (answers.every((a) => a.includes(`"etcdcluster":"${minor}.0"`))) return;
    if (Date.now() > deadline) throw new HarnessError('TIMEOUT', `the cluster version did not reach ${minor} within ${timeoutMs} ms: ${answers.join(' ')}`);
    await sleep(500);
  }
}
