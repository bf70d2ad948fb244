// A configuration change through `local apply` (the same engine as the Kubernetes controller): turning on
// `enableV2` restarts the real svc processes one at a time, followers first and the leader last after MoveLeader,
// with reason SpecChange recorded, under a writing client that loses nothing; then turning it off again with the
// orchestrator killed at several points still restarts each member exactly once.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { MemberClient } from '../../../operator/members/index.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { BackgroundWriter } from '../../../operator/workload/writer.js';
import { operatorCli } from './operator-cli.js';

const V = '3.4.34';

const manifest = (enableV2?: boolean): SvcCluster =>
  ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'ro' }, spec: withDefaults({ version: V, replicas: 3, ...(enableV2 === undefined ? {} : { enableV2 }) }) });

/** Starts of each member on V (the start markers in its log). */
function starts(rt: LocalRuntime): Record<string, number> {
  return Object.fromEntries(rt.state()!.members.map((m) => [m.name, readFileSync(m.logFile, 'utf8').split('\n').filter((l) => l.startsWith(`=== svc start ${V} `)).length]));
}

/** PUT /v2/keys/<key> on a member: its HTTP status. */
async function v2Put(url: string, key: string): Promise<number> {
  const r = await fetch(`${url}/v2/keys/${key}`, { method: 'PUT', body: new URLSearchParams({ value: 'x' }), signal: AbortSignal.timeout(5000) });
  await r.arrayBuffer();
  return r.status;
}

describe('operator local runtime: a configuration change rolled out one member at a time', function () {
  this.timeout(240_000);
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-op-rollout-'));
  const rt = new LocalRuntime({ stateDir, name: 'ro' });

  after(async function () {
    this.timeout(60_000);
    await rt.delete().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(`${stateDir}.yaml`, { force: true });
  });

  it('enableV2 on: followers first, the leader last after MoveLeader, reason SpecChange, no failed write; v2 served by every member', async () => {
    expect((await applyCluster(manifest(), { stateDir })).outcome).to.equal('steady');
    const endpoints = (await rt.members()).map((m) => m.clientURL);
    expect(await v2Put(endpoints[0], 'before')).to.equal(404);
    const mc = new MemberClient();
    let leader = '';
    try {
      for (const m of await rt.members()) if (await mc.isLeader(m.clientURL)) leader = m.name;
    } finally {
      mc.close();
    }
    expect(leader).to.match(/^ro-\d$/);
    const writer = new BackgroundWriter({ endpoints, intervalMs: 10 });
    await writer.start();
    const r = await applyCluster(manifest(true), { stateDir });
    const stats = await writer.stop();
    expect(r.outcome, r.error ?? JSON.stringify(r.step)).to.equal('steady');
    const restarts = r.actions.filter((a) => a.startsWith('restartMember')).map((a) => a.split(' ')[1]);
    expect(restarts).to.have.length(3);
    expect(new Set(restarts).size).to.equal(3);
    expect(restarts.at(-1), 'the leader last').to.equal(leader);
    expect(r.actions.at(-2)).to.match(new RegExp(`^moveLeader ${leader} `));
    const ro = rt.state()!.records.rollout!;
    expect(ro).to.include({ reason: 'SpecChange' });
    expect(ro.finishedAt).to.be.a('number');
    expect(ro.membersDone).to.deep.equal(restarts);
    expect(starts(rt)).to.deep.equal({ 'ro-0': 2, 'ro-1': 2, 'ro-2': 2 });
    expect(stats.failed, stats.errors.join('; ')).to.equal(0);
    expect(stats.succeeded).to.be.greaterThan(0);
    for (const [i, u] of endpoints.entries()) expect(await v2Put(u, `after${i}`), u).to.equal(201);
    // applied again: nothing to do
    const again = await applyCluster(manifest(true), { stateDir });
    expect(again.actions).to.deep.equal([]);
    const c = await Client.connect({ endpoints });
    try {
      const got = new Map((await c.get('writer/', { prefix: true })).kvs.map((kv) => [kv.key.toString(), kv.value.toString()]));
      for (const [k, v] of stats.written) expect(got.get(k)).to.equal(v);
    } finally {
      c.close();
    }
  });

  it('enableV2 off with the orchestrator killed at several points: each member restarted exactly once more', async () => {
    const file = `${stateDir}.yaml`;
    writeFileSync(file, `apiVersion: ${API_VERSION}\nkind: ${KIND}\nmetadata:\n  name: ro\nspec:\n  version: ${V}\n  replicas: 3\n  enableV2: false\n`);
    let killed = 0;
    let last = { code: null as number | null, signal: null as NodeJS.Signals | null, out: '' };
    for (const at of ['restartMember:1', 'restartMember:1:acted', 'moveLeader:1:after', '']) {
      last = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir], { SVC_OPERATOR_CRASH_AT: at });
      if (last.signal === 'SIGKILL') killed++;
      else break;
    }
    expect(last.code, last.out).to.equal(0);
    expect(killed).to.equal(3);
    expect(starts(rt)).to.deep.equal({ 'ro-0': 3, 'ro-1': 3, 'ro-2': 3 });
    const ro = rt.state()!.records.rollout!;
    expect(ro.finishedAt).to.be.a('number');
    expect([...ro.membersDone].sort()).to.deep.equal(['ro-0', 'ro-1', 'ro-2']);
    for (const m of await rt.members()) expect(await v2Put(m.clientURL, 'off'), m.name).to.equal(404);
  });
});
