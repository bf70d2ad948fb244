// The faults a chaos run injects. Each takes the cluster from healthy to broken and back: inject, hold,
// heal. Targets are roles (the leader, a follower, a quorum), resolved when the fault fires, with the
// choices drawn from the run's seeded PRNG.

import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { httpGet, sleep } from '../process.js';
import type { GatewayAnswer } from '../svc-cluster.js';
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
export const SPECIAL_FAULTS = ['snapshot-catchup', 'rolling-upgrade', 'nospace', 'defrag', 'replace'] as const;

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
  /** What the fault itself found wrong (a refusal that did not happen, a replacement that did not finish). */
  anomalies?: string[];
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
    case 'replace':
      // the leader or a follower, half and half
      return replaceMember(step, ctx, rand.next() < 0.5 ? leader : rand.pick(followers), leader, injectedAt);
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

interface ListedMember {
  ID: string;
  name?: string;
  peerURLs?: string[];
  isLearner?: boolean;
}

const hexId = (decimal: string) => BigInt(decimal).toString(16);

/**
 * A member loses its disk under load (SIGKILL, data dir deleted) and is replaced as svc-operator replaces it: first
 * the hazard is shown refused (started again as it was, it must stop with "has already been bootstrapped" and write
 * nothing), then MemberRemove of its old ID, MemberAdd of its peer URL as a learner, a start on an empty data dir
 * with --initial-cluster-state existing, and MemberPromote once it caught up. It comes back under a new member ID.
 * A step that does not hold is an anomaly of the record, and the steps after it are not tried.
 */
