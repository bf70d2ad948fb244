// Flags the reference's own test suite uses: --unsafe-no-fsync (3.5), --max-concurrent-streams,
// --listen-client-http-urls (3.5). Each is checked for its effect on a running member, and the 3.5-only ones
// are refused by 3.4 with exit status 2.
import { strict as assert } from 'node:assert';
import http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import { Connection } from '../../../server/client/connection.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet } from '../../../harness/process.js';
import { runSvc, useSvcClusters } from '../../../harness/svc-cluster.js';

type KvStub = { Put(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void };

function put(endpoint: string): Promise<void> {
  const conn = new Connection(endpoint, undefined);
  const kv = conn.stub('KV') as unknown as KvStub;
  return new Promise<void>((resolve, reject) => kv.Put({ key: Buffer.from('k'), value: Buffer.from('v') }, { deadline: Date.now() + 3000 }, (err) => (err ? reject(err) : resolve()))).finally(() =>
    conn.close(),
  );
}

function fsyncCount(metrics: string): number {
  const m = /^svc_disk_wal_fsync_duration_seconds_count (\d+)/m.exec(metrics);
  assert.ok(m, 'no svc_disk_wal_fsync_duration_seconds_count in /metrics');
  return Number(m[1]);
}

describe('3.5 flags the reference suite uses (integration)', function () {
  this.timeout(90000);
  const clusters = useSvcClusters();

  it('--unsafe-no-fsync: the WAL never fsyncs (the fsync histogram stays empty); without it, it does', async () => {
    for (const [flag, expectSyncs] of [[['--unsafe-no-fsync'], false], [[], true]] as const) {
      const cluster = await clusters.start({ size: 1, extraArgs: flag });
      for (let i = 0; i < 10; i++) await cluster.put(0, `k${i}`, 'v');
      const n = fsyncCount((await httpGet(`${cluster.members[0].clientURL}/metrics`)).body);
      if (expectSyncs) assert.ok(n > 0, 'a member without --unsafe-no-fsync did not fsync');
      else assert.equal(n, 0);
      await cluster.close();
    }
  });

  it('--max-concurrent-streams: announced to every client connection in the HTTP/2 settings', async () => {
    const cluster = await clusters.start({ size: 1, extraArgs: ['--max-concurrent-streams=2'] });
    const session = http2.connect(cluster.members[0].clientURL);
    try {
      const settings = await new Promise<http2.Settings>((resolve, reject) => {
        session.once('remoteSettings', resolve);
        session.once('error', reject);
      });
      assert.equal(settings.maxConcurrentStreams, 2);
    } finally {
      session.close();
    }
    await put(cluster.members[0].endpoint);
  });

  it('--listen-client-http-urls: HTTP only there, gRPC only on --listen-client-urls', async () => {
    const [hp] = await freePorts(1);
    const httpURL = `http://127.0.0.1:${hp}`;
    const cluster = await clusters.start({ size: 1, extraArgs: [`--listen-client-http-urls=${httpURL}`], waitHealthy: false });
    const m = cluster.members[0];
    await cluster.waitForLog(0, /"msg":"ready to serve client requests"/);
    assert.equal((await httpGet(`${httpURL}/health`)).status, 200);
    await put(m.endpoint);
    await assert.rejects(put(`127.0.0.1:${hp}`));
    await assert.rejects(httpGet(`${m.clientURL}/health`));
  });

  it('--enable-grpc-gateway=false: no JSON gateway, the rest of HTTP and gRPC as before', async () => {
    const cluster = await clusters.start({ size: 1, extraArgs: ['--enable-grpc-gateway=false'] });
    const m = cluster.members[0];
    assert.equal((await cluster.post(0, '/v3/kv/range', { key: 'YQ==' })).status, 404);
    assert.equal((await httpGet(`${m.clientURL}/health`)).status, 200);
    await put(m.endpoint);
  });

  it('--grpc-keepalive-interval / --grpc-keepalive-timeout: the member pings its gRPC clients', async () => {
    const cluster = await clusters.start({ size: 1, extraArgs: ['--grpc-keepalive-interval=300ms', '--grpc-keepalive-timeout=5s'] });
    const session = http2.connect(cluster.members[0].clientURL);
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no keepalive ping within 15 s')), 15000);
        session.once('ping', () => {
          clearTimeout(t);
          resolve();
        });
        session.once('error', reject);
      });
    } finally {
      session.close();
    }
  });

  it('--experimental-watch-progress-notify-interval: watchers that asked get periodic progress notifications', async () => {
    const cluster = await clusters.start({ size: 1, version: '3.4.34', extraArgs: ['--experimental-watch-progress-notify-interval=300ms'] });
    const conn = new Connection(cluster.members[0].endpoint, undefined);
    const call = (conn.stub('Watch') as unknown as { Watch(): grpc.ClientDuplexStream<unknown, { created: boolean; watch_id: string; events: unknown[] }> }).Watch();
    try {
      const got = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no progress notification within 15 s')), 15000);
        let id: string | undefined;
        call.on('data', (r) => {
          if (r.created) id = r.watch_id;
          else if (id !== undefined && r.watch_id === id && r.events.length === 0) {
            clearTimeout(t);
            resolve(r.watch_id);
          }
        });
        call.on('error', reject);
        call.write({ create_request: { key: Buffer.from('pn'), progress_notify: true } });
      });
      assert.equal(got, '0');
    } finally {
      call.cancel();
      conn.close();
    }
  });

  it('3.4 refuses the 3.5-only flags with exit status 2', async () => {
    for (const flag of ['--unsafe-no-fsync', '--listen-client-http-urls=http://127.0.0.1:1', '--self-signed-cert-validity=2']) {
      const r = await runSvc(['--name=x', '--data-dir=/nonexistent/never-created', flag], { version: '3.4.34' });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(flag.slice(2).split('=')[0]));
    }
  });
});
