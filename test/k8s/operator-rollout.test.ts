// Changes that reach the member pods are rolled out by the operator with the upgrade's safety, on the real node:
// a spec change (resources, a pod label) and a TLS Secret renewed in place (cert-manager style: same Secret, a new
// certificate from the same CA) restart the members one at a time, followers first and the leader last after
// MoveLeader, with the typed reason (SpecChange, CertificateRenewed) in status.rollout and in the Events, while a
// client keeps writing: no write fails, every key stays.
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { expect } from 'chai';
import { BackgroundWriter } from '../../operator/workload/writer.js';
import { Client } from '../../server/client/index.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster } from './operator/helpers.js';
import { makeClusterCerts, renewMemberCert, type ClusterCerts } from './operator/tls-certs.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-roll';

interface Pod {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; creationTimestamp: string };
  spec: { containers: Array<{ name: string; resources?: { requests?: Record<string, string> }; env?: Array<{ name: string; value?: string }> }> };
}
describe('k8s: changes that reach the members are rolled out one member at a time', function () {
  this.timeout(300_000);
  const op = useOperator(NS);

  const get = (name: string) => getSvcCluster(op.tb, NS, name);
  const events = async (name: string): Promise<Array<{ reason: string; message: string; type: string }>> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string; type: string }> }).items;
  const pods = async (name: string): Promise<Pod[]> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'pods', '-l', `app.kubernetes.io/instance=${name}`, '-o', 'json'])) as { items: Pod[] }).items
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const secret = (name: string, c: ClusterCerts) =>
    op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, type: 'kubernetes.io/tls',
      data: { 'tls.crt': c.cert.toString('base64'), 'tls.key': c.key.toString('base64'), 'ca.crt': c.ca.toString('base64') } }));
  const endpoints = (name: string, scheme: string) => [0, 1, 2].map((i) => `${scheme}://${name}-${i}.${name}.${NS}.svc:2379`);
  /** The step lines of cluster `name` logged since log line `from`, in order. */
  const stepsSince = (name: string, from: number) => op.logs.slice(from)
    .filter((l) => l.msg === 'step' && l.cluster === `${NS}/${name}`).map((l) => String(l.line));
  /** The MoveLeader steps since log line `from`: whom they moved leadership from, and how many restarts came before. */
  const movesSince = (name: string, from: number) => stepsSince(name, from).flatMap((l, i, all) => l.startsWith('move leadership from ')
    ? [{ from: /from (\S+)/.exec(l)![1], restartsBefore: all.slice(0, i).filter((x) => x.startsWith('restart ')).length }] : []);
  /**
   * The leader goes last, after MoveLeader. A restarted follower may also win an election on its own (this loaded
   * machine can delay the leader's first heartbeat to the new pod): leadership then already sits on a restarted
   * member and no MoveLeader is needed (the planner's unit tests cover that choice).
   */
  const expectLeaderLast = (moves: Array<{ from: string; restartsBefore: number }>, order: string[], leaderBefore: string) => {
    if (moves.length === 0) {
      console.log(`    (leadership left ${leaderBefore} by an election during the rollout; no MoveLeader was needed)`);
      return;
    }
    expect(moves.at(-1)!.from, 'the leader is restarted last, after MoveLeader').to.equal(order.at(-1));
    expect(moves.at(-1)!.restartsBefore, 'MoveLeader once the followers are done').to.equal(order.length - 1);
  };
  /** The members restarted since log line `from`, in order (a new step line per restart). */
  const restartsSince = (name: string, from: number) => stepsSince(name, from).filter((l) => l.startsWith('restart ')).map((l) => /restart (\S+) on/.exec(l)![1]);
  const running = (name: string) => waitFor(`${name} Running 3/3`, async () => {
    const s = (await get(name)).status;
    return s?.phase === 'Running' && s.ready === '3/3' && s.members?.every((m) => m.healthy) ? s : undefined;
  }, 200_000, 1000);


  it('a resources, pod-label, annotation and env change: each member restarted once, followers first, the leader last after MoveLeader, reason SpecChange, no failed write, every key intact', async () => {
    const name = 'kv';
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { version: '3.4.34', replicas: 3 } }));
    const before = await running(name);
    const c = await Client.connect({ endpoints: endpoints(name, 'http'), dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    const keys = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    try {
      for (const k of keys) await c.put(k, `v-${k}`);
    } finally {
      c.close();
    }
    const oldPods = await pods(name);
    expect(oldPods.map((p) => p.metadata.labels?.tier)).to.deep.equal([undefined, undefined, undefined]);
    const leaderBefore = before.leader!;
    const from = op.logs.length;

    const writer = new BackgroundWriter({ endpoints: endpoints(name, 'http'), prefix: 'load/', intervalMs: 20 });
    await writer.start();
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', name, '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { cpu: '20m', memory: '48Mi' } }, podTemplate: { labels: { tier: 'db' }, annotations: { 'example.com/team': 'storage' }, env: [{ name: 'GODEBUG', value: 'x=1' }] } } })]);
    const st = await waitFor('the rollout finished', async () => {
      const s = (await get(name)).status;
      return s?.rollout?.finishedAt && s.phase === 'Running' && s.ready === '3/3' ? s : undefined;
    }, 240_000, 1000);
    const stats = await writer.stop();

    expect(st.rollout).to.include({ reason: 'SpecChange' });
    expect(st.rollout!.membersDone).to.have.length(3);
    // every pod was replaced once and carries the change (the StatefulSet stays OnDelete: only the operator restarts)
    const newPods = await pods(name);
    for (const [i, p] of newPods.entries()) {
      expect(p.metadata.uid, p.metadata.name).to.not.equal(oldPods[i].metadata.uid);
      expect(p.metadata.labels?.tier, p.metadata.name).to.equal('db');
      expect(p.metadata.annotations?.['example.com/team'], p.metadata.name).to.equal('storage');
      expect(p.spec.containers.find((x) => x.name === 'svc')!.env?.find((e) => e.name === 'GODEBUG')?.value, p.metadata.name).to.equal('x=1');
      expect(p.spec.containers.find((x) => x.name === 'svc')!.resources?.requests, p.metadata.name).to.deep.equal({ cpu: '20m', memory: '48Mi' });
    }
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulset', name, '-o', 'jsonpath={.spec.updateStrategy.type}'])).to.equal('OnDelete');
    // one at a time, in order: followers first, the leader last; a replacement pod per restart, in that order
    const order = restartsSince(name, from);
    expect(order).to.have.length(3);
    expect(new Set(order).size).to.equal(3);
    expect(st.rollout!.membersDone).to.deep.equal(order);
    const moves = movesSince(name, from);
    expectLeaderLast(moves, order, leaderBefore);
    const created = order.map((m) => Date.parse(newPods.find((p) => p.metadata.name === m)!.metadata.creationTimestamp));
    expect(created).to.deep.equal([...created].sort((a, b) => a - b));
    const evs = await events(name);
    const restartEvents = evs.filter((e) => e.reason === 'RestartMember' && e.message.includes('(SpecChange)'));
    expect(restartEvents.map((e) => /restart (\S+) on/.exec(e.message)![1]).sort()).to.deep.equal([0, 1, 2].map((i) => `${name}-${i}`));
    expect(evs.filter((e) => e.reason === 'MoveLeader')).to.have.length.at.least(moves.length > 0 ? 1 : 0);
    expect(evs.filter((e) => e.type === 'Warning')).to.deep.equal([]);
    // no write failed; every key intact (on failure: the client's errors with its channels' states, and the steps)
    const timeline = op.logs.slice(from).filter((l) => l.msg === 'step').map((l) => `${String(l.at)} ${String(l.line)}`).join('\n');
    expect(stats.failed, `${stats.errors.join('\n')}\nsteps:\n${timeline}`).to.equal(0);
    expect(stats.succeeded).to.be.above(0);
    const r = await Client.connect({ endpoints: endpoints(name, 'http'), dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    try {
      const got = await r.get('k', { prefix: true });
      expect(got.kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`)).to.deep.equal(keys.map((k) => `${k}=v-${k}`));
      const load = await r.get('load/', { prefix: true, countOnly: true });
      expect(Number(load.count)).to.equal(stats.succeeded);
    } finally {
      r.close();
    }
    await op.tb.kubectl(['-n', NS, 'delete', 'svcc', name, '--wait=true', '--timeout=60s']);
  });

  it('a TLS Secret renewed in place (a new certificate from the same CA) rolls the members with reason CertificateRenewed and no failed client request', async () => {
    const name = 'sec';
    const dir = join(op.tb.workDir, 'tls-certs', `${NS}-${name}`);
    const first = await makeClusterCerts(dir, name, NS);
    await secret(`${name}-tls`, first);
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS },
      spec: { version: '3.5.21', replicas: 3, tls: { clientSecret: `${name}-tls`, peerSecret: `${name}-tls` } } }));
    const before = await running(name);
    const leaderBefore = before.leader!;
    const oldPods = await pods(name);
    const from = op.logs.length;

    const writer = new BackgroundWriter({ endpoints: endpoints(name, 'https'), prefix: 'load/', intervalMs: 20, tls: { ca: first.ca, cert: first.cert, key: first.key } });
    await writer.start();
    await waitFor('writes going', async () => (writer.stats.succeeded >= 20 ? true : undefined), 30_000, 200);
    const renewed = await renewMemberCert(dir, name);
    expect(renewed.cert.equals(first.cert)).to.equal(false);
    await secret(`${name}-tls`, renewed);
    const st = await waitFor('the certificate rollout finished', async () => {
      const s = (await get(name)).status;
      return s?.rollout?.reason === 'CertificateRenewed' && s.rollout.finishedAt && s.phase === 'Running' && s.ready === '3/3' ? s : undefined;
    }, 240_000, 1000);
    await waitFor('writes after the rollout', async () => (writer.stats.succeeded >= 20 + 20 ? true : undefined), 30_000, 200);
    const stats = await writer.stop();

    expect(st.rollout!.membersDone).to.have.length(3);
    const order = restartsSince(name, from);
    expect(order).to.have.length(3);
    expect(st.rollout!.membersDone).to.deep.equal(order);
    expectLeaderLast(movesSince(name, from), order, leaderBefore);
    const newPods = await pods(name);
    for (const [i, p] of newPods.entries()) expect(p.metadata.uid, p.metadata.name).to.not.equal(oldPods[i].metadata.uid);
    const evs = await events(name);
    expect(evs.filter((e) => e.reason === 'RestartMember' && e.message.includes('(CertificateRenewed)'))).to.have.length(3);
    expect(evs.filter((e) => e.type === 'Warning')).to.deep.equal([]);
    // every member now presents the renewed certificate
    const want = new X509Certificate(renewed.cert).fingerprint256;
    for (const host of [0, 1, 2].map((i) => `${name}-${i}.${name}.${NS}.svc`)) {
      const presented = await new Promise<string>((resolve, reject) => {
        const s = tlsConnect({ host, port: 2379, ca: renewed.ca, cert: renewed.cert, key: renewed.key, servername: host, ALPNProtocols: ['h2'] }, () => {
          resolve(s.getPeerX509Certificate()!.fingerprint256);
          s.end();
        });
        s.on('error', reject);
      });
      expect(presented, host).to.equal(want);
    }
    expect(stats.failed, stats.errors.join('; ')).to.equal(0);
    expect(stats.succeeded).to.be.at.least(40);
  });
});
