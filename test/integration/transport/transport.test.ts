import { expect } from 'chai';
import * as http from 'node:http';

import { MessageType } from '../../../server/raft/types.js';
import type { Message, NodeId } from '../../../server/raft/types.js';
import { startPeerServer } from '../../../server/transport/peer-server.js';
import { Transport } from '../../../server/transport/transport.js';
import { TransportError } from '../../../server/transport/wire.js';
import { nopLogger } from '../../../server/log/logger.js';
import { Member, app, mesh, sleep, waitFor } from './harness.js';

const A = 0xa1n;
const B = 0xb2n;
const C = 0xc3n;

/** Sends `count` numbered messages from `from` to `to` in small bursts (the queue is bounded). */
async function pump(from: Member, to: NodeId, count: number, burst = 200, payload = 16): Promise<void> {
  for (let i = 0; i < count; i += burst) {
    const msgs: Message[] = [];
    for (let j = i; j < Math.min(count, i + burst); j++) msgs.push(app(from.id, to, j, payload));
    from.transport.send(msgs);
    await sleep(1);
  }
}

function seqFrom(m: Member, from: NodeId): number[] {
  return m.received.filter((x) => x.from === from).map((x) => x.index);
}

function snap(from: NodeId, to: NodeId, bytes: number): Message {
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 1000) data[i] = (i / 1000) & 0xff;
  return {
    ...app(from, to, 0),
    type: MessageType.Snap,
    entries: [],
    snapshot: { metadata: { index: 5000, term: 3, confState: { voters: [A, B], learners: [] } }, data },
  };
}

function post(port: number, path: string, headers: http.OutgoingHttpHeaders, body = ''): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString(), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function get(port: number, path: string): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString(), headers: res.headers }));
      })
      .on('error', reject);
  });
}

