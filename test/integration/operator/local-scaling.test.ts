// Scaling with the local runtime against real svc processes: `local apply` grows a 1-member cluster to 3 through
// learners (each added as a learner, the member list shows isLearner while it catches up, promoted once caught up),
// resuming a member that was added to the cluster but never started (what an orchestrator killed between
// MemberAdd and the start leaves) with a start and no second add, then shrinks it back to 1, data intact.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import type { StepPrinter } from '../../../operator/cli/printer.js';
import type { StepEvent } from '../../../operator/orchestrator/index.js';
import { useLocalRuntime } from './local-fixture.js';

const manifest = (replicas: number): SvcCluster => ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'sc' }, spec: withDefaults({ version: '3.4.34', replicas }) });

describe('operator local runtime: scaling against real processes', function () {
  this.timeout(180_000);
  const { stateDir, rt, mc } = useLocalRuntime('sc');

  it('1 -> 3 (resuming an added, never started member) -> 1, every key intact, removed data dirs gone', async () => {
    expect((await applyCluster(manifest(1), { stateDir })).outcome).to.equal('steady');
    const url0 = (await rt.members())[0].clientURL;
    const c = await Client.connect({ endpoints: [url0] });
    try {
      for (let i = 0; i < 20; i++) await c.put(`scale/${i}`, `v${i}`);
    } finally {
      c.close();
    }

    // The first half of an add, as an orchestrator killed right after MemberAdd leaves it: a learner, which
    // changes no quorum (1 -> 2 keeps the one member's quorum until the learner is promoted).
    await mc.memberAdd(url0, await rt.peerURL('sc-1'), { isLearner: true });
    expect((await mc.memberList(url0)).filter((m) => m.isLearner)).to.have.length(1);
    const c1 = await Client.connect({ endpoints: [url0] });
    try {
      await c1.put('scale/with-learner', 'ok'); // a learner not yet started costs no quorum
    } finally {
      c1.close();
    }
    // every learner the passes saw in the member list (sc-1 and sc-2 while they catch up)
    const learners = new Set<string>();
    const printer = { step: (e: StepEvent) => { for (const c of e.observed.clusterMembers ?? []) if (c.isLearner && c.member) learners.add(c.member); }, line: () => undefined } as unknown as StepPrinter;
    const up = await applyCluster(manifest(3), { stateDir, printer });
    expect(up.outcome, up.error ?? JSON.stringify(up.step)).to.equal('steady');
    expect(up.actions).to.deep.equal(['startMember sc-1', 'promoteMember sc-1', 'addMember sc-2', 'promoteMember sc-2']);
    expect([...learners].sort()).to.deep.equal(['sc-1', 'sc-2']);
    const listed = await mc.memberList(url0);
    expect(listed.map((m) => m.name).sort()).to.deep.equal(['sc-0', 'sc-1', 'sc-2']);
    expect(listed.filter((m) => m.isLearner)).to.deep.equal([]);
    const st = rt.state()!;
    expect(st.members.map((m) => m.name)).to.deep.equal(['sc-0', 'sc-1', 'sc-2']);
    expect(st.members[2].join).to.deep.equal(['sc-0', 'sc-1', 'sc-2']);

    const down = await applyCluster(manifest(1), { stateDir });
    expect(down.outcome, down.error ?? JSON.stringify(down.step)).to.equal('steady');
    expect(down.actions.filter((a) => !a.startsWith('moveLeader'))).to.deep.equal(['removeMember sc-2', 'removeMember sc-1']);
    expect(rt.state()!.members.map((m) => m.name)).to.deep.equal(['sc-0']);
    expect(existsSync(join(stateDir, 'data', 'sc-1'))).to.equal(false);
    expect(existsSync(join(stateDir, 'data', 'sc-2'))).to.equal(false);
    expect((await mc.memberList(url0)).map((m) => m.name)).to.deep.equal(['sc-0']);
    const r = await Client.connect({ endpoints: [url0] });
    try {
      expect((await r.get('scale/', { prefix: true })).kvs).to.have.length(21);
    } finally {
      r.close();
    }
  });
});
