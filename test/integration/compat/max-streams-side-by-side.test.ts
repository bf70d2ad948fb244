// --max-concurrent-streams=1 on svc and on the reference 3.5.21, side by side: both advertise the limit in their
// HTTP/2 SETTINGS, and a client with one stream open (a watch) on its connection waits with its next call until
// the watch ends; the JSON gateway's calls, which the reference makes over one gRPC connection to itself, wait
// the same way behind a gateway watch.
import { expect } from 'chai';
import http from 'node:http';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../../server/wire/index.js';
import { ref35, startReferenceCluster } from '../../../harness/reference-cluster.js';
import { useClustersSideBySide } from '../../../harness/side-by-side.js';
import { b64, postJson, startSvcCluster } from '../../../harness/svc-cluster.js';
import { sleep } from '../../../harness/process.js';

type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function remoteMaxStreams(endpoint: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`http://${endpoint}`);
    s.on('error', reject);
    s.on('remoteSettings', (st) => {
      resolve(st.maxConcurrentStreams);
      s.close();
    });
  });
}

/** Opens a watch, then a Range on the same connection; ends the watch after `holdMs`; returns when the Range was answered (ms after it was sent). */
async function rangeBehindWatch(endpoint: string, holdMs: number): Promise<number> {
  const C = loadClients();
  const creds = grpc.credentials.createInsecure();
  const channel = new grpc.Channel(endpoint, creds, {});
  const watch = new C.Watch(endpoint, creds, { channelOverride: channel }) as unknown as { Watch(): grpc.ClientDuplexStream<Msg, Msg> };
  const kv = new C.KV(endpoint, creds, { channelOverride: channel }) as unknown as { Range(r: Msg, cb: (e: grpc.ServiceError | null) => void): void };
  try {
    const w = watch.Watch();
    w.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      w.on('data', (d: Msg) => d.created && resolve());
      w.write({ create_request: { key: Buffer.from('mcs') } });
    });
    const t0 = Date.now();
    const answered = new Promise<number>((resolve, reject) => kv.Range({ key: Buffer.from('mcs') }, (e) => (e ? reject(e) : resolve(Date.now() - t0))));
    await Promise.race([answered, sleep(holdMs)]);
    w.cancel();
    return await answered;
  } finally {
    channel.close();
  }
}

/** A gateway watch held open for `holdMs`, and a gateway range sent once it is open: ms until the range answered. */
async function gatewayRangeBehindWatch(url: string, holdMs: number): Promise<number> {
  const watch = http.request(`${url}/v3/watch`, { method: 'POST', headers: { 'content-type': 'application/json' } });
  try {
    await new Promise<void>((resolve, reject) => {
      watch.on('error', reject);
      watch.on('response', (res) => res.once('data', () => resolve()));
      watch.end(JSON.stringify({ create_request: { key: b64('mcs') } }));
    });
    const t0 = Date.now();
    const answered = postJson(`${url}/v3/kv/range`, { key: b64('mcs') }).then((a) => {
      expect(a.status).to.equal(200);
      return Date.now() - t0;
    });
    await Promise.race([answered, sleep(holdMs)]);
    watch.destroy();
    return await answered;
  } finally {
    watch.destroy();
  }
}

describe('--max-concurrent-streams side by side: svc 3.5 and the reference 3.5.21', function () {
  this.timeout(60000);
  const extraArgs = ['--max-concurrent-streams=1'];
  const pair = useClustersSideBySide(() => [startSvcCluster({ size: 1, extraArgs }), startReferenceCluster({ size: 1, binary: ref35('etcd'), extraArgs })]);

  it('both advertise SETTINGS_MAX_CONCURRENT_STREAMS 1; a second call on the connection waits for the first stream to end', async () => {
    for (const [who, endpoint] of [['svc', pair.svc.members[0].endpoint], ['reference', pair.ref.endpoints[0]]]) {
      expect(await remoteMaxStreams(endpoint), who).to.equal(1);
      const ms = await rangeBehindWatch(endpoint, 800);
      expect(ms, who).to.be.at.least(700);
    }
  });

  it('the gateway: a range waits behind an open gateway watch on both', async () => {
    for (const [who, url] of [['svc', pair.svc.members[0].clientURL], ['reference', pair.ref.clientUrls[0]]]) {
      expect(await gatewayRangeBehindWatch(url, 800), who).to.be.at.least(700);
    }
  });
});
