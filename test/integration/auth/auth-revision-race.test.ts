// A write already past the permission check while its permission is revoked (issue 29 item 2), on a real member:
// the RoleRevokePermission and the Put are called in the same event-loop turn, the revocation first. Each proposes
// within its call; the revocation is not applied yet when the Put passes the gate (with the old auth revision). So
// both are in one batch, the revocation ahead in the log, and the Put is applied after it: it fails with the
// reference's "revision of auth store is old" and writes nothing.
import { expect } from 'chai';
import { join } from 'node:path';
import { newConfig, startEmbedded, type EmbeddedMember } from '../../../server/embed/index.js';
import type { RequestMeta } from '../../../server/api/v3/auth-gate.js';
import { freePorts } from '../../../harness/ports.js';
import { useTempDir } from '../../../harness/temp-dir.js';

describe('auth: a write past the gate, its permission revoked before it is applied (real member)', function () {
  this.timeout(60000);
  const tmp = useTempDir('svc-authrev-');
  let m: EmbeddedMember;
  const call = (name: string, req: object, meta?: RequestMeta): Promise<object> => m.member.api.handler(name)!(req, meta);
  const authenticate = async (name: string, password: string) => ({ token: String((await m.member.api.handler('Authenticate')!({ name, password })).token) });
  const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: Error) => e.message);

  before(async () => {
    const [client, peer] = await freePorts(2);
    const c = newConfig('3.5.21');
    c.name = 'm';
    c.dataDir = join(tmp.path, 'm');
    c.listenClientUrls = [`http://127.0.0.1:${client}`];
    c.advertiseClientUrls = c.listenClientUrls;
    c.listenPeerUrls = [`http://127.0.0.1:${peer}`];
    c.initialAdvertisePeerUrls = c.listenPeerUrls;
    c.initialCluster = `m=http://127.0.0.1:${peer}`;
    c.logOutputs = [join(tmp.path, 'm.log')];
    m = await startEmbedded(c);
    await m.ready;
  });
  after(async () => {
    await m?.close();
  });

  it('fails with "revision of auth store is old" and writes nothing; the same write without the revocation passes', async () => {
    await call('UserAdd', { name: 'root', options: { no_password: false }, password: 'rootpw' });
    await call('UserGrantRole', { user: 'root', role: 'root' });
    await call('UserAdd', { name: 'alice', password: 'alicepw' });
    await call('RoleAdd', { name: 'app' });
    const perm = { permType: 'READWRITE', key: Buffer.from('app/'), range_end: Buffer.from('app0') };
    await call('RoleGrantPermission', { name: 'app', perm });
    await call('UserGrantRole', { user: 'alice', role: 'app' });
    await call('AuthEnable', {});
    const root = await authenticate('root', 'rootpw');
    const alice = await authenticate('alice', 'alicepw');
    const get = async (key: string) => ((await m.member.api.handler('Range')!({ key: Buffer.from(key) }, root)).kvs ?? []).map((kv) => Buffer.from(kv.value ?? []).toString());

    expect(await outcome(call('Put', { key: Buffer.from('app/a'), value: Buffer.from('1') }, alice))).to.equal('ok');

    const revoke = outcome(call('RoleRevokePermission', { role: 'app', key: Buffer.from('app/'), range_end: Buffer.from('app0') }, root));
    const put = outcome(call('Put', { key: Buffer.from('app/b'), value: Buffer.from('2') }, alice));
    expect([await put, await revoke]).to.deep.equal(['etcdserver: revision of auth store is old', 'ok']);
    expect(await get('app/b')).to.deep.equal([]);
    // now the gate itself refuses
    expect(await outcome(call('Put', { key: Buffer.from('app/b'), value: Buffer.from('2') }, alice))).to.equal('etcdserver: permission denied');
    expect(await get('app/a')).to.deep.equal(['1']);
  });
});
