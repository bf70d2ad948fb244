// The Election and Lock services on a real 3-member svc cluster: through gRPC (v3electionpb/v3lockpb, the
// reference's wire definitions), through the JSON gateway (/v3/election/*, /v3/lock/*), and the recipes the real
// etcdctl 3.4.23 runs itself on top of KV, lease and watch (`etcdctl lock`, `etcdctl elect`).
import { join } from 'node:path';
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../../server/wire/index.js';
import { startSvcCluster, printLogsOnFailure, b64, unb64, type SvcCluster } from '../../../harness/svc-cluster.js';
import { ETCDCTL_BIN, etcdctl } from '../../../harness/etcdctl.js';
import { spawnLogged, sleep, type LoggedProcess } from '../../../harness/process.js';

type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function unary(client: grpc.Client, method: string, req: Msg): Promise<Msg> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: Msg, cb: (e: grpc.ServiceError | null, r: Msg) => void) => void>)[method](req, (e, r) => (e ? reject(e) : resolve(r)));
  });
}

/** Polls `check` until it returns true (each poll is a real read of the cluster); fails after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

describe('Election and Lock services on a 3-member svc cluster', function () {
  this.timeout(120000);
  let c: SvcCluster;
  const clients = loadClients();
  const open: grpc.Client[] = [];
  const procs: LoggedProcess[] = [];
  const client = <T extends grpc.Client>(ctor: grpc.ServiceClientConstructor, i: number): T => {
    const cl = new ctor(c.members[i].endpoint, grpc.credentials.createInsecure()) as unknown as T;
    open.push(cl);
    return cl;
  };
  const lease = async (i: number, ttl = 60): Promise<string> => (await unary(client(clients.Lease, i), 'LeaseGrant', { TTL: ttl })).ID as string;
  const keysUnder = async (prefix: string) => (await c.range(0, prefix)).map((kv) => kv.key);
  const ctl = (name: string, args: string[], i = 0) => {
    const p = spawnLogged(ETCDCTL_BIN, [`--endpoints=${c.members[i].endpoint}`, ...args], { logFile: join(c.dir, `${name}.log`), env: { ETCDCTL_API: '3' }, name });
    procs.push(p);
    return p;
  };

  before(async function () {
    c = await startSvcCluster({ size: 3 });
  });
  after(async function () {
    for (const cl of open) cl.close();
    for (const p of procs) if (!p.exitStatus()) await p.stop('SIGKILL');
    await c?.close();
  });
  printLogsOnFailure(() => [c]);

  describe('gRPC Lock', function () {
    it('a second Lock waits until the holder unlocks, then gets its own key', async function () {
      const [l1, l2] = [await lease(0), await lease(1)];
      const a = client(clients.Lock, 0);
      const b = client(clients.Lock, 1);
      const first = await unary(a, 'Lock', { name: Buffer.from('glock'), lease: l1 });
      expect(first.key.toString()).to.equal(`glock/${BigInt(l1).toString(16)}`);
      let second: Msg | undefined;
      const pending = unary(b, 'Lock', { name: Buffer.from('glock'), lease: l2 }).then((r) => (second = r));
      // Both keys exist once the second caller waits; it must not hold the lock while the first does.
      await until('the second waiter has its key', async () => (await keysUnder('glock/')).length === 2);
      expect(second, 'second Lock answered while the first holds it').to.equal(undefined);
      const un = await unary(a, 'Unlock', { key: first.key });
      await pending;
      expect(second!.key.toString()).to.equal(`glock/${BigInt(l2).toString(16)}`);
      expect(Number(second!.header.revision)).to.be.greaterThan(Number(un.header.revision) - 1);
      expect(await keysUnder('glock/')).to.deep.equal([`glock/${BigInt(l2).toString(16)}`]);
      await unary(b, 'Unlock', { key: second!.key });
      expect(await keysUnder('glock/')).to.deep.equal([]);
    });

    it('the lock passes on when the holder\'s lease is revoked; Lock with the same lease again is the same hold', async function () {
      const [l1, l2] = [await lease(0), await lease(2)];
      const a = client(clients.Lock, 0);
      const first = await unary(a, 'Lock', { name: Buffer.from('rlock'), lease: l1 });
      const again = await unary(a, 'Lock', { name: Buffer.from('rlock'), lease: l1 });
      expect(again.key.toString()).to.equal(first.key.toString());
      const pending = unary(client(clients.Lock, 2), 'Lock', { name: Buffer.from('rlock'), lease: l2 });
      await until('the second waiter has its key', async () => (await keysUnder('rlock/')).length === 2);
      await unary(client(clients.Lease, 1), 'LeaseRevoke', { ID: l1 });
      const second = await pending;
      expect(second.key.toString()).to.equal(`rlock/${BigInt(l2).toString(16)}`);
    });

    it('a waiter that cancels its call leaves no key behind; a Lock on an unknown lease fails as a put would', async function () {
      const [l1, l2] = [await lease(0), await lease(0)];
      const a = client(clients.Lock, 0);
      await unary(a, 'Lock', { name: Buffer.from('clock'), lease: l1 });
      const b = client(clients.Lock, 1);
      const call = (b as unknown as Record<string, (r: Msg, cb: (e: grpc.ServiceError | null) => void) => grpc.ClientUnaryCall>).Lock({ name: Buffer.from('clock'), lease: l2 }, () => undefined);
      await until('the waiter has its key', async () => (await keysUnder('clock/')).length === 2);
      call.cancel();
      await until('the cancelled waiter\'s key is deleted', async () => (await keysUnder('clock/')).length === 1);
      const err = await unary(a, 'Lock', { name: Buffer.from('clock2'), lease: '12345' }).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(err?.code).to.equal(grpc.status.NOT_FOUND);
      expect(err?.details).to.equal('etcdserver: requested lease not found');
    });
  });

  describe('gRPC Election', function () {
    it('campaign, leader, observe, proclaim, lease revoke hands over, resign leaves no leader', async function () {
      const name = Buffer.from('gelect');
      const [l1, l2] = [await lease(0), await lease(1)];
      const e0 = client(clients.Election, 0);
      const e1 = client(clients.Election, 1);
      // An observer on a third member, started before any campaign.
      const seen: string[] = [];
      const obs = (client(clients.Election, 2) as unknown as { Observe(r: Msg): grpc.ClientReadableStream<Msg> }).Observe({ name });
      obs.on('data', (r: Msg) => seen.push(r.kv.value.toString()));
      obs.on('error', () => undefined);

      const noLeader = await unary(e0, 'Leader', { name }).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(noLeader?.details).to.equal('election: no leader');

      const won = await unary(e0, 'Campaign', { name, lease: l1, value: Buffer.from('v1') });
      expect(won.leader.key.toString()).to.equal(`gelect/${BigInt(l1).toString(16)}`);
      expect(won.leader.name.toString()).to.equal('gelect');
      expect(won.leader.lease).to.equal(l1);
      expect(Number(won.leader.rev)).to.equal(Number(won.header.revision));
      const leader = await unary(e1, 'Leader', { name });
      expect(leader.kv.value.toString()).to.equal('v1');
      expect(leader.kv.key.toString()).to.equal(won.leader.key.toString());

      // Whether the observer started before or after the campaign, its first value is v1.
      await until('the observer saw the first leader', async () => seen.length > 0);
      expect(seen).to.deep.equal(['v1']);
      await unary(e0, 'Proclaim', { leader: won.leader, value: Buffer.from('v1b') });
      expect((await unary(e1, 'Leader', { name })).kv.value.toString()).to.equal('v1b');

      let second: Msg | undefined;
      const pending = unary(e1, 'Campaign', { name, lease: l2, value: Buffer.from('v2') }).then((r) => (second = r));
      await until('the second campaigner has its key', async () => (await keysUnder('gelect/')).length === 2);
      expect(second, 'second campaign won while the first leads').to.equal(undefined);
      expect((await unary(e1, 'Leader', { name })).kv.value.toString()).to.equal('v1b');

      await unary(client(clients.Lease, 0), 'LeaseRevoke', { ID: l1 });
      await pending;
      expect(second!.leader.key.toString()).to.equal(`gelect/${BigInt(l2).toString(16)}`);
      expect((await unary(e0, 'Leader', { name })).kv.value.toString()).to.equal('v2');

      // The old leadership is gone: proclaiming with it is refused.
      const stale = await unary(e0, 'Proclaim', { leader: won.leader, value: Buffer.from('x') }).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(stale?.code).to.equal(grpc.status.UNKNOWN);
      expect(stale?.details).to.equal('election: not leader');
      const missing = await unary(e0, 'Proclaim', { value: Buffer.from('x') }).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(missing?.details).to.equal('"leader" field must be provided');

      await unary(e1, 'Resign', { leader: second!.leader });
      const after = await unary(e0, 'Leader', { name }).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(after?.details).to.equal('election: no leader');

      await until('the observer saw every proclamation', async () => seen.join(',') === 'v1,v1b,v2');
      obs.cancel();
    });
  });

  describe('JSON gateway', function () {
    it('/v3/lock/lock and /v3/lock/unlock', async function () {
      const l1 = (await c.post(0, '/v3/lease/grant', { TTL: 60 })).body.ID as string;
      const locked = await c.post(0, '/v3/lock/lock', { name: b64('hlock'), lease: l1 });
      expect(locked.status).to.equal(200);
      expect(unb64(locked.body.key as string)).to.equal(`hlock/${BigInt(l1).toString(16)}`);
      expect(await keysUnder('hlock/')).to.deep.equal([`hlock/${BigInt(l1).toString(16)}`]);
      const unlocked = await c.post(1, '/v3/lock/unlock', { key: locked.body.key });
      expect(unlocked.status).to.equal(200);
      expect((unlocked.body.header as Msg).revision).to.be.a('string');
      expect(await keysUnder('hlock/')).to.deep.equal([]);
    });

    it('/v3/election/campaign, leader, proclaim, observe and resign', async function () {
      const l1 = (await c.post(0, '/v3/lease/grant', { TTL: 60 })).body.ID as string;
      const none = await c.post(0, '/v3/election/leader', { name: b64('helect') });
      expect(none.status).to.equal(500);
      expect(none.body).to.include({ error: 'election: no leader', code: 2 });

      const won = await c.post(0, '/v3/election/campaign', { name: b64('helect'), lease: l1, value: b64('hv1') });
      expect(won.status).to.equal(200);
      const leaderKey = won.body.leader as Msg;
      expect(unb64(leaderKey.name)).to.equal('helect');
      expect(unb64(leaderKey.key)).to.equal(`helect/${BigInt(l1).toString(16)}`);
      expect(leaderKey.lease).to.equal(l1);
      expect(leaderKey.rev).to.equal((won.body.header as Msg).revision);

      const leader = await c.post(1, '/v3/election/leader', { name: b64('helect') });
      expect(unb64((leader.body.kv as Msg).value)).to.equal('hv1');
      const proclaimed = await c.post(2, '/v3/election/proclaim', { leader: leaderKey, value: b64('hv2') });
      expect(proclaimed.status).to.equal(200);
      // Observe streams JSON lines; the first is the current leader's value.
      const first = await firstStreamLine(c.members[1].clientURL + '/v3/election/observe', { name: b64('helect') });
      expect(unb64(first.result.kv.value)).to.equal('hv2');

      const resigned = await c.post(0, '/v3/election/resign', { leader: leaderKey });
      expect(resigned.status).to.equal(200);
      expect((await c.post(0, '/v3/election/leader', { name: b64('helect') })).body).to.include({ error: 'election: no leader' });
    });
  });

  describe('the real etcdctl 3.4.23', function () {
    it('lock: the second contender runs its command only after the first releases the lock', async function () {
      const a = ctl('lock-a', ['lock', 'ctllock'], 0);
      await a.waitForLog(/^ctllock\/[0-9a-f]+$/m, 20000);
      const b = ctl('lock-b', ['lock', 'ctllock', '--', 'sh', '-c', 'echo B-HAS-THE-LOCK'], 1);
      await until('the second contender waits with its own key', async () => (await keysUnder('ctllock/')).length === 2);
      expect(b.exitStatus(), 'the second contender finished while the first holds the lock').to.equal(null);
      expect(b.log()).to.not.include('B-HAS-THE-LOCK');
      // etcdctl releases the lock on SIGINT.
      await a.stop('SIGINT');
      const st = await b.exited;
      expect(st.code, b.log()).to.equal(0);
      expect(b.log()).to.include('B-HAS-THE-LOCK');
      expect(await keysUnder('ctllock/')).to.deep.equal([]);
    });

    it('elect: the observer sees the leader, and the next campaigner leads once the first is killed and its lease ends', async function () {
      const obs = ctl('elect-l', ['elect', '-l', 'ctlelect'], 2);
      const c1 = ctl('elect-1', ['elect', 'ctlelect', 'p1'], 0);
      await c1.waitForLog(/^p1$/m, 20000);
      await obs.waitForLog(/^p1$/m, 20000);
      const c2 = ctl('elect-2', ['elect', 'ctlelect', 'p2'], 1);
      await until('the second campaigner waits with its own key', async () => (await keysUnder('ctlelect/')).length === 2);
      expect(c2.log()).to.not.match(/^p2$/m);
      // Killed without resigning, the first campaigner's key lives as long as its lease: end the lease.
      const firstKey = (await c.range(0, 'ctlelect/')).sort((x, y) => x.modRevision - y.modRevision)[0].key;
      await c1.stop('SIGKILL');
      const revoked = await etcdctl(['lease', 'revoke', firstKey.split('/')[1]], { endpoints: [c.members[0].endpoint] });
      expect(revoked.code, revoked.stderr).to.equal(0);
      await c2.waitForLog(/^p2$/m, 20000);
      await obs.waitForLog(/^p2$/m, 20000);
    });
  });
});

/** POSTs to a streaming gateway path and resolves with the first JSON line, then hangs up. */
async function firstStreamLine(url: string, body: unknown): Promise<Msg> {
  const ac = new AbortController();
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), signal: ac.signal });
  expect(res.status).to.equal(200);
  const reader = res.body!.getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before a line: ${buf}`);
    buf += Buffer.from(value).toString('utf8');
    const nl = buf.indexOf('\n');
    if (nl >= 0) {
      ac.abort();
      return JSON.parse(buf.slice(0, nl)) as Msg;
    }
  }
}
