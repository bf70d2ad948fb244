// A TLS SvcCluster against the real control plane and the test node: the controller reads the client Secret
// and talks to members that ask for client certificates (--client-cert-auth), the pods' readiness probe uses the
// plain metrics port, clients need the certificate, and a missing or malformed Secret blocks the cluster with
// a Warning Event before anything is applied.
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import { httpGet, MemberClient } from '../../operator/members/index.js';
import { KubeRuntime } from '../../operator/runtime/kubernetes/kube-runtime.js';
import { memoryRecords } from '../../operator/runtime/memory-records.js';
import { Client } from '../../server/client/index.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster, pluginEnv } from './operator/helpers.js';
import { makeClusterCerts, type ClusterCerts } from './operator/tls-certs.js';
import { runCommand, waitFor } from '../../harness/process.js';
import { binary } from './binaries.js';

const NS = 'svcc-tls';
const NAME = 'secure';

describe('k8s: a TLS SvcCluster', function () {
  this.timeout(240_000);
  const op = useOperator(NS);
  let certs: ClusterCerts;

  const get = (name: string) => getSvcCluster(op.tb, NS, name);
  const events = async (name: string): Promise<Array<{ reason: string; message: string; type: string }>> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string; type: string }> }).items;
  const secret = (name: string, data: Record<string, Buffer | string>) =>
    op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, type: 'Opaque',
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) }));
  const cluster = (name: string, tls: Record<string, string>, extra: Record<string, unknown> = {}) =>
    op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { version: '3.5.21', replicas: 3, tls, ...extra } }));
  const member = (i: number) => `${NAME}-${i}.${NAME}.${NS}.svc:2379`;

  before(async () => {
    certs = await makeClusterCerts(join(op.tb.workDir, 'tls-certs', NAME), NAME, NS);
  });

  it('with client and peer TLS becomes Available, every member healthy, pods Ready through the plain metrics port', async () => {
    const pair = { 'tls.crt': certs.cert, 'tls.key': certs.key, 'ca.crt': certs.ca };
    await secret(`${NAME}-client-tls`, pair);
    await secret(`${NAME}-peer-tls`, pair);
    await cluster(NAME, { clientSecret: `${NAME}-client-tls`, peerSecret: `${NAME}-peer-tls` }, { enableV2: true, version: '3.4.34' });
    const st = await waitFor('the TLS cluster Running with 3 ready pods', async () => {
      const s = (await get(NAME)).status;
      return s?.phase === 'Running' && s.ready === '3/3' ? s : undefined;
    }, 200_000, 1000);
    expect(st.members!.map((m) => m.name)).to.deep.equal([`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    expect(st.members!.every((m) => m.healthy && m.release === '3.4.34')).to.equal(true);
    expect(st.members!.filter((m) => m.leader)).to.have.length(1);
    expect(st.conditions!.find((c) => c.type === 'Available')).to.include({ status: 'True' });
    expect(st.lastError).to.equal(undefined);
    const sts = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'statefulset', NAME, '-o', 'json'])) as { spec: { template: { spec: { containers: Array<{ args: string[]; readinessProbe: { httpGet: { port: string; scheme: string } } }> } } } };
    const c = sts.spec.template.spec.containers[0];
    expect(c.args).to.include('--client-cert-auth=true').and.include('--listen-metrics-urls=http://0.0.0.0:2381');
    expect(c.readinessProbe.httpGet).to.include({ port: 'metrics', scheme: 'HTTP' });
  });

  it('serves a put and a get over TLS with the client certificate, the v2 estimate over TLS; plain http and TLS without a certificate are refused', async () => {
    const c = await Client.connect({ endpoints: [`https://${member(0)}`], tls: { ca: certs.ca, cert: certs.cert, key: certs.key }, dialTimeoutMs: 5000, commandTimeoutMs: 5000 });
    try {
      await c.put('greeting', 'hello over tls');
      const r = await c.get('greeting');
      expect(r.kvs.map((kv) => kv.value.toString())).to.deep.equal(['hello over tls']);
    } finally {
      c.close();
    }
    // v2 data written over TLS shows in the estimate the Kubernetes runtime reads from a member's /metrics
    const payload = new URLSearchParams({ value: 'x'.repeat(4096) }).toString();
    const created = await new Promise<number>((resolve, reject) => {
      const req = https.request(`https://${member(0)}/v2/keys/big/one`, { method: 'PUT', agent: false, ca: certs.ca, cert: certs.cert, key: certs.key,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(payload) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(payload);
    });
    expect(created).to.equal(201);
    const client = new MemberClient({ tls: { ca: certs.ca, cert: certs.cert, key: certs.key } });
    try {
      const spec = { version: '3.4.34', replicas: 3, enableV2: true, tls: { clientSecret: `${NAME}-client-tls`, peerSecret: `${NAME}-peer-tls` } };
      const rt = new KubeRuntime(op.ctl.api, { name: NAME, namespace: NS, uid: '', spec }, { snapshotDir: join(op.tb.workDir, 'operator-snapshots'), client, records: memoryRecords() });
      // "big", "one" and the value, once member 2 applied the write
      await waitFor('the v2 estimate of member 2', async () => ((await rt.v2DataBytes(`${NAME}-2`)) === 3 + 3 + 4096 ? true : undefined), 10_000, 200);
    } finally {
      client.close();
    }
    // the same read through another member, as the operator reads /health
    expect((await httpGet(`https://${member(1)}/health`, 5000, { ca: certs.ca, cert: certs.cert, key: certs.key })).status).to.equal(200);

    const plainGrpc = await Client.connect({ endpoints: [`http://${member(0)}`], dialTimeoutMs: 3000, commandTimeoutMs: 3000 }).catch((e: Error) => e);
    if (!(plainGrpc instanceof Error)) {
      const r = await plainGrpc.get('greeting').catch((e: Error) => e);
      plainGrpc.close();
      expect(r).to.be.instanceOf(Error);
    }
    const plainHttp = await httpGet(`http://${member(0)}/health`, 3000).catch((e: Error) => e);
    expect(plainHttp instanceof Error || plainHttp.status !== 200, 'plain http /health').to.equal(true);
    const noCert = await new Promise<number>((resolve, reject) => {
      https.get(`https://${member(0)}/health`, { ca: certs.ca, agent: false, timeout: 3000 }, (res) => resolve(res.statusCode ?? 0)).on('error', reject);
    }).catch((e: Error) => e);
    expect(noCert, 'TLS without a client certificate').to.be.instanceOf(Error);
  });

  it('upgrades 3.4.34 -> 3.5.21 over TLS: snapshot, move-leader and status through the client certificate', async () => {
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"version":"3.5.21"}}']);
    const st = await waitFor('the TLS upgrade complete', async () => {
      const s = (await get(NAME)).status;
      return s?.phase === 'Running' && s.currentVersion === '3.5.21' && s.clusterVersion === '3.5.0' && s.upgrade?.finishedAt ? s : undefined;
    }, 220_000, 1000);
    expect(st.members!.every((m) => m.healthy && m.release === '3.5.21')).to.equal(true);
    expect(st.upgrade!.snapshot!.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(st.upgrade!.snapshot!.size).to.be.above(0);
    const reasons = (await events(NAME)).map((e) => e.reason);
    expect(reasons).to.include.members(['Snapshot', 'MoveLeader', 'RestartMember', 'UpgradeComplete']);
    expect(reasons.filter((r) => r.endsWith('Failed'))).to.deep.equal([]);
  });

  it('`kubectl svc status` reads the TLS members live with the client Secret and shows certificate expiry and the last backup', async () => {
    const env = pluginEnv(op.tb);
    const { stdout } = await runCommand([binary('kubectl'), 'svc', 'status', NAME, '-n', NS], { env });
    const notAfter = new Date(new X509Certificate(certs.cert).validTo).toISOString();
    expect(stdout).to.contain(`Certificate:    client Secret ${NAME}-client-tls: expires ${notAfter} (in `);
    expect(stdout).to.contain(`Certificate:    peer Secret ${NAME}-peer-tls: expires ${notAfter} (in `);
    expect(stdout).to.match(/^Upgrade:\s+none in progress \(last: 3\.4\.34 -> 3\.5\.21, complete, finished \S+ ago\)$/m);
    expect(stdout).to.match(/^Last backup:\s+\S+ from secure-\d, revision \d+, /m);
    const rows = stdout.split('\n').filter((l) => l.startsWith(`${NAME}-`));
    expect(rows, stdout).to.have.length(3);
    for (const r of rows) expect(r).to.match(/^secure-\d\s+(leader|follower)\s+3\.5\.21\s+healthy\s+\d+\s+\d+\s+\d+\s/);
    expect(stdout).to.match(/^Alarms:\s+none$/m);
  });

  it('a missing client Secret: Blocked with lastError and a TLSSecretMissing Warning Event, nothing applied; a malformed one: TLSSecretInvalid; a good one: Running', async () => {
    const other = 'nosecret';
    await cluster(other, { clientSecret: `${other}-client-tls` });
    const st = await waitFor('lastError about the missing Secret', async () => {
      const s = (await get(other)).status;
      return s?.lastError ? s : undefined;
    }, 60_000, 500);
    expect(st.phase).to.equal('Blocked');
    expect(st.lastError).to.equal(`spec.tls.clientSecret Secret "${other}-client-tls" does not exist in namespace ${NS}`);
    const ev = await waitFor('a TLSSecretMissing Event', async () => (await events(other)).find((e) => e.reason === 'TLSSecretMissing'), 30_000, 500);
    expect(ev).to.include({ type: 'Warning', message: st.lastError });
    const owned = (await op.tb.kubectl(['-n', NS, 'get', 'statefulsets,services,configmaps', '-l', `svc.dev/cluster=${other}`, '-o', 'name'])).trim();
    expect(owned, 'objects of the blocked cluster').to.equal('');

    // a Secret whose key is not the certificate's: the next look (within 15 s) says so
    const wrongKey = await makeClusterCerts(join(op.tb.workDir, 'tls-certs', other), other, NS);
    await secret(`${other}-client-tls`, { 'tls.crt': certs.cert, 'tls.key': wrongKey.key, 'ca.crt': certs.ca });
    const bad = await waitFor('lastError about the malformed Secret', async () => {
      const s = (await get(other)).status;
      return s?.lastError?.includes('tls.key is not the key of tls.crt') ? s : undefined;
    }, 60_000, 500);
    expect(bad.phase).to.equal('Blocked');
    const inv = await waitFor('a TLSSecretInvalid Event', async () => (await events(other)).find((e) => e.reason === 'TLSSecretInvalid'), 30_000, 500);
    expect(inv).to.include({ type: 'Warning', message: bad.lastError });
    expect((await op.tb.kubectl(['-n', NS, 'get', 'statefulsets', '-l', `svc.dev/cluster=${other}`, '-o', 'name'])).trim()).to.equal('');

    // the right pair: the cluster is created and the error goes away
    await secret(`${other}-client-tls`, { 'tls.crt': wrongKey.cert, 'tls.key': wrongKey.key, 'ca.crt': wrongKey.ca });
    const ok = await waitFor('the repaired cluster Running', async () => {
      const s = (await get(other)).status;
      return s?.phase === 'Running' && s.ready === '3/3' ? s : undefined;
    }, 200_000, 1000);
    expect(ok.lastError).to.equal(undefined);
    expect(ok.members!.every((m) => m.healthy)).to.equal(true);
  });
});
