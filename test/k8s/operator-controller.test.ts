// The controller against the real control plane and the test node: an SvcCluster becomes a running 3-member
// cluster through the objects it owns, an unchanged cluster causes no writes, and a version change is the
// planner's rolling upgrade (followers first, the leader last, after leadership moved).
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { Controller } from '../../operator/controller/controller.js';
import { probeServer } from '../../operator/controller/run.js';
import { statefulSetBuilds } from '../../operator/runtime/kubernetes/manifests.js';
import { specProblems, withDefaults } from '../../operator/api/validate.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster, type StoredSvcCluster } from './operator/helpers.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-ctl';
const NAME = 'kv';

/** Counts, per reconcile of `ctl` from now on, the StatefulSet builds and the status writes (one cluster at a time here). */
function countPasses(ctl: Controller): Array<{ builds: number; statusWrites: number }> {
  const passes: Array<{ builds: number; statusWrites: number }> = [];
  const reconcile = ctl.reconcileKey.bind(ctl);
  ctl.reconcileKey = async (key) => {
    const b = statefulSetBuilds.count;
    const w = ctl.api.statusWrites;
    try {
      return await reconcile(key);
    } finally {
      passes.push({ builds: statefulSetBuilds.count - b, statusWrites: ctl.api.statusWrites - w });
    }
  };
  return passes;
}

