// Maintenance on the real node: a defragmentation asked for through the svc.dev/maintenance-request annotation
// (what `kubectl svc defrag` writes) takes each member out of the client Service's EndpointSlice while its backend
// is rewritten and puts it back (the svc.dev/serving label the Service selects on), followers first and the leader
// last, with a MemberDefragmented Event carrying the bytes before and after, while a client keeps writing: no write
// fails, every key stays. Volumes that grow: refused with nothing changed on local-path (no expansion); on a class
// that allows expansion the claims are grown in place and the StatefulSet recreated with its pods orphaned (no
// resizer runs here, so the volumes themselves keep their size: the operator's side is what is tested). The on-call
// verbs on the same cluster: kubectl svc move-leader, restart (every member once, the leader last) and alarm (a
// disarm refused while NOSPACE's cause persists, then relieved by the operator once resumed).
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import type { SvcClusterStatus } from '../../operator/api/types.js';
import { BackgroundWriter } from '../../operator/workload/writer.js';
import { Client } from '../../server/client/index.js';
import { kubeOnCallMain } from '../../operator/cli/oncall-kube.js';
import { MemberClient } from '../../operator/members/index.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster, type StoredSvcCluster } from './operator/helpers.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-maint';

interface Slice { endpoints?: Array<{ conditions?: { ready?: boolean }; targetRef?: { name?: string } }> }

