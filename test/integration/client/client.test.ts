// The client library against a real 3-member svc cluster: blocking and non-blocking connect to a member that
// starts late, isConnCanceled after close, failover when the member in use is killed, watch events and
// compaction, lease keep-alive and expiry, verified snapshots.
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { expect } from 'chai';
import { Client, ClientError, ERR_COMPACTED, Status, isConnCanceled } from '../../../server/client/index.js';
import { startSvcCluster, printLogsOnFailure, type SvcCluster } from '../../../harness/svc-cluster.js';
import { sleep } from '../../../harness/process.js';

describe('client library', function () {
  this.timeout(90000);
  let cluster: SvcCluster;
  const clients: Client[] = [];
  printLogsOnFailure(() => [cluster]);

  before(async function () {
    cluster = await startSvcCluster({ size: 3 });
  });

  after(async function () {
    for (const c of clients) c.close();
    await cluster?.close();
  });

  const endpoints = () => cluster.members.map((m) => m.endpoint);
  async function connect(opts: Partial<Parameters<typeof Client.connect>[0]> = {}): Promise<Client> {
    const c = await Client.connect({ endpoints: endpoints(), waitForConnection: true, dialTimeoutMs: 10000, commandTimeoutMs: 15000, ...opts });
    clients.push(c);
    return c;
  }

  it('does KV, txn and compaction with typed responses', async function () {
    const c = await connect();
    const p = await c.put('kv/a', '1');
    expect(Number(p.header.revision)).to.be.greaterThan(1);
    const prev = await c.put('kv/a', '2', { prevKv: true });
    expect(prev.prev_kv?.value.toString()).to.equal('1');
    await c.put('kv/b', '3');
    const g = await c.get('kv/', { prefix: true });
    expect(g.kvs.map((kv) => `${kv.key}=${kv.value}`)).to.deep.equal(['kv/a=2', 'kv/b=3']);
    expect(g.count).to.equal('2');
    const t = await c.txn({
      compare: [{ key: 'kv/a', target: 'VALUE', result: 'EQUAL', value: '2' }],
      success: [{ put: { key: 'kv/a', value: '4' } }, { get: { key: 'kv/a' } }],
      failure: [],
    });
    expect(t.succeeded).to.equal(true);
    expect(t.responses[1].response_range?.kvs[0].value.toString()).to.equal('4');
    const d = await c.delete('kv/', { prefix: true, prevKv: true });
    expect(d.deleted).to.equal('2');
    await c.compact(d.header.revision);
    const err = await c.get('kv/a', { revision: 1 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ClientError);
    expect((err as ClientError).code).to.equal(Status.OUT_OF_RANGE);
    expect((err as ClientError).message).to.equal(ERR_COMPACTED);
  });

  it('waits for a late member only when asked to block; times out with "context deadline exceeded"', async function () {
    const i = 2;
    const ep = cluster.members[i].endpoint;
    await cluster.stop(i);
    // Blocking: does not resolve until the member is up.
    let settled = false;
    const blocking = Client.connect({ endpoints: [ep], waitForConnection: true, dialTimeoutMs: 30000 }).then((c) => {
      settled = true;
      clients.push(c);
      return c;
    });
    await sleep(500);
    expect(settled).to.equal(false);
    await cluster.start(i, { waitHealthy: false });
    const c1 = await blocking;
    expect((await c1.put('late/blocking', 'x')).header).to.not.equal(null);

    // Non-blocking: returns at once; the first call waits (within its timeout) for the member.
    await cluster.stop(i);
    const c2 = await Client.connect({ endpoints: [ep], waitForConnection: false, commandTimeoutMs: 30000 });
    clients.push(c2);
    const put = c2.put('late/nonblocking', 'y');
    await sleep(300);
    await cluster.start(i, { waitHealthy: false });
    expect(Number((await put).header.revision)).to.be.greaterThan(0);

    const err = await Client.connect({ endpoints: ['127.0.0.1:1'], waitForConnection: true, dialTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ClientError);
    expect(err).to.include({ code: Status.DEADLINE_EXCEEDED, message: 'context deadline exceeded' });
  });

  it('isConnCanceled recognises calls on a closed client', async function () {
    const c = await connect();
    await c.get('anything');
    c.close();
    const err = await c.get('anything').catch((e: unknown) => e);
    expect(isConnCanceled(err)).to.equal(true);
    expect((err as ClientError).code).to.equal(Status.CANCELLED);
    expect(isConnCanceled(new ClientError(Status.UNAVAILABLE, 'x'))).to.equal(false);
    expect(isConnCanceled(null)).to.equal(false);
  });

  it('fails over to another endpoint when the member in use is killed', async function () {
    await cluster.waitHealthy();
    const c = await connect();
    await c.put('fo/before', '1');
    const victim = cluster.members.findIndex((m) => m.endpoint === c.activeEndpoint);
    expect(victim).to.be.greaterThan(-1);
    // A watch on the same member resumes on another one, after the last revision it delivered.
    const w = c.watch('fo/', { prefix: true });
    await w.created;
    const seen: string[] = [];
    w.on('response', (r: { events: Array<{ kv: { key: Buffer } }> }) => seen.push(...r.events.map((e) => e.kv.key.toString())));
    await cluster.kill(victim);
    try {
      const g = await c.get('fo/before');
      expect(g.kvs[0].value.toString()).to.equal('1');
      await c.put('fo/after', '2');
      expect(c.activeEndpoint).to.not.equal(cluster.members[victim].endpoint);
      expect((await c.get('fo/after')).kvs[0].value.toString()).to.equal('2');
      const deadline = Date.now() + 15000;
      while (!seen.includes('fo/after') && Date.now() < deadline) await sleep(100);
      expect(seen).to.deep.equal(['fo/after']);
      await w.cancel();
    } finally {
      await cluster.start(victim);
    }
  });

  it('a write does not wait out its deadline on an endpoint that accepts TCP and never answers (a restarted member\'s old address)', async function () {
    await cluster.waitHealthy();
    // a listener that takes the connection and never speaks HTTP/2: the channel stays CONNECTING
    const sockets: Socket[] = [];
    const silent = createServer((sock) => { sockets.push(sock); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const dead = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const c = await connect({ endpoints: [dead, ...endpoints()], commandTimeoutMs: 4000 });
    try {
      // the client sits on the silent endpoint (as after a failover to a member that then went away)
      while (c.activeEndpoint !== dead) c.failover();
      await c.put('silent/1', 'a');
      expect(c.activeEndpoint).to.not.equal(dead);
      // and with no channel ready at first, a write still reaches a member within its deadline
      const fresh = await connect({ endpoints: [dead, ...endpoints()], commandTimeoutMs: 4000, waitForConnection: false });
      while (fresh.activeEndpoint !== dead) fresh.failover();
      await fresh.put('silent/2', 'b');
      expect((await c.get('silent/', { prefix: true })).kvs.map((kv) => kv.value.toString())).to.deep.equal(['a', 'b']);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('watches a prefix: create, events with prev kv, progress, cancel; reports compaction', async function () {
    const c = await connect();
    const w = c.watch('wt/', { prefix: true, prevKv: true });
    const created = await w.created;
    expect(created.created).to.equal(true);
    const events: string[] = [];
    const done = (async () => {
      for await (const r of w) {
        for (const e of r.events) events.push(`${e.type} ${e.kv.key} ${e.kv.value} prev=${e.prev_kv?.value.toString() ?? '-'}`);
        if (events.length >= 3) break;
      }
    })();
    await c.put('wt/a', '1');
    await c.put('wt/a', '2');
    await c.delete('wt/a');
    await done;
    expect(events).to.deep.equal(['PUT wt/a 1 prev=-', 'PUT wt/a 2 prev=1', 'DELETE wt/a  prev=2']);
    await w.cancel();

    // Filters and history: from a start revision, without deletes.
    const p = await c.put('wt/b', 'x');
    await c.delete('wt/b');
    const w2 = c.watch('wt/b', { startRevision: p.header.revision, filters: ['NODELETE'] });
    const first = await new Promise<string>((resolve) => w2.once('response', (r) => resolve(r.events.map((e: { type: string }) => e.type).join(','))));
    expect(first).to.equal('PUT');
    await w2.cancel();

    const latest = await c.put('wt/c', 'y');
    await c.compact(latest.header.revision);
    const w3 = c.watch('wt/c', { startRevision: 1 });
    const err = await (async () => {
      try {
        for await (const r of w3) void r;
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).to.be.instanceOf(ClientError);
    expect((err as ClientError).message).to.equal(ERR_COMPACTED);
  });

  it('keeps a lease alive, then lets it expire', async function () {
    const c = await connect();
    const l = await c.grant(2);
    expect(l.TTL).to.equal('2');
    await c.put('lease/k', 'v', { lease: l.ID });
    const once = await c.keepAliveOnce(l.ID);
    expect(once.ID).to.equal(l.ID);
    const ka = c.keepAlive(l.ID);
    let renewals = 0;
    ka.on('response', () => renewals++);
    await sleep(3500);
    expect(renewals).to.be.greaterThan(1);
    const alive = await c.timeToLive(l.ID, { keys: true });
    expect(alive.grantedTTL).to.equal('2');
    expect(alive.keys.map(String)).to.deep.equal(['lease/k']);
    expect((await c.leases()).leases.map((x) => x.ID)).to.include(l.ID);
    ka.cancel();
    const deadline = Date.now() + 15000;
    for (;;) {
      const t = await c.timeToLive(l.ID);
      // Gone means no lease at all (granted TTL 0), as "lease ... already expired" reports it.
      if (t.TTL === '-1' && t.grantedTTL === '0') break;
      if (Date.now() > deadline) throw new Error(`lease did not expire: ${JSON.stringify(t)}`);
      await sleep(250);
    }
    expect((await c.get('lease/k')).kvs).to.have.length(0);
    const err = await c.keepAliveOnce(l.ID).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ClientError);
    expect((err as ClientError).code).to.equal(Status.NOT_FOUND);
    const gone = c.keepAlive(l.ID);
    await new Promise((resolve) => gone.once('end', resolve));
  });

  it('reads cluster and maintenance information, and verifies snapshots', async function () {
    const c = await connect();
    const ml = await c.memberList();
    expect(ml.members).to.have.length(3);
    const st = await c.status(endpoints()[0]);
    expect(st.version).to.match(/^3\.\d+\.\d+$/);
    expect((await c.alarmList()).alarms).to.deep.equal([]);
    const h = await c.hashKV(endpoints()[1]);
    expect(h.hash).to.be.a('number');
    let bytes = 0;
    for await (const chunk of c.snapshot(endpoints()[0])) bytes += chunk.length;
    expect(bytes).to.be.greaterThan(0);
    expect(bytes % 512).to.equal(0);
  });
});