describe('peer transport (real sockets on 127.0.0.1)', () => {
  let members: Member[] = [];
  afterEach(async () => {
    await Promise.all(members.map((m) => m.stop().catch(() => {})));
    members = [];
  });

  async function cluster(ids: NodeId[], clusterIds?: bigint[]): Promise<Member[]> {
    members = await Promise.all(ids.map((id, i) => new Member(id, clusterIds?.[i]).start()));
    mesh(members);
    return members;
  }

  it('two members exchange thousands of messages, in order per peer', async () => {
    const [a, b] = await cluster([A, B]);
    await waitFor(() => a.transport.activeSince(B) !== undefined && b.transport.activeSince(A) !== undefined, 'streams up');
    const n = 5000;
    await Promise.all([pump(a, B, n), pump(b, A, n)]);
    await waitFor(() => b.received.length === n && a.received.length === n, 'all delivered');
    const expected = Array.from({ length: n }, (_, i) => i);
    expect(seqFrom(b, A)).to.deep.equal(expected);
    expect(seqFrom(a, B)).to.deep.equal(expected);
    expect(b.received[17].entries[0].data).to.deep.equal(new Uint8Array(16).fill(17));
    expect(a.unreachable).to.deep.equal([]);
    expect(a.logged('peer became active').map((r) => r.fields['peer-id'])).to.deep.equal(['b2']);
    expect(a.logged('established TCP streaming connection with remote peer').length).to.be.greaterThan(0);
  });

  it('three members: every pair delivers in order, large entries included', async () => {
    const ms = await cluster([A, B, C]);
    await waitFor(() => ms.every((x) => ms.every((y) => x === y || x.transport.activeSince(y.id) !== undefined)), 'streams up');
    const n = 2000;
    const sends: Promise<void>[] = [];
    for (const x of ms) for (const y of ms) if (x !== y) sends.push(pump(x, y.id, n, 250, 64));
    await Promise.all(sends);
    // A few big entries interleaved after the bulk, still in order.
    for (const x of ms) for (const y of ms) if (x !== y) x.transport.send([app(x.id, y.id, n, 2 * 1024 * 1024), app(x.id, y.id, n + 1)]);
    await waitFor(() => ms.every((x) => x.received.length === 2 * (n + 2)), 'all delivered');
    const expected = Array.from({ length: n + 2 }, (_, i) => i);
    for (const x of ms) for (const y of ms) if (x !== y) expect(seqFrom(x, y.id)).to.deep.equal(expected);
    const big = ms[0].received.find((m) => m.index === n)!;
    expect(big.entries[0].data.byteLength).to.equal(2 * 1024 * 1024);
  });

  it('a restarted peer: unreachable while down, lost/inactive logged, delivery resumes', async () => {
    const [a, b] = await cluster([A, B]);
    await waitFor(() => a.transport.activeSince(B) !== undefined, 'stream up');
    a.transport.send([app(A, B, 0)]);
    await waitFor(() => b.received.length === 1, 'first message');

    await b.stop();
    await waitFor(() => a.logged('lost TCP streaming connection with remote peer').length > 0, 'lost logged');
    const lost = a.logged('lost TCP streaming connection with remote peer')[0];
    expect(lost.level).to.equal('warn');
    expect(lost.fields).to.include({ 'stream-writer-type': 'stream Message', 'local-member-id': 'a1', 'remote-peer-id': 'b2' });
    const inactive = a.logged('peer became inactive (message send to peer failed)');
    expect(inactive).to.have.length(1);
    expect(inactive[0].fields['peer-id']).to.equal('b2');
    expect(a.transport.activeSince(B)).to.equal(undefined);

    // While down, sends are dropped and reported.
    a.unreachable.length = 0;
    await waitFor(() => {
      a.transport.send([app(A, B, 1)]);
      return a.unreachable.includes(B);
    }, 'unreachable reported');

    // Same port, fresh process state.
    const b2 = new Member(B);
    b2.port = b.port;
    await b2.start();
    members[1] = b2;
    b2.transport.addPeer(A, [a.url]);
    await waitFor(() => a.transport.activeSince(B) !== undefined, 'stream re-established');
    a.transport.send([app(A, B, 2), app(A, B, 3)]);
    await waitFor(() => b2.received.length === 2, 'delivery resumed');
    expect(seqFrom(b2, A)).to.deep.equal([2, 3]);
    expect(a.logged('peer became active')).to.have.length(2);
  });

  it('tries every URL of a peer, and follows updatePeer to a new address', async () => {
    const [a, b] = await cluster([A, B]);
    await a.stop();
    const probe = await new Member(0x99n).start();
    const dead = probe.url;
    await probe.stop();
    // A fresh member A whose list for B starts with a dead URL.
    const a2 = await new Member(A).start();
    members[0] = a2;
    a2.transport.addPeer(B, [dead, b.url]);
    await waitFor(() => a2.transport.activeSince(B) !== undefined, 'second URL used');
    a2.transport.send([app(A, B, 0)]);
    await waitFor(() => seqFrom(b, A).length === 1, 'delivered via second URL');

    // B moves: stop it, start it on a new port, tell A.
    await b.stop();
    const b2 = await new Member(B).start();
    members[1] = b2;
    a2.transport.updatePeer(B, [b2.url]);
    await waitFor(() => {
      a2.transport.send([app(A, B, 1)]);
      return seqFrom(b2, A).length > 0;
    }, 'delivered to the new address');
    expect(a2.logged('updated remote peer')).to.have.length(1);
  });

  it('sends to a peer that never came up are dropped and reported unreachable', async () => {
    const [a] = await cluster([A]);
    // A port nobody listens on: bind then close to learn a free one.
    const probe = await new Member(0x99n).start();
    const port = probe.port;
    await probe.stop();
    a.transport.addPeer(B, [`http://127.0.0.1:${port}`]);
    await waitFor(() => {
      a.transport.send([app(A, B, 0)]);
      return a.unreachable.includes(B);
    }, 'unreachable reported');
    expect(a.transport.activeSince(B)).to.equal(undefined);
  });

  it('a multi-megabyte snapshot is delivered and reported ok; failed when the peer is down', async () => {
    const [a, b] = await cluster([A, B]);
    const m = snap(A, B, 6 * 1024 * 1024);
    a.transport.send([m]);
    await waitFor(() => a.snapStatus.length === 1, 'snapshot status');
    expect(a.snapStatus[0]).to.deep.equal({ id: B, ok: true });
    const got = b.received.find((x) => x.type === MessageType.Snap)!;
    expect(got.snapshot!.metadata).to.deep.equal(m.snapshot!.metadata);
    expect(Buffer.compare(Buffer.from(got.snapshot!.data), Buffer.from(m.snapshot!.data))).to.equal(0);
    expect(b.logged('received database snapshot')).to.have.length(1);
    expect(a.logged('sent database snapshot')).to.have.length(1);

    await b.stop();
    a.transport.send([snap(A, B, 3 * 1024 * 1024)]);
    await waitFor(() => a.snapStatus.length === 2, 'second snapshot status');
    expect(a.snapStatus[1]).to.deep.equal({ id: B, ok: false });
    expect(a.unreachable).to.include(B);
    expect(a.logged('failed to send database snapshot')).to.have.length(1);
  });

  it('refuses a peer of another cluster, with a clear log on both sides and 412', async () => {
    const [a, b] = await cluster([A, B], [0x1111n, 0x2222n]);
    await waitFor(
      () => a.logged('request sent was ignored by remote peer due to cluster ID mismatch').length > 0 && b.logged('request cluster ID mismatch').length > 0,
      'mismatch logged',
    );
    const seen = b.logged('request cluster ID mismatch')[0];
    expect(seen.fields).to.include({ 'local-member-cluster-id': '2222', 'remote-peer-cluster-id': '1111' });
    a.transport.send([app(A, B, 0)]);
    await sleep(200);
    expect(b.received).to.deep.equal([]);
    expect(a.transport.activeSince(B)).to.equal(undefined);

    const r = await post(b.port, '/raft/stream/a1', { 'x-etcd-cluster-id': '1111', 'x-server-from': 'a1', 'x-raft-to': 'b2' });
    expect(r.status).to.equal(412);
    expect(r.text).to.match(/cluster ID mismatch/);
  });

  it('refuses streams from a removed member with 410, which learns it was removed', async () => {
    const [a, b] = await cluster([A, B]);
    await waitFor(() => a.transport.activeSince(B) !== undefined, 'stream up');
    b.transport.removePeer(A);
    await waitFor(() => a.removedBy.includes(B), 'removal noticed');
    expect(b.logged('rejected stream from remote peer because it was removed').length).to.be.greaterThan(0);
  });

  it('setPeerFault: blackhole and drop lose traffic, delay keeps order, clearing restores delivery', async () => {
    const [a, b] = await cluster([A, B]);
    await waitFor(() => a.transport.activeSince(B) !== undefined, 'stream up');
    a.transport.setPeerFault(B, { blackhole: true });
    a.transport.send([app(A, B, 0), app(A, B, 1)]);
    a.transport.send([snap(A, B, 1000)]);
    await waitFor(() => a.snapStatus.length === 1, 'blackholed snapshot reported');
    expect(a.snapStatus[0].ok).to.equal(false);
    a.transport.setPeerFault(B, { drop: 1 });
    a.transport.send([app(A, B, 2)]);
    await sleep(200);
    expect(b.received).to.deep.equal([]);

    a.transport.setPeerFault(B, { delayMs: 500 });
    a.transport.send([app(A, B, 3), app(A, B, 4)]);
    a.transport.send([app(A, B, 5)]);
    await sleep(20);
    expect(b.received).to.deep.equal([]);
    await waitFor(() => b.received.length === 3, 'delayed delivery');
    a.transport.setPeerFault(B, undefined);
    a.transport.send([app(A, B, 6)]);
    await waitFor(() => b.received.length === 4, 'delivery after clearing');
    // 0..2 never arrived: had they been sent, the ordered stream would have delivered them before 3.
    expect(seqFrom(b, A)).to.deep.equal([3, 4, 5, 6]);
  });

  it('serves /version and /members, 405 with Allow: GET otherwise, 404 for unknown paths', async () => {
    const [a] = await cluster([A]);
    const v = await get(a.port, '/version');
    expect(v.status).to.equal(200);
    expect(v.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(v.text)).to.deep.equal({ etcdserver: '3.5.21', etcdcluster: '3.5.0' });
    const m = await get(a.port, '/members');
    expect(JSON.parse(m.text)).to.deep.equal([{ id: 'a1', peerURLs: [a.url] }]);
    const p = await post(a.port, '/version', {});
    expect(p.status).to.equal(405);
    expect(p.headers.allow).to.equal('GET');
    expect((await get(a.port, '/nope')).status).to.equal(404);
    expect((await get(a.port, '/raft/stream/b2')).status).to.equal(405);
  });

  it('a listen-peer-url whose port is in use fails with a typed error naming the URL', async () => {
    const [a] = await cluster([A]);
    const url = `http://127.0.0.1:${a.port}`;
    const t = new Transport({ localId: B, clusterId: 1n, logger: nopLogger, onMessage: () => {} });
    const err = await startPeerServer({ urls: [url], transport: t, logger: nopLogger, routes: { version: () => ({}), members: () => [] } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await t.stop();
    expect(err).to.be.instanceOf(TransportError);
    expect((err as TransportError).code).to.equal('ERR_PEER_LISTEN');
    expect((err as Error).message).to.contain(url).and.to.contain('address already in use');
  });
});