describe('k8s: maintenance (defragmentation out of the client Service)', function () {
  this.timeout(300_000);
  const op = useOperator(NS);
  after(async () => {
    await op.tb.kubectl(['delete', 'storageclass', 'svc-expandable', '--ignore-not-found']).catch(() => undefined);
  });
  const name = 'kv';
  const get = () => getSvcCluster(op.tb, NS, name);
  const events = async (): Promise<Array<{ reason: string; message: string; type: string }>> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string; type: string }> }).items;
  const endpoints = [0, 1, 2].map((i) => `http://${name}-${i}.${name}.${NS}.svc:2379`);
  /** The pods the client Service's EndpointSlices list as ready. */
  const ready = async (): Promise<string[]> => {
    const slices = (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'endpointslices', '-l', `kubernetes.io/service-name=${name}-client`, '-o', 'json'])) as { items: Slice[] }).items;
    return slices.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).map((e) => e.targetRef?.name ?? '')).sort();
  };
  const all = [0, 1, 2].map((i) => `${name}-${i}`);

  it('defragments every member on request, each out of the client Service\'s endpoints meanwhile and back after, followers first, no failed write', async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { version: '3.5.21', replicas: 3 } }));
    const before = await waitFor('Running 3/3', async () => {
      const s = (await get()).status;
      return s?.phase === 'Running' && s.ready === '3/3' && s.members?.every((m) => m.healthy) ? s : undefined;
    }, 200_000, 1000);
    await waitFor('every member in the client Service', async () => ((await ready()).join() === all.join() ? true : undefined), 60_000, 500);
    // the client Service selects on the serving label, which every member pod carries
    expect(JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'service', `${name}-client`, '-o', 'jsonpath={.spec.selector}'])) as Record<string, string>).to.include({ 'svc.dev/serving': 'true' });
    const c = await Client.connect({ endpoints, dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    try {
      // overwritten values: history to compact, file space to give back
      for (let i = 0; i < 40; i++) await c.put(`big/${i % 4}`, 'x'.repeat(32 * 1024));
    } finally {
      c.close();
    }
    const writer = new BackgroundWriter({ endpoints, prefix: 'load/', intervalMs: 20 });
    await writer.start();
    // every change of what the client Service's EndpointSlices list as ready, from a watch
    const seen: string[][] = [];
    const slices = new Map<string, string[]>();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(op.tb.kubeconfigPath);
    const watch = await new k8s.Watch(kc).watch(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, { labelSelector: `kubernetes.io/service-name=${name}-client` }, (type: string, obj: Slice & { metadata: { name: string } }) => {
      if (type === 'DELETED') slices.delete(obj.metadata.name);
      else slices.set(obj.metadata.name, (obj.endpoints ?? []).filter((e) => e.conditions?.ready !== false).map((e) => e.targetRef?.name ?? ''));
      seen.push([...slices.values()].flat().sort());
    }, () => undefined);
    const from = op.logs.length;
    // through the plugin: --dry-run and an unknown member change nothing, then the request itself
    const said: string[] = [];
    const cli = (...args: string[]) => kubeOnCallMain([...args, '-n', NS, '--kubeconfig', op.tb.kubeconfigPath], (s) => void said.push(s));
    expect(await cli('defrag', name, '--dry-run')).to.equal(0);
    expect(said.join('')).to.match(/dry run: would ask for a defragmentation of every member/);
    expect(await cli('defrag', name, `${name}-9`)).to.equal(1);
    const annotations = async () => (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'svcc', name, '-o', 'json'])) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {};
    expect((await annotations())['svc.dev/maintenance-request']).to.equal(undefined);
    expect(await cli('defrag', name)).to.equal(0);
    const token = (JSON.parse((await annotations())['svc.dev/maintenance-request']) as { token: string; action: string }).token;
    const done = await waitFor('three MemberDefragmented Events', async () => {
      const evs = (await events()).filter((e) => e.reason === 'MemberDefragmented');
      return evs.length >= 3 ? evs : undefined;
    }, 120_000, 1000);
    await waitFor('every member back in the client Service', async () => ((await ready()).join() === all.join() ? true : undefined), 60_000, 300);
    watch.abort();
    const stats = await writer.stop();

    // each member left the Service's endpoints at some point, and no two at once
    const changes = seen.slice(1);
    for (const m of all) expect(changes.some((s) => !s.includes(m)), `${m} never left the endpoints (${JSON.stringify(seen)})`).to.equal(true);
    expect(changes.every((s) => s.length >= 2), `never more than one member out (${JSON.stringify(seen)})`).to.equal(true);
    // followers first, the leader last (after leadership moved), each with its bytes
    const order = op.logs.slice(from).filter((l) => l.msg === 'step' && String(l.line).startsWith('defragment ')).map((l) => /defragment (\S+)/.exec(String(l.line))![1]);
    expect(new Set(order).size).to.equal(3);
    expect(order.at(-1), 'the leader last').to.equal(before.leader);
    for (const e of done) expect(e.message).to.match(/^member kv-\d defragmented \(Requested\): database file \d+ -> \d+ bytes/);
    const st = await get();
    expect(JSON.parse(st.metadata.annotations!['svc.dev/records']).maintenance).to.deep.include({ lastRequest: token });
    expect((await events()).filter((e) => e.type === 'Warning')).to.deep.equal([]);
    expect(stats.failed, stats.errors.join('\n')).to.equal(0);
    expect(stats.succeeded).to.be.above(0);
    const check = await Client.connect({ endpoints, dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    try {
      for (let i = 0; i < 4; i++) expect((await check.get(`big/${i}`)).kvs).to.have.length(1);
    } finally {
      check.close();
    }
  });

  it('kubectl svc move-leader (a --dry-run and an unknown member that change nothing) moves the leader; restart (after the same) restarts each member once, the leader last; alarm list|disarm', async () => {
    const said: string[] = [];
    const cli = (...args: string[]) => kubeOnCallMain([...args, '-n', NS, '--kubeconfig', op.tb.kubeconfigPath], (s) => void said.push(s));
    const client = new MemberClient({ timeoutMs: 3000, attempts: 2 });
    const url = (m: string) => `http://${m}.${name}.${NS}.svc:2379`;
    const leader = async () => {
      for (const m of all) if (await client.isLeader(url(m)).catch(() => false)) return m;
      return undefined;
    };
    const annotations = async () => (await get()).metadata.annotations ?? {};
    try {
      // the round before it in status.maintenance (each member's bytes), with the quota derived from the 1Gi volumes
      const mt = await waitFor('status.maintenance lists the three defragmentations', async () => {
        const m = (await get()).status?.maintenance;
        return m?.members?.length === 3 ? m : undefined;
      }, 30_000, 500);
      expect(mt.quotaBackendBytes).to.equal(512 * 2 ** 20);
      expect(mt.members!.map((m) => `${m.name} ${m.reason} ${typeof m.before} ${typeof m.after}`)).to.deep.equal(all.map((m) => `${m} Requested number number`));
      const was = await waitFor('a leader', leader, 30_000, 300);
      const to = all.find((m) => m !== was)!;
      expect(await cli('move-leader', name, '--to', to, '--dry-run')).to.equal(0);
      expect(said.join('')).to.contain(`dry run: would move leadership from ${was} to ${to}`);
      expect(await cli('move-leader', name, '--to', `${name}-9`)).to.equal(1);
      expect(await cli('move-leader', 'no-such-cluster')).to.equal(1);
      expect(await leader()).to.equal(was);
      expect((await annotations())['svc.dev/maintenance-request'], 'the defrag request still').to.match(/"action":"defrag"/);
      expect(await cli('move-leader', name, '--to', to)).to.equal(0);
      expect(said.at(-1)).to.equal(`move leadership from ${was} to ${to}: ${to} leads\n`);
      expect(await leader()).to.equal(to);
      // the operator answered the request (its token recorded before the move) and said so
      const asked = JSON.parse((await annotations())['svc.dev/maintenance-request']) as { token: string; action: string; member: string };
      expect(asked).to.deep.include({ action: 'move-leader', member: to });
      expect(JSON.parse((await annotations())['svc.dev/records']).maintenance).to.deep.include({ lastRequest: asked.token });
      const moves = (await events()).filter((e) => e.reason === 'MoveLeader').map((e) => e.message);
      expect(moves.some((m) => m.includes(`${was}`) && m.includes(`${to}`)), moves.join('\n')).to.equal(true);

      // restart: every pod once (a watch sees each new pod), the leader last
      expect(await cli('restart', name, `${name}-9`)).to.equal(1);
      expect(await cli('restart', name, '--dry-run')).to.equal(0);
      expect(said.join('')).to.contain(`dry run: would restart ${all.join(', ')} one at a time`);
      expect((await annotations())['svc.dev/restart-request']).to.equal(undefined);
      const uids = new Map<string, Set<string>>();
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(op.tb.kubeconfigPath);
      const order: string[] = [];
      const watch = await new k8s.Watch(kc).watch(`/api/v1/namespaces/${NS}/pods`, { labelSelector: `app.kubernetes.io/instance=${name}` }, (_type: string, p: k8s.V1Pod) => {
        const set = uids.get(p.metadata!.name!) ?? new Set<string>();
        if (!set.has(p.metadata!.uid!) && set.size > 0) order.push(p.metadata!.name!);
        uids.set(p.metadata!.name!, set.add(p.metadata!.uid!));
      }, () => undefined);
      const from = op.logs.length;
      expect(await cli('restart', name)).to.equal(0);
      expect(JSON.parse((await annotations())['svc.dev/restart-request'])).to.deep.include({ members: all });
      await waitFor('every member restarted once and Ready 3/3', async () => {
        const s = (await get()).status;
        return order.length === 3 && s?.ready === '3/3' && s.members?.every((m) => m.healthy) ? true : undefined;
      }, 180_000, 1000);
      // a few passes more: nobody restarts again
      await new Promise((r) => setTimeout(r, 3000));
      watch.abort();
      expect([...uids.values()].map((u) => u.size), JSON.stringify([...uids])).to.deep.equal([2, 2, 2]);
      expect(order.at(-1), `the leader last (${order.join(', ')})`).to.equal(to);
      const restarts = op.logs.slice(from).filter((l) => l.msg === 'step' && /^restart \S+ on .*\(RestartRequested\)/.test(String(l.line)));
      expect(restarts.length, 'recorded before it acts, each restart once').to.be.at.least(3);

      // alarms: none raised; a disarm with nothing raised is refused; list, read-only, takes --dry-run too
      said.length = 0;
      expect(await cli('alarm', 'list', name)).to.equal(0);
      expect(said.join('')).to.equal(`no alarm raised in ${NS}/${name}\n`);
      expect(await cli('alarm', 'disarm', name, '--dry-run')).to.equal(1);
      said.length = 0;
      expect(await cli('alarm', 'list', name, '--dry-run')).to.equal(0);
      expect(said.join('')).to.equal(`no alarm raised in ${NS}/${name}\n`);

      // a NOSPACE alarm whose cause is gone (raised by hand with every database far below the quota), on a suspended
      // cluster so that the operator's own relief stays out of the way: --dry-run keeps it, disarm clears it
      expect(await cli('suspend', name)).to.equal(0);
      const raisedOn = (await client.memberList(url(all[0]))).find((m) => m.name === all[0])!;
      const raise = await fetch(`${url(all[0])}/v3/maintenance/alarm`, { method: 'POST', body: JSON.stringify({ action: 'ACTIVATE', memberID: raisedOn.id, alarm: 'NOSPACE' }), signal: AbortSignal.timeout(5000) });
      expect(raise.status).to.equal(200);
      said.length = 0;
      expect(await cli('alarm', 'list', name)).to.equal(0);
      expect(said.join('')).to.contain('NOSPACE');
      said.length = 0;
      expect(await cli('alarm', 'disarm', name, '--dry-run')).to.equal(0);
      expect(said.join('')).to.match(/^dry run: would disarm NOSPACE \(.*\); nothing was changed\n$/);
      expect((await client.alarms(url(all[1]))).map((a) => a.alarm)).to.deep.equal(['NOSPACE']);
      said.length = 0;
      expect(await cli('alarm', 'disarm', name)).to.equal(0);
      expect(said.join('')).to.match(/^disarmed NOSPACE \(/);
      expect(await client.alarms(url(all[2]))).to.deep.equal([]);
      expect(await cli('resume', name)).to.equal(0);
    } finally {
      client.close();
    }
  });

  /** The pods of cluster `c`: name -> uid and restarts of the svc container. */
  const podsOf = async (c: string): Promise<Record<string, string>> => Object.fromEntries(
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'pods', '-l', `app.kubernetes.io/instance=${c}`, '-o', 'json'])) as { items: Array<{ metadata: { name: string; uid: string }; status: { containerStatuses?: Array<{ restartCount: number }> } }> }).items
      .map((p) => [p.metadata.name, `${p.metadata.uid}/${p.status.containerStatuses?.[0]?.restartCount ?? 0}`]));
  const claimSizes = async (c: string, n: number): Promise<string[]> => Promise.all(Array.from({ length: n }, (_, i) => op.tb.kubectl(['-n', NS, 'get', 'pvc', `data-${c}-${i}`, '-o', 'jsonpath={.spec.resources.requests.storage}'])));
  const stsOf = async (c: string) => JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'statefulset', c, '-o', 'json'])) as { metadata: { uid: string }; spec: { volumeClaimTemplates: Array<{ spec: { resources: { requests: { storage: string } } } }> } };
  const statusOf = async (c: string): Promise<SvcClusterStatus | undefined> => (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'svcc', c, '-o', 'json'])) as StoredSvcCluster).status;

  it('a larger spec.storage.size on local-path (no expansion): Stalled naming the field and the class, nothing changed; a shrink below the volumes is refused too; back to the volumes\' size it is Ready', async () => {
    const sts = await stsOf(name);
    const pods = await podsOf(name);
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', name, '--type=merge', '-p', JSON.stringify({ spec: { storage: { size: '2Gi' } } })]);
    const stalled = await waitFor('Stalled VolumeExpansionNotAllowed', async () => {
      const c = (await statusOf(name))?.conditions?.find((x) => x.type === 'Stalled');
      return c?.status === 'True' && c.reason === 'VolumeExpansionNotAllowed' ? c : undefined;
    }, 60_000, 1000);
    expect(stalled.message).to.equal("spec.storage.size 2Gi is larger than the members' volumes (1Gi), and StorageClass local-path does not allow volume expansion (allowVolumeExpansion is not true): nothing was changed; set spec.storage.size back to 1Gi, or allow expansion on the class (its provisioner must support it)");
    expect(await claimSizes(name, 3)).to.deep.equal(['1Gi', '1Gi', '1Gi']);
    const after = await stsOf(name);
    expect(after.metadata.uid).to.equal(sts.metadata.uid);
    expect(after.spec.volumeClaimTemplates[0].spec.resources.requests.storage).to.equal('1Gi');
    // the quota derived from the volumes did not move: no member restarted
    expect(await podsOf(name)).to.deep.equal(pods);
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', name, '--type=merge', '-p', JSON.stringify({ spec: { storage: { size: '512Mi' } } })]);
    await waitFor('Stalled VolumeShrinkRefused', async () => ((await statusOf(name))?.conditions?.find((x) => x.type === 'Stalled' && x.status === 'True' && x.reason === 'VolumeShrinkRefused') ? true : undefined), 60_000, 1000);
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', name, '--type=merge', '-p', JSON.stringify({ spec: { storage: { size: '1Gi' } } })]);
    await waitFor('Ready again', async () => ((await statusOf(name))?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True') ? true : undefined), 60_000, 1000);
    expect(await podsOf(name)).to.deep.equal(pods);
  });

  it('a class that allows expansion: every claim\'s requested size grown in place, the StatefulSet recreated with its pods orphaned and adopted again, no pod restarted (no resizer here: the volumes themselves stay as provisioned)', async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'svc-expandable' }, provisioner: 'rancher.io/local-path', volumeBindingMode: 'WaitForFirstConsumer', reclaimPolicy: 'Delete', allowVolumeExpansion: true }));
    const c = 'kx';
    // an explicit quota: a derived one would follow the volumes and restart the member for it
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: c, namespace: NS }, spec: { version: '3.5.21', replicas: 1, storage: { size: '1Gi', storageClassName: 'svc-expandable' }, maintenance: { quotaBackendBytes: '256Mi' } } }));
    await waitFor(`${c} Ready`, async () => ((await statusOf(c))?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True') ? true : undefined), 200_000, 1000);
    const sts = await stsOf(c);
    const pods = await podsOf(c);
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', c, '--type=merge', '-p', JSON.stringify({ spec: { storage: { size: '2Gi' } } })]);
    await waitFor('the StatefulSet recreated with 2Gi claims', async () => {
      const now = await stsOf(c).catch(() => undefined);
      return now && now.metadata.uid !== sts.metadata.uid && now.spec.volumeClaimTemplates[0].spec.resources.requests.storage === '2Gi' ? true : undefined;
    }, 60_000, 500);
    expect(await claimSizes(c, 1)).to.deep.equal(['2Gi']);
    await waitFor(`${c} Ready`, async () => ((await statusOf(c))?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True') ? true : undefined), 60_000, 1000);
    // the pod is the same one, adopted by the new StatefulSet, never restarted
    expect(await podsOf(c)).to.deep.equal(pods);
    const owner = await op.tb.kubectl(['-n', NS, 'get', 'pod', `${c}-0`, '-o', 'jsonpath={.metadata.ownerReferences[0].uid}']);
    expect(owner).to.equal((await stsOf(c)).metadata.uid);
    expect((await events()).length).to.be.greaterThan(0);
    const evs = (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${c}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string }> }).items;
    expect(evs.filter((e) => e.reason === 'ExpandVolumes').map((e) => e.message)).to.deep.include("grow the members' volumes from 1Gi to 2Gi: claims of kx-0 expanded in place, then the StatefulSet recreated with its pods orphaned (no member restarts)");
  });

  it('alarm disarm is refused while NOSPACE\'s cause persists (suspended: the operator relieves nothing), nothing changed; resumed, the operator relieves it', async () => {
    const said: string[] = [];
    const errors: string[] = [];
    const cli = async (...args: string[]) => {
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string) => errors.push(String(chunk)) > 0) as typeof process.stderr.write;
      try {
        return await kubeOnCallMain([...args, '-n', NS, '--kubeconfig', op.tb.kubeconfigPath], (x) => void said.push(x));
      } finally {
        process.stderr.write = write;
      }
    };
    const QUOTA = 6 * 2 ** 20;
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', name, '--type=merge', '-p', JSON.stringify({ spec: { maintenance: { quotaBackendBytes: '6Mi' } } })]);
    await waitFor('every member restarted with the 6Mi quota', async () => {
      const st = (await get()).status;
      return st?.rollout?.reason === 'SpecChange' && st.rollout.finishedAt !== undefined && st.maintenance?.quotaBackendBytes === QUOTA &&
        st.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    }, 180_000, 1000);
    expect(await cli('suspend', name)).to.equal(0);
    const c = await Client.connect({ endpoints, dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    try {
      // overwrites of a few keys: history a compaction frees
      const big = 'x'.repeat(64 * 1024);
      let refused = false;
      for (let i = 0; i < 2000 && !refused; i++) {
        await c.put(`fill/${i % 4}`, big).catch((e: Error) => {
          if (!/database space exceeded/.test(e.message)) throw e;
          refused = true;
        });
      }
      expect(refused, 'the quota was reached').to.equal(true);
      said.length = 0;
      await waitFor('alarm list shows NOSPACE', async () => (await cli('alarm', 'list', name)) === 0 && said.join('').includes('NOSPACE') ? true : undefined, 30_000, 500);
      expect(await cli('alarm', 'disarm', name)).to.equal(1);
      expect(errors.join('')).to.match(new RegExp(`cannot disarm in ${NS}/${name}: the NOSPACE alarm's cause persists: the database of ${name}-\\d is [\\d.]+ MiB .* against a quota of ${(QUOTA / 2 ** 20).toFixed(1)} MiB.*nothing was changed`));
      said.length = 0;
      expect(await cli('alarm', 'list', name)).to.equal(0);
      expect(said.join(''), 'still raised').to.contain('NOSPACE');
      // resumed: the operator compacts, defragments and disarms it by itself
      expect(await cli('resume', name)).to.equal(0);
      await waitFor('the operator disarmed NOSPACE', async () => {
        said.length = 0;
        return (await cli('alarm', 'list', name)) === 0 && said.join('') === `no alarm raised in ${NS}/${name}\n` ? true : undefined;
      }, 150_000, 1000);
      await c.put('after/nospace', 'ok');
      expect((await get()).status?.maintenance?.lastCompaction?.reason).to.equal('NoSpace');
    } finally {
      c.close();
    }
  });
});
