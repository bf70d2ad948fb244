// One client port for gRPC and HTTP/1.1: real gRPC clients (ours and the reference etcdctl) and
// real HTTP clients against the same port, in plain TCP and TLS (certificates from harness/tls.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import type tls from 'node:tls';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { loadClients, serviceDefinitions } from '../../../server/wire/index.js';
import { ListenError, pickAlpn, startClientListener, type ClientListener } from '../../../server/api/listener.js';
import { etcdctl } from '../../../harness/etcdctl.js';
import { freePort } from '../../../harness/ports.js';
import { makeTestPki, type TestPki } from '../../../harness/tls.js';

const { health: healthService, kv: kvService } = serviceDefinitions();

type Any = Record<string, unknown>;
const header = { cluster_id: '1', member_id: '2', revision: 3, raft_term: 4 };

/** A grpc.Server whose KV.Range answers key=value and remembers the caller's certificate CN. */
function cannedGrpcServer(seenPeers: string[]): grpc.Server {
  const server = new grpc.Server();
  server.addService(kvService, {
    Range(call: grpc.ServerUnaryCall<Any, Any>, cb: grpc.sendUnaryData<Any>) {
      const cert = call.getAuthContext().sslPeerCertificate;
      seenPeers.push(cert ? String(cert.subject.CN) : '');
      const key = call.request.key as Buffer;
      cb(null, { header, kvs: [{ key, value: Buffer.from(`value-of-${key}`), create_revision: 1, mod_revision: 1, version: 1 }], count: 1 });
    },
  });
  // A stream that never ends by itself, like a watch.
  server.addService(healthService, {
    Watch(call: grpc.ServerWritableStream<Any, Any>) {
      call.write({ status: 'SERVING' });
    },
  });
  return server;
}

/** HTTP handler: GET /version, POST /echo (echoes the body), GET /slow (answers after 300 ms). */
function httpHandler(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.url === '/version') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"etcdserver":"3.5.21","etcdcluster":"3.5.0"}');
  } else if (req.url === '/echo') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => res.end(Buffer.concat(chunks)));
  } else if (req.url === '/slow') {
    setTimeout(() => res.end('slow done'), 300);
  } else {
    res.writeHead(404).end('not found');
  }
}

function request(
  url: string,
  opts: { method?: string; body?: string; ca?: Buffer; cert?: Buffer; key?: Buffer; agent?: http.Agent; alpn?: string[] } = {},
): Promise<{ status: number; body: string; alpn?: string | false }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const options: https.RequestOptions & Pick<tls.ConnectionOptions, 'ALPNProtocols'> = { method: opts.method ?? 'GET', ca: opts.ca, cert: opts.cert, key: opts.key, agent: opts.agent, ALPNProtocols: opts.alpn };
    const req = mod.request(u, options, (res) => {
      const chunks: Buffer[] = [];
      const alpn = (res.socket as { alpnProtocol?: string | false } | null)?.alpnProtocol;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), alpn }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function grpcRange(port: number, key: string, creds: grpc.ChannelCredentials): Promise<Any> {
  const client = new (loadClients().KV)(`127.0.0.1:${port}`, creds);
  return new Promise<Any>((resolve, reject) =>
    client.Range({ key: Buffer.from(key) }, { deadline: Date.now() + 10000 }, (err: Error | null, v: Any) => {
      client.close();
      if (err) reject(err);
      else resolve(v);
    }),
  );
}

