// unix:// peer and client URLs, read as the reference reads them: "unix://localhost:12345" is the socket
// file "localhost:12345" in the member's working directory. A 3-member cluster talks over unix sockets
// only; clients reach it over its client sockets (gRPC and HTTP).
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../../server/wire/index.js';
import { freePorts } from '../../../harness/ports.js';
import type { LoggedProcess } from '../../../harness/process.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';

type KvClient = grpc.Client & {
  Put(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void;
  Range(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: { kvs: Array<{ value: Buffer }> }) => void): void;
};

function healthOver(socketPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: '/health', timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

describe('unix:// peer and client URLs (integration)', function () {
  this.timeout(120000);
  let dir: string;
  const procs: LoggedProcess[] = [];
  let ports: number[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-unix-'));
    // Numbers only name the socket files; nothing binds these TCP ports.
    ports = await freePorts(6);
    const ic = [0, 1, 2].map((i) => `u${i}=unix://localhost:${ports[2 * i + 1]}`).join(',');
    for (let i = 0; i < 3; i++) {
      const c = `unix://localhost:${ports[2 * i]}`;
      const p = `unix://localhost:${ports[2 * i + 1]}`;
      procs.push(
        spawnSvc(
          [`--name=u${i}`, `--data-dir=u${i}.data`, `--listen-client-urls=${c}`, `--advertise-client-urls=${c}`, `--listen-peer-urls=${p}`, `--initial-advertise-peer-urls=${p}`, `--initial-cluster=${ic}`],
          { logFile: join(dir, `u${i}.log`), name: `u${i}`, cwd: dir },
        ),
      );
    }
    await Promise.all(procs.map((p) => p.waitForLog(/serving client traffic insecurely/, 60000)));
  });

  after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL', 5000)));
    rmSync(dir, { recursive: true, force: true });
  });

  it('the members form a cluster over their peer sockets and serve clients on their client sockets', async () => {
    const Kv = loadClients().KV;
    const kv0 = new Kv(`unix:${join(dir, `localhost:${ports[0]}`)}`, grpc.credentials.createInsecure()) as unknown as KvClient;
    const kv2 = new Kv(`unix:${join(dir, `localhost:${ports[4]}`)}`, grpc.credentials.createInsecure()) as unknown as KvClient;
    try {
      await new Promise<void>((resolve, reject) => kv0.Put({ key: Buffer.from('sock'), value: Buffer.from('et') }, { deadline: Date.now() + 10000 }, (e) => (e ? reject(e) : resolve())));
      const res = await new Promise<{ kvs: Array<{ value: Buffer }> }>((resolve, reject) =>
        kv2.Range({ key: Buffer.from('sock') }, { deadline: Date.now() + 10000 }, (e, r) => (e ? reject(e) : resolve(r))),
      );
      assert.equal(res.kvs[0]?.value.toString(), 'et');
      assert.equal(await healthOver(join(dir, `localhost:${ports[2]}`)), 200);
    } finally {
      kv0.close();
      kv2.close();
    }
  });
});