async function replaceMember(step: FaultStep, ctx: FaultContext, target: number, leader: number, injectedAt: number): Promise<Omit<FaultRecord, 'recoveryMs'>> {
  const { cluster } = ctx;
  const m = cluster.members[target];
  const notes: string[] = [];
  const anomalies: string[] = [];
  const oldId = await cluster.memberId(target);
  const voters = (await memberList(cluster, target)).filter((x) => !x.isLearner).length;
  notes.push(`SIGKILL ${m.name} (${target === leader ? 'leader' : 'follower'}), data dir deleted`);
  ctx.log(`fault replace: ${notes[0]}; member ID ${hexId(oldId)}`);
  await cluster.signal(target, 'SIGKILL');
  const wipe = () => {
    rmSync(m.dataDir, { recursive: true, force: true });
    mkdirSync(m.dataDir, { recursive: true, mode: 0o700 });
  };
  wipe();
  await sleep(step.holdMs);
  let newId: string | undefined;
  const finish = () => {
    const detail = `${notes.join('; ')}; member ID ${hexId(oldId)} -> ${newId ? hexId(newId) : '(not replaced)'}`;
    return { kind: step.kind, detail, injectedAt, healedAt: ctx.now(), anomalies };
  };

  // (1) Started as it was (its old flags, an empty data dir), it must refuse to rejoin under the old ID: it forgot
  // the votes and entries it acknowledged. Its exit is expected, not a crash.
  const state = m.args.find((a) => a.startsWith('--initial-cluster-state='))?.split('=')[1];
  await cluster.startWith(target, { expectExit: true });
  const st = await Promise.race([m.process.exited, sleep(20000).then(() => null)]);
  const refusal = `member ${hexId(oldId)} has already been bootstrapped`;
  const refusedLine = cluster.currentLog(target).split('\n').find((l) => l.includes(refusal));
  if (st === null) {
    anomalies.push(`${m.name} started on an empty data dir with its old flags (--initial-cluster-state ${state}) still runs after 20 s: not refused`);
    await cluster.signal(target, 'SIGKILL');
  } else if (st.code === 0 || st.signal) {
    anomalies.push(`${m.name} on an empty data dir with its old flags ended with ${st.signal ? `signal ${st.signal}` : 'exit code 0'}, not a refusal`);
  }
  if (!refusedLine) anomalies.push(`${m.name} on an empty data dir with its old flags did not log "${refusal}"`);
  const written = readdirSync(m.dataDir);
  if (written.length) {
    anomalies.push(`${m.name}'s refused start wrote to its empty data dir: ${written.join(', ')}`);
    wipe();
  }
  if (anomalies.length === 0) notes.push(`its start with the old flags (--initial-cluster-state ${state}) was refused ("${refusal}", exit code ${st!.code}, data dir left empty)`);

  try {
    // (2) The old ID out, through a healthy member.
    await gatewayUntil(cluster, '/v3/cluster/member/remove', { ID: oldId }, 30000, async () => !(await memberList(cluster)).some((x) => x.ID === oldId));
    // (3) The same peer URL (its proxy's) in again, as a learner: it cannot vote before it holds the log.
    const url = m.advertisedPeerURL;
    const added = await gatewayUntil(cluster, '/v3/cluster/member/add', { peerURLs: [url], isLearner: true }, 30000, async () =>
      (await memberList(cluster)).some((x) => x.peerURLs?.includes(url)),
    );
    newId = (added?.body.member as ListedMember | undefined)?.ID ?? (await memberList(cluster)).find((x) => x.peerURLs?.includes(url))?.ID;
    if (!newId) throw new Error(`MemberAdd of ${url} answered no member ID`);
    notes.push(`removed ${hexId(oldId)}, added ${url} as learner ${hexId(newId)}`);

    // (4) An empty data dir joining the running cluster: --initial-cluster names every current member.
    const initialCluster = cluster.members.filter((x) => !x.removed).map((x) => `${x.name}=${x.advertisedPeerURL}`).join(',');
    const logFrom = cluster.logSize(target);
    await cluster.startWith(target, { initialCluster: { cluster: initialCluster, state: 'existing' } });

    // (5) Promote once the leader finds it in sync; until then the server says so.
    let notInSync = 0;
    for (const deadline = Date.now() + 60000; ; ) {
      if (!cluster.isRunning(target)) throw new Error(`${m.name} exited while catching up as a learner`);
      const via = cluster.running().find((i) => i !== target);
      const a = via === undefined ? undefined : await cluster.post(via, '/v3/cluster/member/promote', { ID: newId }).catch(() => undefined);
      if (a?.status === 200) break;
      if (a?.text.includes('can only promote a learner member which is in sync with leader')) notInSync++;
      // an earlier promote that timed out may have been applied
      else if ((await memberList(cluster).catch(() => [])).some((x) => x.ID === newId && !x.isLearner)) break;
      if (Date.now() > deadline) throw new Error(`learner ${hexId(newId)} not promoted within 60 s (last answer: ${a ? `HTTP ${a.status} ${a.text}` : 'none'})`);
      await sleep(200);
    }
    const viaSnapshot = cluster.log(target).slice(logFrom).includes('applying snapshot');
    notes.push(`started with --initial-cluster-state existing, caught up ${viaSnapshot ? 'from a snapshot' : 'from the log'}, promoted after ${notInSync} not-in-sync answer(s)`);

    // (6) It serves under the new ID, and the member list is whole again.
    const own = await cluster.memberId(target);
    if (own !== newId) anomalies.push(`${m.name} reports member ID ${hexId(own)}, not the added ${hexId(newId)}`);
    const list = await memberList(cluster);
    if (list.some((x) => x.ID === oldId)) anomalies.push(`the old member ID ${hexId(oldId)} is still listed`);
    if (list.filter((x) => !x.isLearner).length !== voters || list.some((x) => x.isLearner)) {
      anomalies.push(`after the replacement the member list is ${JSON.stringify(list)}, not ${voters} voters`);
    }
  } catch (e) {
    anomalies.push(`replacement of ${m.name} did not finish: ${(e as Error).message}`);
  }
  return finish();
}

/** The member list as a running member (other than `not`) answers it. */
async function memberList(cluster: ChaosCluster, not?: number): Promise<ListedMember[]> {
  const via = cluster.running().find((i) => i !== not) ?? cluster.running()[0];
  const a = await cluster.post(via, '/v3/cluster/member/list', {});
  if (a.status !== 200) throw new Error(`member list via ${cluster.members[via].name}: HTTP ${a.status} ${a.text}`);
  return (a.body.members as ListedMember[] | undefined) ?? [];
}

/**
 * POSTs a membership change through the running members in turn until one answers 200 or `done` says an earlier,
 * unanswered attempt took effect (a leader change or a timeout leaves that open). Returns the 200 answer, if any.
 */
async function gatewayUntil(cluster: ChaosCluster, path: string, body: unknown, timeoutMs: number, done: () => Promise<boolean>): Promise<GatewayAnswer | undefined> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (let n = 0; ; n++) {
    const up = cluster.running();
    const via = up[n % up.length];
    try {
      const a = await cluster.post(via, path, body);
      if (a.status === 200) return a;
      last = `HTTP ${a.status} ${a.text}`;
    } catch (e) {
      last = (e as Error).message;
    }
    if (await done().catch(() => false)) return undefined;
    if (Date.now() > deadline) throw new Error(`${path} ${JSON.stringify(body)} failed for ${timeoutMs} ms (last: ${last})`);
    await sleep(300);
  }
}
