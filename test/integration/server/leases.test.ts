// Leases seen from every member of a 3-member svc cluster: TimeToLive answers the remaining TTL whichever
// member is asked (the reference forwards it to the leader, which alone tracks expiry), and a revoke removes
// the attached keys everywhere.
import { expect } from 'chai';
import { b64, useSvcClusters } from '../../../harness/svc-cluster.js';

describe('svc leases across members', function () {
  this.timeout(90000);
  const clusters = useSvcClusters({ closeAfter: 'all' });

  it('TimeToLive through any member reports the remaining TTL; revoke removes attached keys everywhere', async () => {
    const c = await clusters.start({ size: 3 });
    const leader = await c.leader();
    const follower = [0, 1, 2].find((i) => i !== leader)!;
    const grant = await c.post(follower, '/v3/lease/grant', { TTL: '60' });
    expect(grant.status, grant.text).to.equal(200);
    const id = String(grant.body.ID);
    const put = await c.post(follower, '/v3/kv/put', { key: b64('lease/attached'), value: b64('v'), lease: id });
    expect(put.status, put.text).to.equal(200);

    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const t = await c.post(i, '/v3/lease/timetolive', { ID: id, keys: true });
      expect(t.status, t.text).to.equal(200);
      const ttl = Number(t.body.TTL);
      if (!(ttl > 0 && ttl <= 60)) answers.push(`${c.members[i].name} (${i === leader ? 'leader' : 'follower'}): TTL ${String(t.body.TTL)}`);
      expect(t.body.grantedTTL).to.equal('60');
      expect(t.body.keys).to.deep.equal([b64('lease/attached')]);
    }
    expect(answers, 'members answering a TTL outside (0, 60] for a live 60 s lease').to.deep.equal([]);

    const revoke = await c.post(follower, '/v3/lease/revoke', { ID: id });
    expect(revoke.status, revoke.text).to.equal(200);
    for (let i = 0; i < 3; i++) expect(await c.get(i, 'lease/attached'), `key of the revoked lease on ${c.members[i].name}`).to.equal(undefined);
    const gone = await c.post(follower, '/v3/lease/timetolive', { ID: id });
    expect(gone.body.TTL).to.equal('-1');
  });
});
