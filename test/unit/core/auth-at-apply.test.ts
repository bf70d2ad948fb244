// Permissions are checked again when a write is applied (issue 29 item 2), as the reference's auth applier: the
// proposal carries the caller's user and auth revision, and a change of users, roles or permissions between the
// gate and the apply makes the write fail with "revision of auth store is old" and write nothing. The KV, Lease
// and Auth services here are the real ones on a real state machine; the proposer is a hook that applies another
// entry (the revocation) between the gate and the write's own entry, which goes through the log encoding.
import { expect } from 'chai';
import { join } from 'node:path';
import { openBackend } from '../../../server/storage/backend.js';
import { V3StateMachine } from '../../../server/core/state-machine.js';
import { decodeRequest, encodeRequest, type InternalRequest } from '../../../server/core/requests.js';
import { AuthGate } from '../../../server/api/v3/auth-gate.js';
import { Headers } from '../../../server/api/v3/headers.js';
import { kvService } from '../../../server/api/v3/kv.js';
import { leaseService } from '../../../server/api/v3/lease.js';
import type { AuthOp } from '../../../server/auth/store.js';
import type { Proposals } from '../../../server/core/interfaces.js';
import { nopLogger } from '../../../server/log/logger.js';
import { useTempDir } from '../../../harness/temp-dir.js';

const ALICE = { token: 'alicetoken.1' };
const ROOT = { token: 'roottoken.1' };

