// Break-glass and the bug-report archive on the real control plane and node, through the plugin (kubectl svc on
// PATH): a suspended cluster keeps its release while spec.version moves (status says Suspended, with the step it
// holds back), resumes into the upgrade; `kubectl svc report` writes one tar.gz whose entries are listed.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { useOperator } from './operator/fixture.js';
import { conditionOf, getSvcCluster, usePluginKubectl, type StoredSvcCluster } from './operator/helpers.js';
import { waitFor } from '../../harness/process.js';
import { Client } from '../../server/client/index.js';

const NS = 'svcc-oncall';
const NAME = 'oncall';

describe('k8s: break-glass suspend/resume and kubectl svc report', function () {
  this.timeout(400_000);
  const op = useOperator(NS);
  const get = () => getSvcCluster(op.tb, NS, NAME);
  const { kubectl } = usePluginKubectl(op);
  const image = async () => (await op.tb.kubectl(['-n', NS, 'get', 'pod', `${NAME}-0`, '-o', 'jsonpath={.spec.containers[0].image}'])).trim();

  before(async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: NAME, namespace: NS }, spec: { version: '3.4.34', replicas: 1 } }));
    await kubectl(['-n', NS, 'wait', '--for=condition=Ready', `svcc/${NAME}`, '--timeout=240s'], 250_000);
  });

  it('suspend (after a --dry-run that changes nothing) holds a version change back with condition Suspended; resume upgrades', async () => {
    const dry = await kubectl(['svc', 'suspend', NAME, '-n', NS, '--dry-run']);
    expect(dry.stdout).to.contain(`dry run: would set the annotation svc.dev/reconcile=suspended on ${NS}/${NAME}`);
    expect((await get()).metadata.annotations?.['svc.dev/reconcile']).to.equal(undefined);
    await kubectl(['svc', 'suspend', NAME, '-n', NS]);
    expect((await get()).metadata.annotations?.['svc.dev/reconcile']).to.equal('suspended');
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"version":"3.5.21"}}']);
    const held = await waitFor('status says Suspended and names the step held back', async () => {
      const s = (await get()).status;
      return conditionOf(s, 'Suspended')?.status === 'True' && conditionOf(s, 'Progressing')?.reason === 'Suspended' ? s : undefined;
    }, 60_000, 500);
    expect(conditionOf(held, 'Progressing')?.message).to.match(/next step then: snapshot from leader oncall-0/);
    // held for a while: the member keeps its release and its pod
    await new Promise((r) => setTimeout(r, 5000));
    expect(await image()).to.match(/:v3\.4\.34$/);
    expect((await get()).status?.currentVersion).to.equal('3.4.34');
    const events = await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${NAME},reason=Suspended`, '-o', 'name']);
    expect(events.trim(), 'a Suspended Event').to.not.equal('');
    await kubectl(['svc', 'resume', NAME, '-n', NS]);
    await waitFor('upgraded to 3.5.21 after resume', async () => {
      const s = (await get()).status;
      return s?.currentVersion === '3.5.21' && conditionOf(s, 'Ready')?.status === 'True' && conditionOf(s, 'Suspended')?.status === 'False' ? true : undefined;
    }, 240_000, 1000);
    expect(await image()).to.match(/:v3\.5\.21$/);
  });

  it('kubectl svc report writes one tar.gz with the resource, Events, status, owned objects, pods and logs', async () => {
    const file = join(op.tb.workDir, `${NAME}-report.tar.gz`);
    const r = await kubectl(['svc', 'report', NAME, '-n', NS, '--file', file]);
    expect(r.stdout).to.contain(file);
    const list = spawnSync('tar', ['-tzf', file], { encoding: 'utf8' });
    expect(list.status, list.stderr).to.equal(0);
    const names = list.stdout.trim().split('\n').sort();
    console.log(`      report entries: ${names.join(', ')}`);
    expect(names).to.include.members([
      'svccluster.json', 'events.json', 'status.txt', 'members.json', 'objects/statefulsets.json', 'objects/services.json', 'objects/configmaps.json',
      'objects/persistentvolumeclaims.json', 'objects/jobs.json', 'objects/poddisruptionbudgets.json', 'objects/pods.json', `logs/${NAME}-0.log`,
    ]);
    // the operator runs in the test process here: the archive says no operator pod was found
    expect(names).to.include('logs/operator.error');
    const show = (entry: string) => spawnSync('tar', ['-xzOf', file, entry], { encoding: 'utf8' }).stdout;
    expect((JSON.parse(show('svccluster.json')) as StoredSvcCluster).spec.version).to.equal('3.5.21');
    expect(show(`logs/${NAME}-0.log`)).to.contain('ready to serve client requests');
    expect((JSON.parse(show('objects/statefulsets.json')) as unknown[]).length).to.equal(1);
    expect(show('status.txt')).to.match(/^Cluster:\s+svcc-oncall\/oncall$/m);
  });

  it('spec.service (type, labels, annotations) reaches the client Service without a restart; podTemplate priorityClassName and topologySpreadConstraints reach the pod', async () => {
    const uid = async () => (await op.tb.kubectl(['-n', NS, 'get', 'pod', `${NAME}-0`, '-o', 'jsonpath={.metadata.uid}'])).trim();
    const before = await uid();
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', JSON.stringify({ spec: { service: { type: 'NodePort', labels: { team: 'db' }, annotations: { 'example.com/lb': 'internal' } } } })]);
    const svc = await waitFor('the client Service is a NodePort with the labels and annotations', async () => {
      const s = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'service', `${NAME}-client`, '-o', 'json'])) as { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { type: string; ports: Array<{ nodePort?: number }> } };
      return s.spec.type === 'NodePort' && s.metadata.labels.team === 'db' && s.metadata.annotations['example.com/lb'] === 'internal' ? s : undefined;
    }, 60_000, 500);
    expect(svc.spec.ports[0].nodePort).to.be.a('number');
    expect(svc.metadata.labels['app.kubernetes.io/instance']).to.equal(NAME);
    expect(await uid(), 'no member restarted for a Service change').to.equal(before);
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'svc-oncall-test' }, value: 1000 }));
    const spread = [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { 'app.kubernetes.io/instance': NAME } } }];
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', JSON.stringify({ spec: { podTemplate: { priorityClassName: 'svc-oncall-test', topologySpreadConstraints: spread } } })]);
    const pod = await waitFor('the member restarted with the priority class and the spread', async () => {
      const p = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'pod', `${NAME}-0`, '-o', 'json']).catch(() => '{}')) as { metadata?: { uid: string }; spec?: { priorityClassName?: string; priority?: number; topologySpreadConstraints?: unknown } };
      return p.metadata && p.metadata.uid !== before && p.spec?.priorityClassName === 'svc-oncall-test' ? p : undefined;
    }, 180_000, 1000);
    expect(pod.spec!.priority).to.equal(1000);
    expect(pod.spec!.topologySpreadConstraints).to.deep.equal(spread);
    await kubectl(['-n', NS, 'wait', '--for=condition=Ready', `svcc/${NAME}`, '--timeout=180s'], 190_000);
  });

  it('spec.replicas 0 hibernates (no pod, the claim kept, phase Hibernated); 1 again wakes the same data with every key', async () => {
    const url = `http://${NAME}-0.${NAME}.${NS}.svc:2379`;
    const client = await Client.connect({ endpoints: [url], commandTimeoutMs: 10_000, dialTimeoutMs: 10_000 });
    const keys = Array.from({ length: 20 }, (_, i) => `hib/${i}`);
    try {
      for (const k of keys) await client.put(k, `v-${k}`);
    } finally {
      client.close();
    }
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"replicas":0}}']);
    const asleep = await waitFor('phase Hibernated, no pod left', async () => {
      const s = (await get()).status;
      const pods = (await op.tb.kubectl(['-n', NS, 'get', 'pods', '-l', `app.kubernetes.io/instance=${NAME}`, '-o', 'name'])).trim();
      return s?.phase === 'Hibernated' && pods === '' ? s : undefined;
    }, 120_000, 1000);
    expect(conditionOf(asleep, 'Progressing')?.reason).to.equal('Hibernated');
    expect(JSON.parse((await get()).metadata.annotations?.['svc.dev/records'] ?? '{}').hibernated, 'the member count recorded').to.equal(1);
    const claim = (await op.tb.kubectl(['-n', NS, 'get', 'pvc', `data-${NAME}-0`, '-o', 'jsonpath={.status.phase}'])).trim();
    expect(claim, 'the claim kept').to.equal('Bound');
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"replicas":1}}']);
    await kubectl(['-n', NS, 'wait', '--for=condition=Ready', `svcc/${NAME}`, '--timeout=180s'], 190_000);
    expect(JSON.parse((await get()).metadata.annotations?.['svc.dev/records'] ?? '{}').hibernated).to.equal(undefined);
    const again = await Client.connect({ endpoints: [url], commandTimeoutMs: 10_000, dialTimeoutMs: 10_000 });
    try {
      const got = await again.get('hib/', { prefix: true });
      expect(got.kvs.map((kv) => Buffer.from(kv.value).toString()).sort()).to.deep.equal(keys.map((k) => `v-${k}`).sort());
    } finally {
      again.close();
    }
  });
});
