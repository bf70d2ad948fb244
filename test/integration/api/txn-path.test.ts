// Which ops of a txn are checked and run, side by side with the reference 3.4.23: compares (nested ones too)
// are judged on the state before the txn, and only the puts on the path taken must name an existing lease.
// The election and lock recipes depend on it (a proclaim whose compare fails names a revoked lease).
import { expect } from 'chai';
import { startSvcCluster, postJson, b64, printLogsOnFailure, type SvcCluster, type GatewayAnswer } from '../../../harness/svc-cluster.js';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';

describe('txn path: svc and the reference 3.4 agree', function () {
  this.timeout(120000);
  let svc: SvcCluster;
  let ref: ReferenceCluster;
  before(async function () {
    [svc, ref] = await Promise.all([startSvcCluster({ size: 1 }), startReferenceCluster({ size: 1 })]);
  });
  after(async function () {
    await Promise.all([svc?.close(), ref?.stop()]);
  });
  printLogsOnFailure(() => [svc]);

  const both = async (path: string, body: unknown): Promise<[GatewayAnswer, GatewayAnswer]> =>
    [await svc.post(0, path, body), await postJson(ref.clientUrls[0] + path, body)];
  const value = async (key: string): Promise<[string | undefined, string | undefined]> => {
    const [a, b] = await both('/v3/kv/range', { key: b64(key) });
    const v = (x: GatewayAnswer) => ((x.body.kvs as Array<{ value: string }> | undefined)?.[0]?.value);
    return [v(a), v(b)];
  };

  it('a put with an unknown lease on the branch not taken does not fail the txn', async function () {
    const txn = {
      compare: [{ key: b64('tp/absent'), target: 'CREATE', result: 'EQUAL', create_revision: '5' }],
      success: [{ request_put: { key: b64('tp/a'), value: b64('x'), lease: '4242' } }],
      failure: [{ request_put: { key: b64('tp/b'), value: b64('y') } }],
    };
    const [s, r] = await both('/v3/kv/txn', txn);
    expect(r.status).to.equal(200);
    expect(s.status, s.text).to.equal(200);
    expect(s.body.succeeded).to.equal(r.body.succeeded).and.to.equal(undefined);
    expect(await value('tp/b')).to.deep.equal([b64('y'), b64('y')]);
  });

  it('on the branch taken it fails the whole txn with "requested lease not found"', async function () {
    const txn = {
      compare: [{ key: b64('tp/absent'), target: 'CREATE', result: 'EQUAL', create_revision: '0' }],
      success: [{ request_put: { key: b64('tp/c'), value: b64('z') } }, { request_put: { key: b64('tp/d'), value: b64('x'), lease: '4242' } }],
    };
    const [s, r] = await both('/v3/kv/txn', txn);
    expect(r.status).to.equal(404);
    expect(s.status).to.equal(404);
    expect(s.body.error).to.equal(r.body.error).and.to.equal('etcdserver: requested lease not found');
    expect(await value('tp/c')).to.deep.equal([undefined, undefined]);
  });

  it('a nested compare sees the state before the txn, not the writes of ops before it', async function () {
    const txn = {
      success: [
        { request_put: { key: b64('tp/n'), value: b64('1') } },
        {
          request_txn: {
            compare: [{ key: b64('tp/n'), target: 'VERSION', result: 'GREATER', version: '0' }],
            success: [{ request_put: { key: b64('tp/marker'), value: b64('seen-write') } }],
            failure: [{ request_put: { key: b64('tp/marker'), value: b64('before-txn') } }],
          },
        },
      ],
    };
    const [s, r] = await both('/v3/kv/txn', txn);
    expect(r.status).to.equal(200);
    expect(s.status, s.text).to.equal(200);
    expect(await value('tp/marker')).to.deep.equal([b64('before-txn'), b64('before-txn')]);
  });
});
