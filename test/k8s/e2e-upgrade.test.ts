// End to end: the operator installed with its Helm chart runs as a pod (a real container of the operator image on
// the test node, with its in-cluster service account), creates an SvcCluster of 3.3.27 and upgrades it to 3.4.34 and then 3.5.21 while a person
// follows with `kubectl get svcc -w`. During the first upgrade the operator pod is killed after a member is done;
// the new operator pod resumes from the recorded progress without restarting a member twice. At the end every key
// written before is intact, every member runs 3.5.21 in a 3.5.0 cluster, and the operator's /metrics has the
// per-cluster upgrade metrics.
import { join } from 'node:path';
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import type { SvcClusterStatus } from '../../operator/api/types.js';
import { binary, repoRoot } from './binaries.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster, type StoredSvcCluster } from './operator/helpers.js';
import { type LoggedProcess, spawnLogged, waitFor } from '../../harness/process.js';

const OPNS = 'svc-operator-e2e';
const NS = 'svc-e2e';
const NAME = 'kv';
const RELEASE = 'e2e';
const PROBE_PORT = 8080;
const KEYS = 300;
const CHART = join(repoRoot(), 'charts', 'svc-operator');

/** A member pod deleted (by the operator's restart), in the order seen. */
interface Deletion { name: string; uid: string; image: string }

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString();
const memberUrl = (i: number): string => `http://${NAME}-${i}.${NAME}.${NS}.svc:2379`;