describe('k8s: the SvcCluster controller', function () {
  this.timeout(240_000);
  const op = useOperator(NS);

  const get = () => getSvcCluster(op.tb, NS, NAME);
  const events = async (): Promise<Array<{ reason: string; message: string; type: string }>> => {
    const list = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string; type: string; metadata: { creationTimestamp: string; name: string } }> };
    return list.items;
  };


  it('creates a 3-member cluster of 3.4.34 that becomes Available, with its owned objects', async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: NAME, namespace: NS }, spec: { version: '3.4.34', replicas: 3 } }));
    const st = await waitFor('the cluster Running', async () => {
      const s = (await get()).status;
      // Ready: also the cluster version decided (Running alone may come a moment before it)
      return s?.phase === 'Running' && s.currentVersion === '3.4.34' && s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? s : undefined;
    }, 180_000, 1000);
    expect(st.ready).to.equal('3/3');
    expect(st.members!.map((m) => m.name)).to.deep.equal([`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    expect(st.members!.every((m) => m.healthy && m.release === '3.4.34' && m.image === 'svc:v3.4.34')).to.equal(true);
    expect(st.members!.filter((m) => m.leader)).to.have.length(1);
    expect(st.leader).to.be.a('string');
    expect(st.clusterVersion).to.equal('3.4.0');
    expect(st.conditions!.find((c) => c.type === 'Available')).to.include({ status: 'True' });
    expect(st.observedGeneration).to.equal((await get()).metadata.generation);

    const uid = (await get()).metadata.uid;
    const obj = async (kind: string, name: string) => JSON.parse(await op.tb.kubectl(['-n', NS, 'get', kind, name, '-o', 'json'])) as { metadata: { ownerReferences: Array<{ uid: string; controller: boolean }> }; spec: Record<string, unknown>; data?: Record<string, string> };
    for (const [kind, name] of [['service', NAME], ['service', `${NAME}-client`], ['statefulset', NAME], ['pdb', NAME], ['configmap', `${NAME}-config`]]) {
      expect((await obj(kind, name)).metadata.ownerReferences, `${kind}/${name}`).to.deep.include({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', name: NAME, uid, controller: true, blockOwnerDeletion: true });
    }
    expect((await obj('service', NAME)).spec).to.include({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect((await obj('pdb', NAME)).spec).to.include({ maxUnavailable: 1 });
    const sts = (await obj('statefulset', NAME)).spec as { updateStrategy: { type: string }; template: { spec: { terminationGracePeriodSeconds: number; containers: Array<{ readinessProbe: { httpGet: { path: string } }; args: string[] }> } }; volumeClaimTemplates: unknown[] };
    expect(sts.updateStrategy.type).to.equal('OnDelete');
    expect(sts.template.spec.terminationGracePeriodSeconds).to.be.at.least(30);
    expect(sts.template.spec.containers[0].readinessProbe.httpGet.path).to.equal('/health');
    expect(sts.template.spec.containers[0].args).to.include(`--initial-advertise-peer-urls=http://$(POD_NAME).${NAME}.$(POD_NAMESPACE).svc:2380`);
    expect(sts.volumeClaimTemplates).to.have.length(1);
    expect((await obj('configmap', `${NAME}-config`)).data!.INITIAL_CLUSTER).to.equal([0, 1, 2].map((i) => `${NAME}-${i}=http://${NAME}-${i}.${NAME}.${NS}.svc:2380`).join(','));
    expect((await events()).map((e) => e.reason)).to.include('CreateCluster');
    const table = await op.tb.kubectl(['-n', NS, 'get', 'svcc', NAME, '--no-headers']);
    expect(table).to.match(new RegExp(`^${NAME}\\s+3\\.4\\.34\\s+3\\.4\\.34\\s+3\\.4\\.0\\s+3/3\\s+Running\\s+${NAME}-\\d`));
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    const srv = probeServer(op.ctl, 0);
    try {
      await new Promise<void>((r) => srv.once('listening', () => r()));
      const port = (srv.address() as AddressInfo).port;
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).to.equal(200);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).to.match(/^svc_operator_reconcile_total\{result="ok"\} [1-9]/m);
      expect(metrics).to.contain('svc_operator_reconcile_duration_seconds_bucket');
    } finally {
      srv.close();
    }
  });

  it('writes nothing while the cluster is unchanged', async () => {
    const rv = async () => {
      const out = await op.tb.kubectl(['-n', NS, 'get', 'svcc,statefulset,service,configmap,pdb', '-l', 'svc.dev/cluster', '-o', 'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}']);
      const svcc = (await get()).metadata.resourceVersion;
      return `${out} svcc=${svcc}`;
    };
    // let the status settle (the first resync after Running may still fill in a field)
    await new Promise((r) => setTimeout(r, 3000));
    let before = await rv();
    for (const o of ['StatefulSet/kv=', 'Service/kv=', 'Service/kv-client=', 'ConfigMap/kv-config=', 'PodDisruptionBudget/kv=']) expect(before).to.contain(o);
    // three resyncs of an unchanged cluster must write nothing. A status write in the window is allowed once if it
    // records a real observation (a member's health check timed out on this loaded machine, say): the next window,
    // after it settled, must then be silent.
    const window = async (): Promise<string[]> => {
      const writes = op.ctl.api.writes;
      for (let i = 0; i < 3; i++) {
        op.ctl.queue.add(`${NS}/${NAME}`);
        await new Promise((r) => setTimeout(r, 2000));
      }
      return op.ctl.api.recentWrites.slice(op.ctl.api.recentWrites.length - (op.ctl.api.writes - writes));
    };
    let written = await window();
    if (written.length > 0) {
      expect(written.every((w) => w.startsWith('status ')), `only status writes, got:\n${written.join('\n')}`).to.equal(true);
      console.log(`    (a status change during the first window, then settled:\n      ${written.join('\n      ')})`);
      before = await rv();
      written = await window();
    }
    expect(written, 'write requests while nothing changed').to.deep.equal([]);
    expect(await rv()).to.equal(before);
  });

  it('a pass builds the StatefulSet at most once (not at all while nothing changed) and writes status at most once', async () => {
    const passes = countPasses(op.ctl);
    for (let i = 0; i < 3; i++) {
      op.ctl.queue.add(`${NS}/${NAME}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(passes.length).to.be.at.least(3);
    expect(passes.every((p) => p.builds <= 1 && p.statusWrites <= 1), JSON.stringify(passes)).to.equal(true);
    // nothing changed: the session's last build serves every pass
    expect(passes.reduce((n, p) => n + p.builds, 0), JSON.stringify(passes)).to.be.at.most(1);
  });

  it('refuses 3.3 with spec.logging.logger before anything is made: InvalidSpec with the message local apply prints', async () => {
    const spec = { version: '3.3.27', replicas: 1, logging: { logger: 'capnslog' } };
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'old-logger', namespace: NS }, spec }));
    const st = await waitFor('the refusal', async () => {
      const s = (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'svcc', 'old-logger', '-o', 'json'])) as StoredSvcCluster).status;
      return s?.lastError ? s : undefined;
    }, 60_000, 500);
    expect(st.lastError).to.equal(specProblems(withDefaults(spec as never)).join('; '));
    expect(st.lastError).to.contain('spec.logging.logger: release 3.3.27 has no --logger flag');
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulsets,configmaps', '-l', 'svc.dev/cluster=old-logger', '-o', 'name'])).to.equal('');
    await op.tb.kubectl(['-n', NS, 'delete', 'svcc', 'old-logger', '--wait=true']);
  });

  it('upgrades 3.4.34 -> 3.5.21 member by member, the leader last, across an operator restart', async () => {
    const leaderBefore = (await get()).status!.leader!;
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"version":"3.5.21"}}']);
    // the operator stops after the first member restart and a new one takes over from the recorded progress
    await waitFor('the first member restart', async () => (op.logs.some((l) => l.step === 'restartMember') ? true : undefined), 120_000, 200);
    await op.stopController();
    const passes = countPasses(await op.startController());
    const st = await waitFor('the upgrade complete', async () => {
      const s = (await get()).status;
      return s?.phase === 'Running' && s.currentVersion === '3.5.21' && s.clusterVersion === '3.5.0' && s.upgrade?.finishedAt ? s : undefined;
    }, 200_000, 1000);
    expect(st.members!.every((m) => m.release === '3.5.21' && m.image === 'svc:v3.5.21')).to.equal(true);
    expect(st.upgrade).to.include({ from: '3.4.34', to: '3.5.21' });
    expect(st.upgrade!.snapshot!.sha256).to.match(/^[0-9a-f]{64}$/);
    const evs = await events();
    expect(evs.filter((e) => e.reason === 'RestartMember')).to.have.length(3);
    // the order, from the controller's step log (Events carry second-resolution times only)
    // (a new operator logs the step it finds under way again: consecutive repeats are one restart)
    const restarts = op.logs.filter((l) => l.msg === 'step' && l.step === 'restartMember').map((l) => /restart (\S+) on/.exec(String(l.line))![1])
      .filter((m, i, all) => i === 0 || all[i - 1] !== m);
    expect(restarts).to.have.length(3);
    expect(new Set(restarts).size).to.equal(3);
    expect(restarts.at(-1), 'the leader is restarted last').to.equal(leaderBefore);
    expect(evs.map((e) => e.reason)).to.include.members(['Snapshot', 'MoveLeader', 'UpgradeComplete']);
    // the template was on 3.5.21 before this operator started: each pass built it once, wrote status at most once
    expect(passes.every((p) => p.builds <= 1 && p.statusWrites <= 1), JSON.stringify(passes)).to.equal(true);
  });

  it('refuses a downgrade after the upgrade completed: UpgradeBlocked, a Warning Event, members untouched', async () => {
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"version":"3.4.34"}}']);
    const st = await waitFor('the refusal', async () => {
      const s = (await get()).status;
      return s?.phase === 'Blocked' ? s : undefined;
    }, 30_000, 500);
    expect(st.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'True', reason: 'DowngradeAfterCompletion' });
    expect(st.lastError).to.equal(undefined);
    const warn = (await events()).find((e) => e.reason === 'DowngradeAfterCompletion');
    expect(warn?.type).to.equal('Warning');
    const images = await op.tb.kubectl(['-n', NS, 'get', 'pods', '-l', `app.kubernetes.io/instance=${NAME}`, '-o', 'jsonpath={.items[*].spec.containers[0].image}']);
    expect(images.split(' ')).to.deep.equal(['svc:v3.5.21', 'svc:v3.5.21', 'svc:v3.5.21']);
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulset', NAME, '-o', 'jsonpath={.spec.template.spec.containers[0].image}'])).to.equal('svc:v3.5.21');
  });

  it('deleting the SvcCluster removes what it owns (owner references)', async () => {
    const owned = 'statefulset,service,configmap,pdb';
    expect((await op.tb.kubectl(['-n', NS, 'get', owned, '-l', 'svc.dev/cluster', '-o', 'name'])).trim().split('\n')).to.have.length(5);
    await op.tb.kubectl(['-n', NS, 'delete', 'svcc', NAME, '--wait=true']);
    await waitFor('the owned objects gone', async () => {
      const left = await op.tb.kubectl(['-n', NS, 'get', owned, '-l', 'svc.dev/cluster', '-o', 'name']);
      return left.trim() === '' ? true : undefined;
    }, 60_000, 500);
  });
});
