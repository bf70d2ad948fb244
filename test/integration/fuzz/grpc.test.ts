// Hostile input against a running member's gRPC API: messages written raw on HTTP/2 streams (random
// protobuf bytes, truncated and lying length prefixes, compressed flags without an encoding, oversized
// messages, unknown methods), broken HTTP/2 connections, and well-formed requests with invalid ranges
// and limits. Every failure must carry a gRPC status with a message; a refused request must not move
// the store revision; the member must survive.

import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import fc from 'fast-check';
import http2 from 'node:http2';
import net from 'node:net';
import { loadClients, messageType } from '../../../server/wire/index.js';
import { sleep } from '../../../harness/process.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { expectMemberIntact, storeRevision } from './helpers.js';

const SEED = 9001;

interface RawAnswer {
  httpStatus: number;
  grpcStatus: number;
  grpcMessage: string;
}

/** A gRPC length-prefixed frame; `declared` lies about the length when given. */
function frame(msg: Buffer, opts: { compressed?: boolean; declared?: number } = {}): Buffer {
  const head = Buffer.alloc(5);
  head[0] = opts.compressed ? 1 : 0;
  head.writeUInt32BE(opts.declared ?? msg.length, 1);
  return Buffer.concat([head, msg]);
}

describe('fuzz: gRPC API', function () {
  this.timeout(180000);
  let c: SvcCluster;
  let session: http2.ClientHttp2Session;
  before(async () => {
    c = await startSvcCluster({ size: 1 });
    session = http2.connect(c.members[0].clientURL);
    session.on('error', () => undefined);
  });
  after(async () => {
    session?.close();
    await c?.close();
  });
  printLogsOnFailure(() => [c]);

  /** One raw unary call: writes `body` on a fresh stream and collects the status. */
  const raw = (path: string, body: Buffer, headers: Record<string, string> = {}): Promise<RawAnswer> =>
    new Promise((resolve) => {
      if (session.destroyed || session.closed) {
        session = http2.connect(c.members[0].clientURL);
        session.on('error', () => undefined);
      }
      const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
      const ans: RawAnswer = { httpStatus: 0, grpcStatus: -1, grpcMessage: '' };
      const take = (h: http2.IncomingHttpHeaders) => {
        if (h['grpc-status'] !== undefined) ans.grpcStatus = Number(h['grpc-status']);
        if (h['grpc-message'] !== undefined) ans.grpcMessage = decodeURIComponent(String(h['grpc-message']));
      };
      req.on('response', (h) => {
        ans.httpStatus = Number(h[':status']);
        take(h);
      });
      req.on('trailers', take);
      req.on('data', () => undefined);
      req.on('close', () => resolve(ans));
      req.on('error', () => resolve(ans));
      req.setTimeout(15000, () => req.close(http2.constants.NGHTTP2_CANCEL));
      req.end(body);
    });

  const putType = messageType('etcdserverpb.PutRequest');
  const encodePut = (key: string, value: Buffer | string) => Buffer.from(putType.encode(putType.fromObject({ key: Buffer.from(key), value: Buffer.from(value) })).finish());

  /** Asserts a raw call failed with a gRPC status and message and wrote nothing. */
  const refused = async (what: string, path: string, body: Buffer, headers?: Record<string, string>) => {
    const before = await storeRevision(c);
    const a = await raw(path, body, headers);
    const clear = (a.grpcStatus > 0 && a.grpcMessage.length > 0) || (a.httpStatus >= 400 && a.httpStatus < 500);
    expect(clear, `${what}: ${JSON.stringify(a)}`).to.equal(true);
    expect(await storeRevision(c), `${what}: refused but the revision moved`).to.equal(before);
    return a;
  };

  it('a well-formed raw Put works (the harness itself is right)', async () => {
    const a = await raw('/etcdserverpb.KV/Put', frame(encodePut('fz/raw', 'v')));
    expect(a.grpcStatus, JSON.stringify(a)).to.equal(0);
  });

  it('refuses malformed frames and messages with a clear status', async () => {
    await refused('truncated frame (declares 100 bytes, sends 10)', '/etcdserverpb.KV/Put', frame(Buffer.alloc(10, 1), { declared: 100 }));
    // grpc-js reads a compressed flag without a grpc-encoding as identity and serves the call (the gRPC
    // spec calls it a protocol error); that is the library's choice, so only a status is required here.
    const loose = await raw('/etcdserverpb.KV/Put', frame(encodePut('fz/c', 'v'), { compressed: true }));
    expect(loose.grpcStatus, JSON.stringify(loose)).to.be.at.least(0);
    await refused('compressed flag with an unknown encoding', '/etcdserverpb.KV/Put', frame(encodePut('fz/c', 'v'), { compressed: true }), { 'grpc-encoding': 'zstd-nope' });
    await refused('length prefix of 100 MB', '/etcdserverpb.KV/Put', frame(Buffer.alloc(16), { declared: 100 * 1024 * 1024 }));
    await refused('a real 3 MiB Put', '/etcdserverpb.KV/Put', frame(encodePut('fz/big', Buffer.alloc(3 * 1024 * 1024, 'x'))));
    await refused('an invalid protobuf (bad wire type)', '/etcdserverpb.KV/Put', frame(Buffer.from([0x0f, 0xff, 0xff, 0xff])));
    await refused('a length-delimited field running past the end', '/etcdserverpb.KV/Put', frame(Buffer.from([0x0a, 0x7f, 0x41])));
    await refused('no message at all', '/etcdserverpb.KV/Put', Buffer.alloc(0));
    await refused('two messages in a unary call', '/etcdserverpb.KV/Put', Buffer.concat([frame(encodePut('fz/2a', 'v')), frame(encodePut('fz/2b', 'v'))]));
    await refused('an unknown method', '/etcdserverpb.KV/Nope', frame(encodePut('fz/u', 'v')));
    await refused('an unknown service', '/etcdserverpb.Nope/Put', frame(encodePut('fz/u', 'v')));
    await refused('an empty key', '/etcdserverpb.KV/Put', frame(encodePut('', 'v')));
    await expectMemberIntact(c);
  });

  it('seeded random bytes as requests: a status every time, no write unless OK', async () => {
    const methods = ['/etcdserverpb.KV/Put', '/etcdserverpb.KV/Range', '/etcdserverpb.KV/Txn', '/etcdserverpb.KV/DeleteRange', '/etcdserverpb.Lease/LeaseGrant', '/etcdserverpb.Maintenance/Status'];
    let ok = 0;
    let failed = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat(methods.length - 1), fc.uint8Array({ maxLength: 200 }), fc.boolean(), async (m, bytes, lie) => {
        const before = await storeRevision(c);
        const body = frame(Buffer.from(bytes), lie ? { declared: bytes.length + 7 } : {});
        const a = await raw(methods[m], body);
        expect(a.grpcStatus, `${methods[m]} ${Buffer.from(bytes).toString('hex')}: ${JSON.stringify(a)}`).to.be.at.least(0);
        if (a.grpcStatus === 0) {
          ok++;
          return;
        }
        failed++;
        expect(a.grpcMessage.length, JSON.stringify(a)).to.be.greaterThan(0);
        expect(await storeRevision(c), `${methods[m]} ${Buffer.from(bytes).toString('hex')} failed but the revision moved`).to.equal(before);
      }),
      { numRuns: 200, seed: SEED },
    );
    expect(failed).to.be.greaterThan(0);
    expect(ok).to.be.greaterThan(0);
    await expectMemberIntact(c);
  });

  it('invalid ranges, limits and txns get clear errors or sane answers', async () => {
    const { KV } = loadClients();
    const kv = new KV(c.members[0].endpoint, grpc.credentials.createInsecure()) as unknown as grpc.Client &
      Record<string, (req: unknown, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void>;
    const call = (method: string, req: unknown) =>
      new Promise<{ err?: grpc.ServiceError; res?: Record<string, unknown> }>((resolve) => kv[method].call(kv, req, (err, res) => resolve(err ? { err } : { res })));
    const k = (s: string) => Buffer.from(s);
    try {
      await call('Put', { key: k('fz/r1'), value: k('v') });
      const before = await storeRevision(c);
      // harmless: empty answers
      for (const req of [{ key: k('z'), range_end: k('a') }, { key: k('a'), range_end: k('a') }, { key: k('fz/'), limit: '-1' }, { key: k('fz/'), min_mod_revision: '99', max_mod_revision: '1' }]) {
        const r = await call('Range', req);
        if (r.err) expect(r.err.details, JSON.stringify(req)).to.be.a('string').and.not.equal('');
      }
      const future = await call('Range', { key: k('fz/r1'), revision: '99999999' });
      expect(future.err?.code).to.equal(grpc.status.OUT_OF_RANGE);
      expect(future.err?.details).to.equal('etcdserver: mvcc: required revision is a future revision');
      const compactFuture = await call('Compact', { revision: '99999999' });
      expect(compactFuture.err?.code).to.equal(grpc.status.OUT_OF_RANGE);
      const tooMany = await call('Txn', { success: Array.from({ length: 129 }, (_, i) => ({ request_put: { key: k(`fz/t${i}`), value: k('v') } })) });
      expect(tooMany.err?.details).to.equal('etcdserver: too many operations in txn request');
      const dup = await call('Txn', { success: [{ request_put: { key: k('fz/d'), value: k('1') } }, { request_put: { key: k('fz/d'), value: k('2') } }] });
      expect(dup.err?.details).to.equal('etcdserver: duplicate key given in txn request');
      const emptyDel = await call('DeleteRange', { key: k('') });
      expect(emptyDel.err?.details).to.equal('etcdserver: key is not provided');
      expect(await storeRevision(c), 'a refused request moved the revision').to.equal(before);
      // Nested txns: answered in full, or refused without a write (FINDINGS.md F2).
      for (const depth of [8, 40, 50]) {
        let op: Record<string, unknown> = { request_put: { key: k(`fz/deep${depth}`), value: k('v') } };
        for (let i = 0; i < depth; i++) op = { request_txn: { success: [op] } };
        const r0 = await storeRevision(c);
        const deep = await call('Txn', op.request_txn);
        expect(await storeRevision(c), `txn nested ${depth} deep: ${deep.err?.details ?? 'ok'}`).to.equal(deep.err ? r0 : r0 + 1);
      }
      const before2 = await storeRevision(c);
      const badLease = await call('Put', { key: k('fz/l'), value: k('v'), lease: '424242' });
      expect(badLease.err?.details).to.equal('etcdserver: requested lease not found');
      expect(await storeRevision(c), 'a refused request moved the revision').to.equal(before2);
    } finally {
      kv.close();
    }
    await expectMemberIntact(c);
  });

  it('broken HTTP/2 connections and reset streams do not take the member down', async () => {
    const port = Number(new URL(c.members[0].clientURL).port);
    // the preface, then garbage where frames should be
    for (const junk of [Buffer.alloc(64, 0xff), Buffer.from('GET / HTTP/1.1\r\n\r\n'), Buffer.from([0, 0, 4, 8, 0, 0, 0, 0, 0])]) {
      const s = net.connect({ port, host: '127.0.0.1' });
      s.on('error', () => undefined);
      s.on('data', () => undefined);
      await new Promise((r) => s.once('connect', r));
      s.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), junk]));
      await sleep(200);
      s.destroy();
    }
    // a half preface, then silence, then a close
    const half = net.connect({ port, host: '127.0.0.1' });
    half.on('error', () => undefined);
    await new Promise((r) => half.once('connect', r));
    half.write('PRI * HTTP/2');
    await sleep(300);
    half.destroy();
    // 100 streams reset in the middle of their message
    const s2 = http2.connect(c.members[0].clientURL);
    s2.on('error', () => undefined);
    for (let i = 0; i < 100; i++) {
      const req = s2.request({ ':method': 'POST', ':path': '/etcdserverpb.KV/Put', 'content-type': 'application/grpc', te: 'trailers' });
      req.on('error', () => undefined);
      req.write(frame(encodePut(`fz/rst${i}`, 'v'), { declared: 1000 }));
      req.close(http2.constants.NGHTTP2_CANCEL);
    }
    await sleep(500);
    s2.destroy();
    const a = await raw('/etcdserverpb.KV/Put', frame(encodePut('fz/after', 'v')));
    expect(a.grpcStatus, JSON.stringify(a)).to.equal(0);
    await expectMemberIntact(c);
  });
});
