// --listen-metrics-urls: an extra plain-http URL that serves only /metrics and /health (the reference's answer
// for probes when the client URL asks for client certificates), and the v2 store's size gauge on /metrics.
import { expect } from 'chai';
import http from 'node:http';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, sleep } from '../../../harness/process.js';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeClusterCerts } from '../../k8s/operator/tls-certs.js';

function put(url: string, form: Record<string, string>): Promise<number> {
  const payload = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', agent: false, timeout: 10000, headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(payload) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('svc --listen-metrics-urls and the v2 size gauge', function () {
  this.timeout(90000);
  let c: SvcCluster | undefined;
  let metricsURL = '';
  printLogsOnFailure(() => [c]);
  before(async () => {
    const [port] = await freePorts(1);
    metricsURL = `http://127.0.0.1:${port}`;
    c = await startSvcCluster({ size: 1, version: '3.4.34', extraArgs: ['--enable-v2=true', `--listen-metrics-urls=${metricsURL}`] });
  });
  after(async () => {
    await c?.close();
  });

  it('serves /health and /metrics on the metrics URL, and nothing else', async () => {
    const health = await httpGet(`${metricsURL}/health`);
    expect(health.status).to.equal(200);
    expect(JSON.parse(health.body)).to.deep.equal({ health: 'true' });
    const metrics = await httpGet(`${metricsURL}/metrics`);
    expect(metrics.status).to.equal(200);
    expect(metrics.body).to.match(/^svc_server_is_leader 1$/m);
    // the process's own series: this member's resident memory (as /proc says it) and its event-loop delay
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics.body)?.[1]);
    const rss = value('process_resident_memory_bytes');
    const procRss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${c!.members[0].process.pid}/status`, 'utf8'))?.[1]) * 1024;
    expect(rss, 'process_resident_memory_bytes').to.be.within(procRss / 2, procRss * 2);
    expect(value('nodejs_eventloop_lag_p99_seconds'), 'nodejs_eventloop_lag_p99_seconds').to.be.at.least(0);
    expect(value('nodejs_heap_size_used_bytes'), 'nodejs_heap_size_used_bytes').to.be.above(1e6);
    for (const path of ['/version', '/v2/keys/', '/v3/kv/range']) {
      expect((await httpGet(`${metricsURL}${path}`)).status, path).to.equal(404);
    }
  });

  it('svc_v2_store_data_bytes counts the bytes of v2 keys and values', async () => {
    const base = c!.members[0].clientURL;
    const gauge = async () => Number(/^svc_v2_store_data_bytes (\S+)$/m.exec((await httpGet(`${base}/metrics`)).body)?.[1]);
    expect(await gauge()).to.equal(0);
    expect(await put(`${base}/v2/keys/dir/alpha`, { value: 'x'.repeat(1000) })).to.equal(201);
    expect(await put(`${base}/v2/keys/beta`, { value: 'yy' })).to.equal(201);
    // names of every node ("dir", "alpha", "beta") and the values
    expect(await gauge()).to.equal(3 + 5 + 1000 + 4 + 2);
    expect(await put(`${base}/v2/keys/beta`, { value: 'yyyy' })).to.equal(200);
    expect(await gauge()).to.equal(3 + 5 + 1000 + 4 + 4);
  });

  describe('with client TLS and --client-cert-auth', () => {
    let t: SvcCluster | undefined;
    let dir = '';
    let plain = '';
    let secure = '';
    let client = '';
    printLogsOnFailure(() => [t]);
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'svc-metrics-tls-'));
      const certs = await makeClusterCerts(dir, 'm', 'ns');
      const [c, p, s] = await freePorts(3);
      client = `https://127.0.0.1:${c}`;
      plain = `http://127.0.0.1:${p}`;
      secure = `https://127.0.0.1:${s}`;
      t = await startSvcCluster({
        size: 1, version: '3.4.34', waitHealthy: false,
        extraArgs: [`--listen-client-urls=${client}`, `--advertise-client-urls=${client}`, `--cert-file=${certs.files.cert}`, `--key-file=${certs.files.key}`,
          `--trusted-ca-file=${certs.files.ca}`, '--client-cert-auth=true', `--listen-metrics-urls=${plain},${secure}`],
      });
    });
    after(async () => {
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const tlsGet = (url: string, withCert: boolean) => new Promise<number>((resolve, reject) => {
      const certs = { ca: readFileSync(join(dir, 'ca.crt')), ...(withCert ? { cert: readFileSync(join(dir, 'tls.crt')), key: readFileSync(join(dir, 'tls.key')) } : {}) };
      https.get(url, { ...certs, agent: false, timeout: 5000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });

    it('the plain metrics URL answers /health without a certificate (what a kubelet probe needs); https ones ask for it', async () => {
      let health = await httpGet(`${plain}/health`).catch(() => undefined);
      for (let i = 0; i < 100 && health?.status !== 200; i++) {
        await sleep(200);
        health = await httpGet(`${plain}/health`).catch(() => undefined);
      }
      expect(health?.status).to.equal(200);
      expect(await tlsGet(`${client}/health`, true)).to.equal(200);
      expect(await tlsGet(`${secure}/health`, true)).to.equal(200);
      for (const url of [client, secure]) {
        expect(await tlsGet(`${url}/health`, false).catch((e: Error) => e), url).to.be.instanceOf(Error);
      }
    });
  });
});