describe('auth: permissions checked again at apply', () => {
  const tmp = useTempDir('svc-auth-apply-');
  let sm: V3StateMachine;
  let index = 0;
  /** Run before the next proposal's own entry is applied (after it passed the gate), once. */
  let between: InternalRequest[] = [];
  const applied: InternalRequest[] = [];

  const apply = (req: InternalRequest) => {
    applied.push(req);
    return sm.apply(decodeRequest(encodeRequest(req)), ++index, 1);
  };
  const authOp = (auth: AuthOp) => apply({ id: BigInt(index + 1000), kind: 'auth', auth });
  const proposals: Proposals = {
    nextRequestId: () => BigInt(index + 1),
    propose: async <T>(req: InternalRequest) => {
      for (const r of between.splice(0)) apply(r);
      return apply(req) as T;
    },
  };
  const services = () => {
    const gate = new AuthGate(() => sm.auth);
    const headers = new Headers({ clusterId: 1n, memberId: 2n, term: 1, revision: () => sm.rev() });
    const barrier = { linearizableReadNotify: async () => undefined };
    const quota = { checkQuota: () => undefined };
    return {
      kv: kvService({ reads: sm, barrier, proposals, quota, gate, headers, maxTxnOps: 128 }),
      lease: leaseService({ leases: { leaseTimeToLive: async () => undefined, leaseIds: () => [] }, barrier, proposals, quota, headers, gate }),
    };
  };
  const revokeApp: InternalRequest = { id: 9001n, kind: 'auth', auth: { op: 'roleRevokePermission', role: 'app', key: Buffer.from('app/'), rangeEnd: Buffer.from('app0') } };
  const grantApp: InternalRequest = { id: 9002n, kind: 'auth', auth: { op: 'roleGrantPermission', name: 'app', perm: { permType: 'READWRITE', key: Buffer.from('app/'), rangeEnd: Buffer.from('app0') } } };
  const get = (key: string) => sm.range({ key: Buffer.from(key), rangeEnd: Buffer.alloc(0), limit: 0, revision: 0, sortOrder: 'NONE', sortTarget: 'KEY', serializable: true, keysOnly: false, countOnly: false, minModRevision: 0, maxModRevision: 0, minCreateRevision: 0, maxCreateRevision: 0 }).kvs.map((kv) => Buffer.from(kv.value).toString());
  const failure = (p: Promise<unknown>) => p.then(() => 'ok', (e: Error) => e.message);

  beforeEach(() => {
    sm = new V3StateMachine(openBackend(nopLogger, join(tmp.path, `db${index}`)), { logger: nopLogger, electionMs: 1000 });
    between = [];
    for (const op of [
      { op: 'userAdd', name: 'root', password: '', noPassword: true },
      { op: 'userGrantRole', user: 'root', role: 'root' },
      { op: 'userAdd', name: 'alice', password: '', noPassword: true },
      { op: 'roleAdd', name: 'app' },
      { op: 'userGrantRole', user: 'alice', role: 'app' },
      { op: 'enable' },
      { op: 'authenticate', name: 'alice', token: ALICE.token },
      { op: 'authenticate', name: 'root', token: ROOT.token },
    ] as AuthOp[]) authOp(op);
    apply(grantApp);
  });
  afterEach(() => sm.close());

  it('a put, delete or txn past the gate fails, and writes nothing, when the permission is revoked before its apply', async () => {
    const { kv } = services();
    // without a change in between, alice writes
    expect(await failure(kv.Put({ key: Buffer.from('app/a'), value: Buffer.from('1') }, ALICE))).to.equal('ok');
    expect(applied.at(-1)?.header).to.deep.equal({ username: 'alice', authRevision: sm.auth.revision });

    const writes: Array<[string, () => Promise<unknown>]> = [
      ['put', () => kv.Put({ key: Buffer.from('app/b'), value: Buffer.from('2') }, ALICE)],
      ['delete', () => kv.DeleteRange({ key: Buffer.from('app/a') }, ALICE)],
      ['txn', () => kv.Txn({ compare: [], success: [{ request_put: { key: Buffer.from('app/b'), value: Buffer.from('3') } }], failure: [] }, ALICE)],
    ];
    for (const [name, write] of writes) {
      between = [revokeApp];
      expect(await failure(write()), name).to.equal('etcdserver: revision of auth store is old');
      expect(get('app/a'), name).to.deep.equal(['1']);
      expect(get('app/b'), name).to.deep.equal([]);
      apply(grantApp);
    }
    // once revoked, the gate itself refuses
    apply(revokeApp);
    expect(await failure(kv.Put({ key: Buffer.from('app/b'), value: Buffer.from('2') }, ALICE))).to.equal('etcdserver: permission denied');
  });

  it('any change of the auth store in between fails the write, even for root; the next try (a new revision) passes', async () => {
    const { kv } = services();
    between = [{ id: 9003n, kind: 'auth', auth: { op: 'roleAdd', name: 'unrelated' } }];
    expect(await failure(kv.Put({ key: Buffer.from('top'), value: Buffer.from('1') }, ROOT))).to.equal('etcdserver: revision of auth store is old');
    expect(get('top')).to.deep.equal([]);
    expect(await failure(kv.Put({ key: Buffer.from('top'), value: Buffer.from('1') }, ROOT))).to.equal('ok');
    expect(get('top')).to.deep.equal(['1']);
  });

  it('an admin call past the gate fails when the caller lost its root role before the apply', async () => {
    const { kv } = services();
    authOp({ op: 'userAdd', name: 'admin2', password: '', noPassword: true });
    authOp({ op: 'userGrantRole', user: 'admin2', role: 'root' });
    authOp({ op: 'authenticate', name: 'admin2', token: 'admin2.1' });
    expect(await failure(kv.Put({ key: Buffer.from('x'), value: Buffer.from('1') }, { token: 'admin2.1' }))).to.equal('ok');
    between = [{ id: 9004n, kind: 'auth', auth: { op: 'userRevokeRole', name: 'admin2', role: 'root' } }];
    const before = sm.auth.revision;
    // the proposal as AuthService makes it: the caller's header, checked at apply
    const gate = new AuthGate(() => sm.auth);
    gate.requireAdmin({ token: 'admin2.1' });
    const add = proposals.propose({ id: 9005n, header: gate.header({ token: 'admin2.1' }), kind: 'auth', auth: { op: 'roleAdd', name: 'sneaky' } });
    expect(await failure(add)).to.equal('etcdserver: permission denied');
    expect(sm.auth.role('sneaky')).to.equal(undefined);
    expect(sm.auth.revision).to.equal(before + 1);
  });

  it('a proposal taken while authentication was off fails if it was enabled before the apply (user name is empty)', async () => {
    authOp({ op: 'disable' });
    const { kv } = services();
    between = [{ id: 9006n, kind: 'auth', auth: { op: 'enable' } }];
    expect(await failure(kv.Put({ key: Buffer.from('app/c'), value: Buffer.from('1') }))).to.equal('etcdserver: user name is empty');
    expect(get('app/c')).to.deep.equal([]);
  });

  it('LeaseRevoke: every attached key must be writable by the caller at apply', async () => {
    const { kv, lease } = services();
    apply({ id: 9007n, kind: 'leaseGrant', leaseGrant: { id: 77n, ttl: 100 } });
    expect(await failure(kv.Put({ key: Buffer.from('app/l'), value: Buffer.from('v'), lease: '77' }, ALICE))).to.equal('ok');
    expect(await failure(kv.Put({ key: Buffer.from('secret'), value: Buffer.from('s'), lease: '77' }, ROOT))).to.equal('ok');
    // a key on the lease alice may not write: she may neither revoke it nor attach more keys to it
    expect(await failure(lease.LeaseRevoke({ ID: '77' }, ALICE))).to.equal('etcdserver: permission denied');
    expect(await failure(kv.Put({ key: Buffer.from('app/m'), value: Buffer.from('v'), lease: '77' }, ALICE))).to.equal('etcdserver: permission denied');
    expect(get('secret')).to.deep.equal(['s']);
    expect(get('app/m')).to.deep.equal([]);
    await kv.DeleteRange({ key: Buffer.from('secret') }, ROOT);
    expect(await failure(lease.LeaseRevoke({ ID: '77' }, ALICE))).to.equal('ok');
    expect(get('app/l')).to.deep.equal([]);
  });
});
