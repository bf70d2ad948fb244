// The JSON gateway of svc 3.5 next to the reference 3.5.21, one member each, asked the same questions with the
// same raw bodies: 64-bit integers sent as JSON numbers arrive exactly (a lease granted with a 19-digit ID and a
// campaign on it), numbers an integer field cannot hold are refused with the reference's error, and HashKV
// answers compact_revision on a store never compacted; MemberAdd takes the peer URL schemes the reference takes
// (unix:// and unixs:// sockets included) and refuses the others with its error.
import { expect } from 'chai';
import { ref35, startReferenceCluster } from '../../../harness/reference-cluster.js';
import { useClustersSideBySide } from '../../../harness/side-by-side.js';
import { b64, postJson, startSvcCluster } from '../../../harness/svc-cluster.js';

describe('JSON gateway side by side: svc 3.5 and the reference 3.5.21', function () {
  this.timeout(60000);
  const pair = useClustersSideBySide(() => [startSvcCluster({ size: 1 }), startReferenceCluster({ size: 1, binary: ref35('etcd') })]);

  const both = () => [
    { who: 'svc', url: pair.svc.members[0].clientURL },
    { who: 'reference', url: pair.ref.clientUrls[0] },
  ];

  it('HashKV of a store never compacted answers compact_revision -1 and the same keys', async () => {
    const keys: string[][] = [];
    for (const { who, url } of both()) {
      const a = await postJson(`${url}/v3/maintenance/hashkv`, '{}');
      expect(a.status, who).to.equal(200);
      expect(a.body.compact_revision, who).to.equal('-1');
      keys.push(Object.keys(a.body).sort());
    }
    expect(keys[0]).to.deep.equal(keys[1]);
  });

  it('a lease ID sent as a JSON number or string keeps all 64 bits; a campaign on it wins', async () => {
    for (const { who, url } of both()) {
      for (const [id, literal] of [['8110779400350537698', '8110779400350537698'], ['8110779400350537699', '"8110779400350537699"']]) {
        const g = await postJson(`${url}/v3/lease/grant`, `{"ID": ${literal}, "TTL": 60}`);
        expect(g.status, `${who} ${g.text}`).to.equal(200);
        expect(g.body.ID, who).to.equal(id);
        const c = await postJson(`${url}/v3/election/campaign`, `{"name": "${b64(`e-${id}`)}", "lease": ${literal}, "value": "${b64('v')}"}`);
        expect(c.status, `${who} ${c.text}`).to.equal(200);
        expect((c.body.leader as Record<string, unknown>).lease, who).to.equal(id);
        const ttl = await postJson(`${url}/v3/lease/timetolive`, `{"ID": ${literal}, "keys": true}`);
        expect((ttl.body.keys as string[]).length, who).to.equal(1);
      }
    }
  });

  it('numbers an integer field cannot hold: the same 400 answer, code and text', async () => {
    const bodies = [
      '{"ID": 9223372036854775808, "TTL": 5}',
      '{"ID": -9223372036854775809, "TTL": 5}',
      '{"ID": 1e3, "TTL": 5}',
      '{"ID": 5.5, "TTL": 5}',
      '{"TTL": 18446744073709551616}',
    ];
    for (const body of bodies) {
      const [s, r] = await Promise.all(both().map(({ url }) => postJson(`${url}/v3/lease/grant`, body)));
      expect(s.status, body).to.equal(r.status).and.to.equal(400);
      expect(s.body, body).to.deep.equal(r.body);
    }
    const [s, r] = await Promise.all(both().map(({ url }) => postJson(`${url}/v3/kv/range`, `{"key": "${b64('k')}", "limit": -9223372036854775808, "revision": 9223372036854775807}`)));
    expect(s.status).to.equal(r.status).and.to.equal(400);
    expect(s.body).to.deep.equal(r.body);
  });

  it('MemberAdd: the same peer URLs accepted (unix sockets included) and refused, with the same error', async () => {
    const urls = ['unix://localhost:23999', 'unixs://localhost:23998', 'unix:///tmp/svc-peer.sock', 'https://127.0.0.1:23997', 'ftp://127.0.0.1:23996', 'http://127.0.0.1', 'http://127.0.0.1:23995/path'];
    const accepted: string[] = [];
    for (const u of urls) {
      const answers = [];
      for (const { url } of both()) {
        const a = await postJson(`${url}/v3/cluster/member/add`, { peerURLs: [u], isLearner: true });
        if (a.status === 200) {
          const m = a.body.member as Record<string, unknown>;
          expect(m.peerURLs, u).to.deep.equal([u]);
          const rm = await postJson(`${url}/v3/cluster/member/remove`, `{"ID": ${String(m.ID)}}`);
          expect(rm.status, rm.text).to.equal(200);
        }
        answers.push(a.status === 200 ? 200 : a.body);
      }
      expect(answers[0], u).to.deep.equal(answers[1]);
      if (answers[0] === 200) accepted.push(u);
    }
    expect(accepted).to.deep.equal(['unix://localhost:23999', 'unixs://localhost:23998', 'unix:///tmp/svc-peer.sock', 'https://127.0.0.1:23997']);
  });
});
