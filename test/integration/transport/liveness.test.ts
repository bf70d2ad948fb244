import { expect } from 'chai';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { MessageType } from '../../../server/raft/types.js';
import { KEEPALIVE_FRAME } from '../../../server/transport/codec.js';
import { issueCertificate } from '../../../server/config/x509.js';
import { Member, app, mesh, waitFor } from './harness.js';

const A = 0xa1n;
const B = 0xb2n;
const FAST = { keepaliveMs: 50, readTimeoutMs: 300, dialTimeoutMs: 300, minBackoffMs: 20, maxBackoffMs: 200 };

/** A TCP listener that accepts connections and then does `onConn` with them (e.g. nothing at all). */
async function rawServer(onConn: (s: net.Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    onConn(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('peer transport liveness', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c().catch(() => {});
  });

  it('a peer that accepts TCP but never answers the stream request: dial times out, sends reported unreachable', async () => {
    const silent = await rawServer(() => {});
    cleanups.push(() => silent.close());
    const a = await new Member(A, undefined, { timings: FAST }).start();
    cleanups.push(() => a.stop());
    a.transport.addPeer(B, [`http://127.0.0.1:${silent.port}`]);
    a.transport.send([app(A, B, 0)]);
    await waitFor(() => a.unreachable.includes(B), 'unreachable after dial timeout');
    expect(a.transport.activeSince(B)).to.equal(undefined);
  });

  it('a full send queue drops, warns once and reports unreachable', async () => {
    const silent = await rawServer(() => {});
    cleanups.push(() => silent.close());
    const a = await new Member(A, undefined, { maxQueueMessages: 10, timings: { ...FAST, dialTimeoutMs: 10_000 } }).start();
    cleanups.push(() => a.stop());
    a.transport.addPeer(B, [`http://127.0.0.1:${silent.port}`]);
    a.transport.send(Array.from({ length: 25 }, (_, i) => app(A, B, i)));
    await waitFor(() => a.unreachable.includes(B), 'unreachable reported');
    const warned = a.logged('dropped internal Raft message since sending buffer is full (overloaded network)');
    expect(warned).to.have.length(1);
    expect(warned[0].fields).to.include({ 'remote-peer-id': 'b2', 'message-type': 'App', 'remote-peer-active': false });
  });

  it('a stream that goes silent after being accepted is declared lost (writer side)', async () => {
    const mute = await rawServer((s) => {
      s.once('data', () => s.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n'));
    });
    cleanups.push(() => mute.close());
    const a = await new Member(A, undefined, { timings: FAST }).start();
    cleanups.push(() => a.stop());
    a.transport.addPeer(B, [`http://127.0.0.1:${mute.port}`]);
    await waitFor(() => a.logged('lost TCP streaming connection with remote peer').length > 0, 'lost logged');
    expect(a.logged('peer became active').length).to.be.greaterThan(0);
    expect(String(a.logged('lost TCP streaming connection with remote peer')[0].fields.error)).to.match(/nothing received/);
    expect(a.logged('peer became inactive (message send to peer failed)').length).to.be.greaterThan(0);
  });

  it('an inbound stream whose sender goes silent is closed (reader side)', async () => {
    const b = await new Member(B, undefined, { timings: FAST }).start();
    cleanups.push(() => b.stop());
    const sock = net.connect(b.port, '127.0.0.1');
    cleanups.push(async () => void sock.destroy());
    sock.on('error', () => {});
    sock.write(
      'POST /raft/stream/a1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n' +
        `x-etcd-cluster-id: ${b.clusterId.toString(16)}\r\nx-server-from: a1\r\nx-raft-to: b2\r\n\r\n`,
    );
    await waitFor(() => b.logged('lost TCP streaming connection with remote peer').length > 0, 'reader gave up');
    expect(String(b.logged('lost TCP streaming connection with remote peer')[0].fields.error)).to.match(/nothing received/);
    expect(b.logged('established TCP streaming connection with remote peer')[0].fields['stream-reader-type']).to.equal('stream Message');
  });
});

describe('peer transport over TLS', () => {
  let dir = '';
  let tls: { cert: Buffer; key: Buffer; ca: Buffer };
  let rogue: { cert: Buffer; key: Buffer };
  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'transport-tls-'));
    const ec = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = (k: KeyObject) => Buffer.from(k.export({ type: 'pkcs8', format: 'pem' }));
    const notAfter = new Date(Date.now() + 24 * 3600 * 1000);
    const ca = ec();
    const caCert = issueCertificate({ subject: [['CN', 'transport-test-ca']], publicKey: ca.publicKey, signingKey: ca.privateKey, notAfter, ca: true, keyUsage: ['keyCertSign', 'digitalSignature'], keyIds: true });
    const peer = ec();
    const peerCert = issueCertificate({
      subject: [['CN', 'peer']], publicKey: peer.publicKey, signingKey: ca.privateKey, issuerCert: caCert, notAfter, ca: false,
      keyUsage: ['digitalSignature', 'keyEncipherment'], extKeyUsage: ['serverAuth', 'clientAuth'], hosts: ['127.0.0.1'], keyIds: true,
    });
    tls = { cert: Buffer.from(peerCert), key: pem(peer.privateKey), ca: Buffer.from(caCert) };
    // A self-signed certificate the members' CA did not issue.
    const r = ec();
    const rogueCert = issueCertificate({ subject: [['CN', 'rogue']], publicKey: r.publicKey, signingKey: r.privateKey, notAfter, ca: false, keyUsage: ['digitalSignature', 'keyEncipherment'], extKeyUsage: ['serverAuth', 'clientAuth'], hosts: ['127.0.0.1'] });
    rogue = { cert: Buffer.from(rogueCert), key: pem(r.privateKey) };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('two members with mutual TLS exchange messages and a snapshot; a member whose cert the CA did not issue is refused', async () => {
    const serverTls = { ...tls, clientCertAuth: true };
    const a = await new Member(A, undefined, { tls }).start(serverTls);
    const b = await new Member(B, undefined, { tls }).start(serverTls);
    const stranger = await new Member(0xccn, undefined, { tls: { ...rogue, ca: tls.ca } }).start(serverTls);
    try {
      mesh([a, b]);
      stranger.transport.addPeer(B, [b.url]);
      await waitFor(() => a.transport.activeSince(B) !== undefined && b.transport.activeSince(A) !== undefined, 'TLS streams up');
      a.transport.send(Array.from({ length: 1000 }, (_, i) => app(A, B, i)));
      b.transport.send([{ ...app(B, A, 0), type: MessageType.Snap, entries: [], snapshot: { metadata: { index: 9, term: 2, confState: { voters: [A, B], learners: [] } }, data: Buffer.alloc(2 * 1024 * 1024, 7) } }]);
      await waitFor(() => b.received.length === 1000 && b.snapStatus.length === 1, 'delivered over TLS');
      expect(b.received.map((m) => m.index)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => i));
      expect(b.snapStatus[0].ok).to.equal(true);
      expect(a.received[0].snapshot?.data.byteLength).to.equal(2 * 1024 * 1024);

      stranger.transport.send([app(0xccn, B, 0)]);
      await waitFor(() => stranger.unreachable.includes(B), 'stranger refused');
      expect(stranger.transport.activeSince(B)).to.equal(undefined);
      expect(b.received.filter((m) => m.from === 0xccn)).to.deep.equal([]);
    } finally {
      await Promise.all([a.stop(), b.stop(), stranger.stop()]);
    }
  });
});

