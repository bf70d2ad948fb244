// Membership changes on a live svc cluster: a fourth member joins with --initial-cluster-state existing
// and receives the data; a removed member's process exits.
import { expect } from 'chai';
import { useSvcClusters, type SvcCluster } from '../../../harness/svc-cluster.js';
import { sleep } from '../../../harness/process.js';

interface MemberJson {
  ID: string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
}

async function memberList(c: SvcCluster, i: number): Promise<MemberJson[]> {
  const a = await c.post(i, '/v3/cluster/member/list', {});
  expect(a.status, a.text).to.equal(200);
  return (a.body.members as MemberJson[]) ?? [];
}

describe('svc cluster: member add and remove', function () {
  this.timeout(120000);
  const clusters = useSvcClusters({ closeAfter: 'all' });

  it('a 4th member joins an existing cluster, gets the data and takes writes', async () => {
    const c = await clusters.start({ size: 3 });
    await c.put(0, 'members/before-join', 'old');
    const i = await c.addMember();
    expect(i).to.equal(3);
    const m = c.members[i];
    // Linearizable read through the new member, and a local one once applied.
    expect(await c.get(i, 'members/before-join')).to.equal('old');
    await c.put(i, 'members/via-new', 'new');
    expect(await c.get(0, 'members/via-new')).to.equal('new');
    const list = await memberList(c, 1);
    expect(list).to.have.length(4);
    const joined = list.find((x) => x.peerURLs?.includes(m.peerURL));
    expect(joined, 'the new member in member list').to.not.equal(undefined);
    // Its attributes are published once it has started (name and client URLs fill in).
    const deadline = Date.now() + 15000;
    for (;;) {
      const now = (await memberList(c, 0)).find((x) => x.peerURLs?.includes(m.peerURL));
      if (now?.name === m.name && now.clientURLs?.includes(m.clientURL)) break;
      if (Date.now() > deadline) expect.fail(`member list never showed ${m.name}'s attributes: ${JSON.stringify(now)}`);
      await sleep(200);
    }
    expect(await c.memberId(i)).to.equal(joined!.ID);
  });

  it('a removed member leaves the list and its process exits', async () => {
    const c = clusters.last();
    const leader = await c.leader();
    const victim = [0, 1, 2, 3].find((i) => i !== leader)!;
    const id = await c.memberId(victim);
    await c.removeMember(victim);
    const st = await Promise.race([c.members[victim].process.exited, sleep(20000).then(() => null)]);
    expect(st, `${c.members[victim].name} still running 20 s after its removal`).to.not.equal(null);
    expect(st, 'exit status of the removed member').to.deep.equal({ code: 0, signal: null });
    const others = c.running();
    expect(others).to.have.length(3);
    const list = await memberList(c, others[0]);
    expect(list.map((x) => x.ID)).to.not.include(id);
    expect(list).to.have.length(3);
    // The remaining three still form a working cluster.
    await c.put(others[1], 'members/after-remove', 'ok');
    expect(await c.get(others[2], 'members/after-remove')).to.equal('ok');
  });

  it('a 1-member cluster accepts a second voter (the reference\'s exception to the strict reconfiguration check)', async () => {
    await clusters.close();
    const c = await clusters.start({ size: 1 });
    await c.put(0, 'members/solo', 'one');
    const i = await c.addMember();
    expect(await c.get(i, 'members/solo')).to.equal('one');
    await c.put(i, 'members/pair', 'two');
    expect(await c.get(0, 'members/pair')).to.equal('two');
  });
});