async function post(url: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

describe('k8s e2e: the operator pod upgrades an SvcCluster 3.3.27 -> 3.4.34 -> 3.5.21', function () {
  this.timeout(300_000);
  const op = useOperator(NS, { controller: false, chartNamespace: OPNS });
  let kc: k8s.KubeConfig;
  const aborts: AbortController[] = [];
  let follow: LoggedProcess | undefined;
  let followPods: LoggedProcess | undefined;
  /** What `kubectl get svcc -w` printed so far. */
  const followed = (): string => follow?.log() ?? '';
  const deletions: Deletion[] = [];
  const statuses: SvcClusterStatus[] = [];
  let leaderBefore = '';

  const get = () => getSvcCluster(op.tb, NS, NAME);
  const operatorPods = async (): Promise<k8s.V1Pod[]> =>
    (JSON.parse(await op.tb.kubectl(['-n', OPNS, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'json'])) as { items: k8s.V1Pod[] }).items;
  const readyOperator = async (not?: string): Promise<k8s.V1Pod | undefined> =>
    (await operatorPods()).find((p) => p.metadata?.name !== not && !p.metadata?.deletionTimestamp &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  const events = async (): Promise<Array<{ reason: string; message: string }>> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string }> }).items;

  /** Waits for the upgrade to `to` verified complete; returns the status. */
  const upgraded = (to: string, cluster: string): Promise<SvcClusterStatus> => waitFor(`the upgrade to ${to} complete`, async () => {
    const s = (await get()).status;
    return s?.phase === 'Running' && s.currentVersion === to && s.clusterVersion === cluster && s.upgrade?.to === to && s.upgrade.finishedAt ? s : undefined;
  }, 240_000, 500);

  before(() => {
    kc = new k8s.KubeConfig();
    kc.loadFromFile(op.tb.kubeconfigPath);
  });

  after(async () => {
    for (const a of aborts) a.abort();
    await follow?.stop();
    await followPods?.stop();
    // what a person following the upgrade saw
    console.log(`\n--- kubectl get svcc -w (${NS}/${NAME}) ---\n${followed()}--- end ---`);
    console.log(`\n--- kubectl get pods -w (${NS}) ---\n${followPods?.log() ?? ''}--- end ---`);
  });

  it('helm installs the operator with the chart\'s default image; its pod becomes Ready and takes the Lease', async () => {
    // crds.install=false: installCrd applied the CRD (the chart's template would refuse to take over an unowned one)
    await op.tb.helm(['install', RELEASE, CHART, '--namespace', OPNS, '--set', 'crds.install=false', '--set', 'leaderElection.enabled=true',
      '--set', 'probeAddress=0.0.0.0', '--set', `probePort=${PROBE_PORT}`, '--wait=false']);
    const pod = await waitFor('the operator pod Ready', () => readyOperator(), 120_000, 250);
    const ip = pod.status!.podIP!;
    expect(ip).to.match(/^10\.244\.0\.\d+$/);
    expect(pod.spec!.containers[0].image).to.equal(op.tb.images.operator);
    expect((await fetch(`http://${ip}:${PROBE_PORT}/readyz`)).status).to.equal(200);
    const holder = await op.tb.kubectl(['-n', OPNS, 'get', 'lease', 'svc-operator', '-o', 'jsonpath={.spec.holderIdentity}']);
    expect(holder.startsWith(`${pod.metadata!.name!}-`), holder).to.equal(true);
  });

  it(`creates an SvcCluster of 3.3.27 that becomes Available; ${KEYS} keys are written through the members`, async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: NAME, namespace: NS }, spec: { version: '3.3.27', replicas: 3 } }));
    const st = await waitFor('the cluster Running on 3.3.27', async () => {
      const s = (await get()).status;
      // Ready: also the cluster version decided (Running alone may come a moment before it)
      return s?.phase === 'Running' && s.currentVersion === '3.3.27' && s.ready === '3/3' && s.leader && s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? s : undefined;
    }, 180_000, 500);
    expect(st.conditions!.find((c) => c.type === 'Available')).to.include({ status: 'True' });
    expect(st.clusterVersion).to.equal('3.3.0');
    const todo = Array.from({ length: KEYS }, (_, i) => i);
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = todo.shift(); i !== undefined; i = todo.shift()) {
        await post(`${memberUrl(i % 3)}/v3/kv/put`, { key: b64(`e2e/${String(i).padStart(4, '0')}`), value: b64(`value-${i}`) });
      }
    }));
    const got = await post(`${memberUrl(0)}/v3/kv/range`, { key: b64('e2e/'), range_end: b64('e2e0'), count_only: true });
    expect(Number(got.count)).to.equal(KEYS);
  });

  it('upgrades to 3.4.34 followers first, the leader last, and survives the operator pod being killed mid-upgrade', async () => {
    leaderBefore = (await get()).status!.leader!;
    // a person following the upgrade
    const kubectlWatch = (what: string): LoggedProcess => spawnLogged(binary('kubectl', op.tb.controlPlane.binDir), ['-n', NS, 'get', what, '-w'],
      { logFile: join(op.tb.controlPlane.logDir, `e2e-watch-${what}.log`), env: { KUBECONFIG: op.tb.kubeconfigPath } });
    follow = kubectlWatch('svcc');
    followPods = kubectlWatch('pods');
    // every member pod deletion, and every status, in the order they happen
    const watch = new k8s.Watch(kc);
    const seenDeleting = new Set<string>();
    // member pods only: the pre-upgrade backup Job's pod carries the cluster label too (and is deleted with its Job)
    aborts.push(await watch.watch(`/api/v1/namespaces/${NS}/pods`, { labelSelector: `svc.dev/cluster=${NAME},!svc.dev/job` }, (_type: string, pod: k8s.V1Pod) => {
      const uid = pod.metadata?.uid ?? '';
      if (pod.metadata?.deletionTimestamp && !seenDeleting.has(uid)) {
        seenDeleting.add(uid);
        deletions.push({ name: pod.metadata.name!, uid, image: pod.spec?.containers[0].image ?? '' });
      }
    }, () => undefined));
    aborts.push(await watch.watch(`/apis/svc.dev/v1alpha1/namespaces/${NS}/svcclusters`, {}, (_type: string, o: StoredSvcCluster) => {
      if (o.status) statuses.push(o.status);
    }, () => undefined));
    await waitFor('the table header', async () => (followed().includes('STEP') ? true : undefined), 30_000, 100);

    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"version":"3.4.34"}}']);
    // kill the operator once a member is done (a crash: SIGKILL, then the pod is force-deleted; its Deployment makes a new one)
    await waitFor('a member done on 3.4.34', async () => (statuses.some((s) => s.upgrade?.to === '3.4.34' && s.upgrade.membersDone.length >= 1) ? true : undefined), 180_000, 50);
    const old = (await readyOperator())!;
    await op.tb.node.killContainer(old.status?.containerStatuses?.[0].containerID ?? '');
    await op.tb.kubectl(['-n', OPNS, 'delete', 'pod', old.metadata!.name!, '--grace-period=0', '--force', '--wait=false']);
    const doneAtKill = (await get()).status?.upgrade?.membersDone ?? [];
    expect(doneAtKill.length, 'members done when the operator was killed').to.be.within(1, 2);
    const fresh = await waitFor('a new operator pod Ready (it waits for the dead one\'s Lease to expire)', () => readyOperator(old.metadata!.name), 120_000, 250);
    expect(fresh.metadata!.name).to.not.equal(old.metadata!.name);

    const st = await upgraded('3.4.34', '3.4.0');
    expect(st.members!.every((m) => m.release === '3.4.34' && m.image === 'svc:v3.4.34' && m.healthy)).to.equal(true);
    // the pre-upgrade snapshot, recorded before the first member restarted
    const snap = st.upgrade!.snapshot!;
    expect(snap.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(snap.size).to.be.greaterThan(0);
    expect(snap.revision).to.be.at.least(KEYS + 1);
    expect(st.upgrade).to.include({ from: '3.3.27', to: '3.4.34' });
    expect(st.upgrade!.membersDone.slice(0, doneAtKill.length)).to.deep.equal(doneAtKill);
    // every member restarted exactly once (none twice across the operator restart), the leader last
    const restarted = deletions.filter((d) => d.image === 'svc:v3.3.27');
    expect(restarted.map((d) => d.name).sort()).to.deep.equal([`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    expect(deletions.filter((d) => d.image === 'svc:v3.4.34'), 'an upgraded member restarted again').to.deep.equal([]);
    // the leader last: leadership was moved away from the member restarted last, unless an election had already
    // handed it to an upgraded member (a restarted pod comes back on a new address; until the leader's next dial
    // finds it, the member hears no heartbeat, and a 3.3/3.4 member campaigns without pre-vote)
    const last = restarted.at(-1)!.name;
    const evs = await events();
    const moved = evs.some((e) => e.reason === 'MoveLeader' && e.message.startsWith(`move leadership from ${last} to `));
    const electedUpgraded = statuses.some((s) => s.upgrade?.to === '3.4.34' && !!s.leader && s.leader !== last && s.upgrade.membersDone.includes(s.leader));
    expect(moved || electedUpgraded,
      `the leader was restarted last: ${last} (the leader was ${leaderBefore}); restarts ${restarted.map((d) => d.name).join(', ')}; events:\n${evs.map((e) => `${e.reason}: ${e.message}`).join('\n')}`).to.equal(true);
    // conditions and printer columns moved while it ran
    expect(statuses.some((s) => s.phase === 'Upgrading' && s.conditions?.some((c) => c.type === 'Upgrading' && c.status === 'True'))).to.equal(true);
    expect(statuses.some((s) => s.conditions?.some((c) => c.type === 'BackupReady' && c.status === 'True'))).to.equal(true);
    expect(st.conditions!.find((c) => c.type === 'Upgrading')).to.include({ status: 'False' });
    const steps = new Set(statuses.filter((s) => s.upgrade?.to === '3.4.34').map((s) => s.upgrade!.step));
    // (moveLeader is asserted above through its Event, or the election that made it unnecessary)
    expect([...steps]).to.include.members(['snapshot', 'restartMember', 'complete']);
  });

  it('what `kubectl get svcc -w` showed moved through the upgrade (STEP, RUNNING, PHASE)', async () => {
    await waitFor('the final line', async () => (new RegExp(`^${NAME}\\s+3\\.4\\.34\\s+3\\.4\\.34\\s+3\\.4\\.0\\s+3/3\\s+Running`, 'm').test(followed()) ? true : undefined), 30_000, 100);
    const lines = followed().split('\n').filter((l) => l.startsWith(`${NAME} `));
    expect(lines.some((l) => /^kv\s+3\.4\.34\s+3\.3\.27\s/.test(l)), followed()).to.equal(true);
    const stepsShown = new Set(lines.flatMap((l) => l.split(/\s+/)).filter((w) => ['snapshot', 'moveLeader', 'restartMember', 'complete'].includes(w)));
    expect(stepsShown.size, followed()).to.be.at.least(3);
    expect(lines.some((l) => /\sUpgrading\s/.test(l)), followed()).to.equal(true);
    // a member restart shows as Upgrading with READY 2/3, never as Degraded (lines from the request on: before it,
    // a health check that timed out on this loaded machine may show for a moment while the cluster forms)
    const during = lines.filter((l) => /^kv\s+3\.4\.34\s/.test(l));
    expect(during.filter((l) => /\sDegraded\s/.test(l)), followed()).to.deep.equal([]);
  });

  it('upgrades to 3.5.21; every key intact, every member reports 3.5.21 in a 3.5.0 cluster', async () => {
    const before = deletions.length;
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', NAME, '--type=merge', '-p', '{"spec":{"version":"3.5.21"}}']);
    const st = await upgraded('3.5.21', '3.5.0');
    expect(st.upgrade).to.include({ from: '3.4.34', to: '3.5.21' });
    const restarted = deletions.slice(before);
    expect(restarted.map((d) => d.image)).to.deep.equal(['svc:v3.4.34', 'svc:v3.4.34', 'svc:v3.4.34']);
    expect(new Set(restarted.map((d) => d.name)).size).to.equal(3);
    const last = restarted.at(-1)!.name;
    expect((await events()).some((e) => e.reason === 'MoveLeader' && e.message.startsWith(`move leadership from ${last} to `)),
      `leadership moved away from ${last} before its restart`).to.equal(true);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${memberUrl(i)}/version`, { signal: AbortSignal.timeout(10_000) });
      expect(await res.json()).to.deep.equal({ etcdserver: '3.5.21', etcdcluster: '3.5.0' });
      const got = await post(`${memberUrl(i)}/v3/kv/range`, { key: b64('e2e/'), range_end: b64('e2e0') });
      const kvs = (got.kvs ?? []) as Array<{ key: string; value: string }>;
      expect(kvs, `keys through ${NAME}-${i}`).to.have.length(KEYS);
      for (const kv of kvs) expect(unb64(kv.value)).to.equal(`value-${Number(unb64(kv.key).slice(4))}`);
    }
  });

  it('the operator pod\'s /metrics shows the per-cluster upgrade metrics', async () => {
    const pod = (await readyOperator())!;
    const text = await (await fetch(`http://${pod.status!.podIP!}:${PROBE_PORT}/metrics`)).text();
    const labels = `namespace="${NS}",cluster="${NAME}"`;
    const value = (series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      expect(line, `${series} in\n${text}`).to.be.a('string');
      return Number(line!.slice(series.length + 1));
    };
    await waitFor('the steady step in /metrics', async () => {
      const t = await (await fetch(`http://${pod.status!.podIP!}:${PROBE_PORT}/metrics`)).text();
      return t.includes(`svc_operator_upgrade_step{${labels},step="steady"} 1`) ? true : undefined;
    }, 30_000, 250);
    expect(value(`svc_operator_upgrade_members_done{${labels}}`)).to.equal(3);
    // this pod finished both upgrades (it took over during the first one)
    expect(value(`svc_operator_upgrade_duration_seconds{${labels},from="3.3.27",to="3.4.34"}`)).to.be.greaterThan(0);
    expect(value(`svc_operator_upgrade_duration_seconds{${labels},from="3.4.34",to="3.5.21"}`)).to.be.greaterThan(0);
    // its restarts: all three of the second upgrade, and those of the first one left when it took over
    expect(value(`svc_operator_upgrade_steps_total{${labels},kind="restartMember"}`)).to.be.at.least(3);
    expect(value(`svc_operator_upgrade_steps_total{${labels},kind="snapshot"}`)).to.equal(1);
  });
});