describe('peer transport write timeout (--raft-write-timeout)', () => {
  it('a stream whose remote stops reading (while it still sends keepalives) is declared lost once a write has not drained for the timeout', async () => {
    let keepalive: NodeJS.Timeout | undefined;
    const stuck = await rawServer((s) => {
      s.once('data', () => {
        s.pause(); // read nothing more: the sender's writes back up
        s.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
        keepalive = setInterval(() => s.write(`${KEEPALIVE_FRAME.length.toString(16)}\r\n${KEEPALIVE_FRAME.toString('latin1')}\r\n`, 'latin1'), 50);
      });
    });
    const a = await new Member(A, undefined, { timings: { ...FAST, readTimeoutMs: 60_000, writeTimeoutMs: 300 }, maxQueueBytes: 256 * 1024 * 1024 }).start();
    try {
      a.transport.addPeer(B, [`http://127.0.0.1:${stuck.port}`]);
      await waitFor(() => a.transport.activeSince(B) !== undefined, 'stream up');
      a.transport.send(Array.from({ length: 64 }, (_, i) => app(A, B, i, 1024 * 1024)));
      await waitFor(() => a.logged('lost TCP streaming connection with remote peer').length > 0, 'lost logged');
      expect(String(a.logged('lost TCP streaming connection with remote peer')[0].fields.error)).to.match(/a write to the remote peer has not completed/);
    } finally {
      clearInterval(keepalive);
      await a.stop();
      await stuck.close();
    }
  });
});