describe('client listener: gRPC and HTTP/1.1 on one port', function () {
  let tmp: string;
  let pki: TestPki;
  const peers: string[] = [];
  let grpcServer: grpc.Server;

  before(function () {
    tmp = mkdtempSync(join(tmpdir(), 'svc-listener-'));
    pki = makeTestPki(tmp, { clientCommonName: 'alice' });
    grpcServer = cannedGrpcServer(peers);
  });

  after(function () {
    grpcServer.forceShutdown();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe('plain http://', function () {
    let listener: ClientListener;
    before(async function () {
      listener = await startClientListener({ url: new URL('http://127.0.0.1:0'), grpcServer, http: httpHandler });
    });
    after(async function () {
      await listener.close();
    });

    it('reports the real port', function () {
      expect(listener.address.port).to.be.greaterThan(0);
      expect(listener.url.toString()).to.equal(`http://127.0.0.1:${listener.address.port}/`);
    });

    it('answers a gRPC call and HTTP requests on the same port', async function () {
      const port = listener.address.port;
      const res = await grpcRange(port, 'k1', grpc.credentials.createInsecure());
      expect(((res.kvs as Any[])[0].value as Buffer).toString()).to.equal('value-of-k1');
      const v = await request(`http://127.0.0.1:${port}/version`);
      expect(v.status).to.equal(200);
      expect(JSON.parse(v.body)).to.deep.equal({ etcdserver: '3.5.21', etcdcluster: '3.5.0' });
      // a request body that arrives with the first bytes survives the sniffing
      const big = 'x'.repeat(200000);
      const e = await request(`http://127.0.0.1:${port}/echo`, { method: 'POST', body: big });
      expect(e.body).to.equal(big);
      // gRPC still works after HTTP traffic, on a fresh connection
      const again = await grpcRange(port, 'k2', grpc.credentials.createInsecure());
      expect(((again.kvs as Any[])[0].value as Buffer).toString()).to.equal('value-of-k2');
    });

    it('keeps HTTP/1.1 keep-alive connections working for several requests', async function () {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; i < 3; i++) {
          const r = await request(`http://127.0.0.1:${listener.address.port}/version`, { agent });
          expect(r.status).to.equal(200);
        }
      } finally {
        agent.destroy();
      }
    });

    it('classifies a request that arrives a few bytes at a time', async function () {
      const sock = net.connect(listener.address.port, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      const reply = new Promise<string>((resolve) => {
        let text = '';
        sock.on('data', (c: Buffer) => (text += c.toString()));
        sock.on('close', () => resolve(text));
      });
      // "P" and "PR" are also prefixes of the HTTP/2 preface: the listener must wait for more
      for (const part of ['P', 'R', 'OPFIND', ' /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
        sock.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
      const text = await reply;
      expect(text).to.match(/^HTTP\/1\.1 200 /); // the handler answers by path, whatever the method
      expect(text).to.contain('etcdserver');
    });

    it('serves the real etcdctl', async function () {
      const r = await etcdctl(['get', 'foo'], { endpoints: [`127.0.0.1:${listener.address.port}`] });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('foo\nvalue-of-foo\n');
    });
  });

  describe('https:// with client certificates', function () {
    let listener: ClientListener;
    before(async function () {
      listener = await startClientListener({
        url: new URL('https://127.0.0.1:0'),
        grpcServer,
        http: httpHandler,
        tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
      });
    });
    after(async function () {
      await listener.close();
    });

    it('answers gRPC (ALPN h2) and HTTPS (http/1.1) on the same port, with the client identity', async function () {
      const port = listener.address.port;
      peers.length = 0;
      const res = await grpcRange(port, 'k3', grpc.credentials.createSsl(pki.ca, pki.clientKey, pki.clientCert));
      expect(((res.kvs as Any[])[0].value as Buffer).toString()).to.equal('value-of-k3');
      expect(peers).to.deep.equal(['alice']);
      const v = await request(`https://127.0.0.1:${port}/version`, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
      expect(v.status).to.equal(200);
      expect(v.body).to.contain('etcdserver');
    });

    it('refuses a client without a certificate', async function () {
      let failed = false;
      try {
        await request(`https://127.0.0.1:${listener.address.port}/version`, { ca: pki.ca });
      } catch {
        failed = true;
      }
      expect(failed).to.equal(true);
    });

    it('serves the real etcdctl with --cacert/--cert/--key', async function () {
      const r = await etcdctl(
        ['--cacert', pki.caFile, '--cert', pki.clientCertFile, '--key', pki.clientKeyFile, 'get', 'bar'],
        { endpoints: [`https://127.0.0.1:${listener.address.port}`] },
      );
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('bar\nvalue-of-bar\n');
    });
  });

  describe('https:// server-only TLS', function () {
    it('serves etcdctl with just --cacert, and HTTPS GET', async function () {
      const listener = await startClientListener({
        url: new URL('https://127.0.0.1:0'),
        grpcServer,
        http: httpHandler,
        tls: { cert: pki.serverCert, key: pki.serverKey },
      });
      try {
        const r = await etcdctl(['--cacert', pki.caFile, 'get', 'baz'], { endpoints: [`https://127.0.0.1:${listener.address.port}`] });
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.equal('baz\nvalue-of-baz\n');
        // like curl: offers h2 and http/1.1, must land on the HTTP handler
        const v = await request(`https://127.0.0.1:${listener.address.port}/version`, { ca: pki.ca, alpn: ['h2', 'http/1.1'], agent: new https.Agent() });
        expect(v.status).to.equal(200);
        expect(v.alpn).to.equal('http/1.1');
        const plain = await request(`https://127.0.0.1:${listener.address.port}/version`, { ca: pki.ca });
        expect(plain.status).to.equal(200);
      } finally {
        await listener.close();
      }
    });
  });

  describe('errors and shutdown', function () {
    it('names the URL when the port is in use', async function () {
      const port = await freePort();
      const blocker = net.createServer();
      await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
      try {
        let err: unknown;
        try {
          await startClientListener({ url: new URL(`http://127.0.0.1:${port}`), grpcServer, http: httpHandler });
        } catch (e) {
          err = e;
        }
        expect(err).to.be.instanceOf(ListenError);
        expect((err as ListenError).code).to.equal('ADDRESS_IN_USE');
        expect((err as ListenError).message).to.equal(`cannot listen on client URL http://127.0.0.1:${port}: address already in use`);
      } finally {
        await new Promise((r) => blocker.close(r));
      }
    });

    it('rejects bad URLs and missing TLS material with typed errors', async function () {
      const codes: string[] = [];
      for (const [url, tlsOpt] of [
        ['ftp://127.0.0.1:1', undefined],
        ['https://127.0.0.1:0', undefined],
        ['http://127.0.0.1:0', { cert: pki.serverCert, key: pki.serverKey }],
      ] as const) {
        try {
          await startClientListener({ url: new URL(url), grpcServer, http: httpHandler, tls: tlsOpt });
        } catch (e) {
          expect(e).to.be.instanceOf(ListenError);
          expect((e as ListenError).message).to.contain(url.replace(/\/$/, ''));
          codes.push((e as ListenError).code);
        }
      }
      expect(codes).to.deep.equal(['BAD_URL', 'TLS_REQUIRED', 'TLS_UNEXPECTED']);
    });

    it('close() lets an in-flight request finish, then refuses connections', async function () {
      const listener = await startClientListener({ url: new URL('http://127.0.0.1:0'), grpcServer, http: httpHandler });
      const port = listener.address.port;
      const slow = request(`http://127.0.0.1:${port}/slow`);
      await new Promise((r) => setTimeout(r, 50)); // let the request reach the handler
      await listener.close();
      expect((await slow).body).to.equal('slow done');
      let refused = false;
      try {
        await request(`http://127.0.0.1:${port}/version`);
      } catch (e) {
        refused = (e as NodeJS.ErrnoException).code === 'ECONNREFUSED';
      }
      expect(refused).to.equal(true);
    });

    it('close() ends long-lived gRPC streams after the grace period', async function () {
      const listener = await startClientListener({ url: new URL('http://127.0.0.1:0'), grpcServer, http: httpHandler });
      const client = new (loadClients().Health)(`127.0.0.1:${listener.address.port}`, grpc.credentials.createInsecure());
      try {
        const stream = client.Watch({ service: '' }) as grpc.ClientReadableStream<Any>;
        const first = await new Promise<Any>((resolve) => stream.once('data', resolve));
        expect(first.status).to.equal('SERVING');
        const ended = new Promise<void>((resolve) => {
          stream.on('error', () => resolve());
          stream.on('end', () => resolve());
        });
        await listener.close(200);
        await ended;
      } finally {
        client.close();
      }
    });

    it('picks ALPN http/1.1 when offered, h2 only for h2-only clients', function () {
      expect(pickAlpn(['h2'])).to.equal('h2');
      expect(pickAlpn(['h2', 'http/1.1'])).to.equal('http/1.1');
      expect(pickAlpn(['http/1.1'])).to.equal('http/1.1');
      expect(pickAlpn(['acme-tls/1'])).to.equal(undefined);
    });
  });
});
