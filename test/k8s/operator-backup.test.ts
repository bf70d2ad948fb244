// Backups and restores against the real control plane. Into spec.backup.pvc: the pre-upgrade snapshot is taken by
// a Job in the cluster's namespace (on the real node, its record read from the pod's termination message), survives
// an operator restart in the middle of the Job, lands in the claim's folder with the recorded sha256; a missing
// claim blocks the upgrade; a new SvcCluster created from that snapshot serves every key, and a corrupt snapshot
// creates no members. Without spec.backup.pvc: the operator's own <cluster>-backups claim, a scheduled backup
// (cron), an on-demand one (svc-operator backup-now), each in status.backups and an Event, a restore drill Job that
// passes and one that fails on altered bytes, and the whole loop: scheduled backup, more writes, restore into a new
// SvcCluster holding exactly the keys of the backup.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import type { BackupEntry } from '../../operator/api/types.js';
import { backupNowMain } from '../../operator/cli/backup-now.js';
import { jobDeadlineSeconds } from '../../operator/backup/schedule.js';
import { b64, postJson, unb64 } from '../../harness/svc-cluster.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster } from './operator/helpers.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-backup';
const CLAIM = 'snapshots';
const KEYS = Array.from({ length: 30 }, (_, i) => `key-${String(i).padStart(2, '0')}`);

/** Keys of the scheduled-backup loop, written before the backup and after it. */
const BEFORE = Array.from({ length: 20 }, (_, i) => `key-b${String(i).padStart(2, '0')}`);
const AFTER = Array.from({ length: 10 }, (_, i) => `key-c${String(i).padStart(2, '0')}`);

describe('k8s: backups (spec.backup.pvc, the default claim, schedule, on demand) and restores', function () {
  this.timeout(240_000);
  const op = useOperator(NS);
  let location = '';
  let scheduled: BackupEntry | undefined;

  const get = (name: string) => getSvcCluster(op.tb, NS, name);
  const events = async (name: string): Promise<Array<{ reason: string; message: string; type: string }>> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string; type: string }> }).items;
  const apply = (name: string, spec: object) => op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec }));
  // no jobTimeoutSeconds: the Jobs' deadlines follow the database size
  /** The operator's svc_operator_backup_failing of a cluster. */
  const backupFailing = async (name: string) => {
    const line = (await op.ctl.registry.metrics()).split('\n').find((l) => l.startsWith('svc_operator_backup_failing{') && l.includes(`namespace="${NS}"`) && l.includes(`cluster="${name}"`));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };
  /** The host folder of a claim's volume (the local-path provisioner's hostPath). */
  const claimFolder = async (claim: string): Promise<string> => {
    const pv = (await op.tb.kubectl(['-n', NS, 'get', 'pvc', claim, '-o', 'jsonpath={.spec.volumeName}'])).trim();
    return (await op.tb.kubectl(['get', 'pv', pv, '-o', 'jsonpath={.spec.hostPath.path}{.spec.local.path}'])).trim();
  };
  /** A member's client URL (Service ClusterIPs are not routed on the test node). */
  const member = (cluster: string, i = 0): string => `http://${cluster}-${i}.${cluster}.${NS}.svc:2379`;
  /** Every key through a member of `cluster` (serializable reads are fine: every member is healthy). */
  const readKeys = async (cluster: string, prefix = 'key-'): Promise<string[]> => {
    const a = await postJson(`${member(cluster)}/v3/kv/range`, { key: b64(prefix), range_end: b64(prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)) });
    return ((a.body.kvs ?? []) as Array<{ key: string; value: string }>).map((kv) => `${unb64(kv.key)}=${unb64(kv.value)}`);
  };
  /** Names of the Job pods of a kind seen since the test file started (a watch: finished Jobs take their pods along). */
  const jobPods = new Map<string, Set<string>>([['backup', new Set()], ['restore', new Set()], ['verify', new Set()]]);
  /** activeDeadlineSeconds of every Job seen, by Job name. */
  const deadlines = new Map<string, number | undefined>();
  let podWatch: { abort(): void } | undefined;
  let jobWatch: { abort(): void } | undefined;

  before(async () => {
    podWatch = await new k8s.Watch(op.ctl.kc).watch(`/api/v1/namespaces/${NS}/pods`, { labelSelector: 'svc.dev/job' }, (_type, pod: k8s.V1Pod) => {
      const labels = pod.metadata?.labels ?? {};
      jobPods.get(labels['svc.dev/job'])?.add(`${labels['svc.dev/cluster']}/${pod.metadata?.name}`);
    }, () => undefined);
    jobWatch = await new k8s.Watch(op.ctl.kc).watch(`/apis/batch/v1/namespaces/${NS}/jobs`, { labelSelector: 'svc.dev/job' }, (_type, job: k8s.V1Job) => {
      deadlines.set(job.metadata!.name!, job.spec?.activeDeadlineSeconds);
    }, () => undefined);
  });

  after(async () => {
    podWatch?.abort();
    jobWatch?.abort();
  });

  it('a schedule that is not cron syntax is refused: Blocked with the reason in lastError and a Warning Event, no members', async () => {
    await apply('badcron', { version: '3.5.21', replicas: 1, backup: { schedule: '61 * * * *' } });
    const st = await waitFor('the refusal', async () => {
      const s = (await get('badcron')).status;
      return s?.phase === 'Blocked' ? s : undefined;
    }, 60_000, 500);
    expect(st.lastError).to.match(/spec\.backup\.schedule "61 \* \* \* \*" is not a cron expression/);
    expect((await events('badcron')).find((e) => e.reason === 'InvalidSpec')).to.include({ type: 'Warning' });
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulsets', '-o', 'name'])).to.not.contain('badcron');
    await op.tb.kubectl(['-n', NS, 'delete', 'svcc', 'badcron', '--wait=true']);
  });

  it('a missing backup claim blocks the upgrade: BackupReady False, UpgradeBlocked, a Warning Event, members untouched', async () => {
    await apply('kv', { version: '3.4.34', replicas: 3, backup: { pvc: CLAIM, keep: 2 } });
    await waitFor('kv Running', async () => ((await get('kv')).status?.phase === 'Running' ? true : undefined), 180_000, 1000);
    for (const k of KEYS) expect((await postJson(`${member('kv')}/v3/kv/put`, { key: b64(k), value: b64(`v-${k}`) })).status).to.equal(200);
    await op.tb.kubectl(['-n', NS, 'patch', 'svcc', 'kv', '--type=merge', '-p', '{"spec":{"version":"3.5.21"}}']);
    const st = await waitFor('the refusal', async () => {
      const s = (await get('kv')).status;
      return s?.conditions?.find((c) => c.type === 'BackupReady' && c.reason === 'BackupPVCNotFound') ? s : undefined;
    }, 60_000, 500);
    expect(st.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'False' });
    expect(st.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'True', reason: 'BackupPVCNotFound' });
    expect(st.lastError).to.contain(`PersistentVolumeClaim ${NS}/${CLAIM} not found`);
    expect((await events('kv')).find((e) => e.reason === 'BackupPVCNotFound')?.type).to.equal('Warning');
    expect(await op.tb.kubectl(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/instance=kv', '-o', 'jsonpath={.items[*].spec.containers[0].image}'])).to.equal('svc:v3.4.34 svc:v3.4.34 svc:v3.4.34');
    // the chart's SvcBackupFailing alert reads this gauge
    expect(await backupFailing('kv')).to.equal(1);
  });

  it('with the claim: a Job takes the snapshot into it, an operator restart during the Job resumes it, the upgrade completes', async () => {
    const batch = op.ctl.kc.makeApiClient(k8s.BatchV1Api);
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: CLAIM, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }));
    // the operator stops as soon as its backup Job exists; the next one must find that Job, not start another
    await waitFor('the backup Job', async () => ((await batch.listNamespacedJob({ namespace: NS, labelSelector: 'svc.dev/job=backup' })).items.length > 0 ? true : undefined), 120_000, 50);
    await op.stopController();
    const recorded = (JSON.parse((await get('kv')).metadata.annotations?.['svc.dev/records'] ?? '{}') as { progress?: { snapshot?: unknown } }).progress ?? {};
    expect(recorded.snapshot, 'the snapshot was not recorded before the stop').to.equal(undefined);
    await op.startController();
    const st = await waitFor('the upgrade complete', async () => {
      const s = (await get('kv')).status;
      return s?.phase === 'Running' && s.currentVersion === '3.5.21' && s.upgrade?.finishedAt ? s : undefined;
    }, 200_000, 1000);
    const snap = st.upgrade!.snapshot!;
    expect(snap.location).to.match(new RegExp(`^pvc://${CLAIM}/${NS}/kv/kv-\\d-3\\.4\\.34-to-3\\.5\\.21-.*\\.db$`));
    expect(st.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'True', reason: 'SnapshotTaken' });
    expect([...jobPods.get('backup')!].filter((p) => p.startsWith('kv/')), 'backup pods run').to.have.length(1);
    const file = join(await claimFolder(CLAIM), snap.location.slice(`pvc://${CLAIM}/`.length));
    const bytes = readFileSync(file);
    expect(bytes.length).to.equal(snap.size + 32);
    expect(createHash('sha256').update(bytes.subarray(0, snap.size)).digest('hex')).to.equal(snap.sha256);
    expect(snap.revision).to.be.at.least(KEYS.length + 1);
    // the finished Job is gone (its record is in status)
    expect((await batch.listNamespacedJob({ namespace: NS, labelSelector: 'svc.dev/job=backup' })).items).to.have.length(0);
    location = snap.location;
    expect(await backupFailing('kv'), 'no backup failing once one succeeded').to.equal(0);
  });

  it('a corrupt snapshot: the restore Job fails, a Warning Event and lastError say so, no members are created', async () => {
    const folder = await claimFolder(CLAIM);
    mkdirSync(join(folder, 'bad'), { recursive: true });
    const bad = readFileSync(join(folder, location.slice(`pvc://${CLAIM}/`.length)));
    bad[200] ^= 0xff;
    writeFileSync(join(folder, 'bad', 'corrupt.db'), bad);
    await apply('broken', { version: '3.5.21', replicas: 1, backup: { pvc: CLAIM }, restore: { snapshot: 'bad/corrupt.db' } });
    const st = await waitFor('the failure in status', async () => {
      const s = (await get('broken')).status;
      return s?.lastError?.includes('corrupt') ? s : undefined;
    }, 120_000, 500);
    expect(st.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'False', reason: 'RestoreJobFailed' });
    expect((await events('broken')).find((e) => e.reason === 'RestoreJobFailed')?.type).to.equal('Warning');
    expect(await backupFailing('broken'), 'a failed restore is not a failing backup').to.equal(0);
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulsets', '-o', 'name'])).to.not.contain('broken');
    await op.tb.kubectl(['-n', NS, 'delete', 'svcc', 'broken', '--wait=true']);
  });

  it('a new SvcCluster with spec.restore.snapshot starts from the snapshot (across an operator restart): Available, every key intact', async () => {
    const batch = op.ctl.kc.makeApiClient(k8s.BatchV1Api);
    await apply('kv2', { version: '3.5.21', replicas: 3, backup: { pvc: CLAIM }, restore: { snapshot: location } });
    // the operator stops while the restore Job runs; the next one waits for that Job, then creates the members
    await waitFor('the restore Job', async () => ((await batch.listNamespacedJob({ namespace: NS, labelSelector: 'svc.dev/cluster=kv2,svc.dev/job=restore' })).items.length > 0 ? true : undefined), 120_000, 50);
    await op.stopController();
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulsets', '-o', 'name']), 'no members before the restore finished').to.not.contain('kv2');
    await op.startController();
    const st = await waitFor('kv2 Running', async () => {
      const s = (await get('kv2')).status;
      return s?.phase === 'Running' ? s : undefined;
    }, 200_000, 1000);
    expect(st.conditions!.find((c) => c.type === 'Available')).to.include({ status: 'True' });
    expect(st.members!.every((m) => m.healthy && m.release === '3.5.21')).to.equal(true);
    expect((await readKeys('kv2')).sort()).to.deep.equal(KEYS.map((k) => `${k}=v-${k}`));
    // a new cluster (its own token and ids), on the claims the restore filled
    const oldIds = (await get('kv')).status!.members!.map((m) => m.id);
    expect(st.members!.filter((m) => oldIds.includes(m.id))).to.deep.equal([]);
    for (let i = 0; i < 3; i++) {
      const folder = await claimFolder(`data-kv2-${i}`);
      expect(existsSync(join(folder, 'data', 'restored-from.json')), `data-kv2-${i}`).to.equal(true);
      expect(statSync(join(folder, 'data', 'member')).isDirectory()).to.equal(true);
    }
    expect((await events('kv2')).map((e) => e.reason)).to.include.members(['CreateCluster', 'Restored']);
    expect([...jobPods.get('restore')!].filter((p) => p.startsWith('kv2/')), 'restore pods run').to.have.length(1);
    expect(await op.tb.kubectl(['-n', NS, 'get', 'jobs', '-l', 'svc.dev/cluster=kv2', '-o', 'name']), 'the restore Job is removed').to.equal('');
    const put = await postJson(`${member('kv2', 1)}/v3/kv/put`, { key: b64('key-new'), value: b64('after') });
    expect(put.status).to.equal(200);
  });

  it('without spec.backup.pvc: the operator creates <cluster>-backups (not owned), a scheduled backup lands on it with status.backups and an Event', async () => {
    await apply('sched', { version: '3.5.21', replicas: 1, backup: { schedule: '* * * * *', keep: 5 } });
    await waitFor('sched Running', async () => ((await get('sched')).status?.phase === 'Running' ? true : undefined), 180_000, 1000);
    let last = 0;
    for (const k of BEFORE) {
      const put = await postJson(`${member('sched')}/v3/kv/put`, { key: b64(k), value: b64(`before-${k}`) });
      expect(put.status).to.equal(200);
      last = Number((put.body.header as { revision: string }).revision);
    }
    // the first scheduled backup that holds every write (one may have run while the keys went in)
    const entry = await waitFor('a scheduled backup after the writes', async () => {
      const b = (await get('sched')).status?.backups;
      return b?.items?.find((x) => x.kind === 'scheduled' && x.revision >= last);
    }, 150_000, 1000);
    // later writes: a new value of a key of the backup, and new keys
    expect((await postJson(`${member('sched')}/v3/kv/put`, { key: b64(BEFORE[0]), value: b64('changed-later') })).status).to.equal(200);
    for (const k of AFTER) expect((await postJson(`${member('sched')}/v3/kv/put`, { key: b64(k), value: b64('after') })).status).to.equal(200);
    scheduled = entry;
    const st = (await get('sched')).status!;
    expect(st.backups!.claim).to.equal('sched-backups');
    expect(entry.location).to.match(new RegExp(`^pvc://sched-backups/${NS}/sched/sched-0-scheduled-.*\\.db$`));
    expect(Date.parse(st.backups!.nextScheduleTime!)).to.be.greaterThan(Date.parse(st.backups!.lastScheduleTime!));
    expect(st.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'True', reason: 'SnapshotTaken' });
    const claim = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'pvc', 'sched-backups', '-o', 'json'])) as { metadata: { ownerReferences?: unknown[]; labels: Record<string, string> }; spec: { resources: { requests: { storage: string } } } };
    expect(claim.metadata.ownerReferences ?? [], 'the default claim outlives the cluster').to.deep.equal([]);
    expect(claim.metadata.labels['svc.dev/cluster']).to.equal('sched');
    expect(claim.spec.resources.requests.storage).to.equal('1Gi');
    const bytes = readFileSync(join(await claimFolder('sched-backups'), entry.location.slice('pvc://sched-backups/'.length)));
    expect(createHash('sha256').update(bytes.subarray(0, entry.size)).digest('hex')).to.equal(entry.sha256);
    expect((await events('sched')).filter((e) => e.reason === 'BackupTaken').map((e) => e.message)).to.include(
      `scheduled backup of sched-0 at ${entry.location}: revision ${entry.revision}, ${entry.size} bytes, sha256 ${entry.sha256}`);
    // the Job's deadline followed the (small) database: 120 s plus its bytes at 4 MiB/s (the size then was at most
    // the size now: no defragmentation ran), not a fixed 600 s
    const dbSize = Number((await postJson(`${member('sched')}/v3/maintenance/status`, {})).body.dbSize);
    expect(dbSize).to.be.greaterThan(0);
    const sched = [...deadlines].filter(([n]) => n.startsWith('sched-sched-')).map(([, d]) => d);
    expect(sched.length).to.be.at.least(1);
    for (const d of sched) expect(d).to.be.within(120, jobDeadlineSeconds(dbSize));
  });

  it('svc-operator backup-now: an on-demand backup, recorded with its token', async () => {
    const out: string[] = [];
    const code = await backupNowMain(['backup-now', 'sched', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`, '--token=req-1', '--wait=120'], (s) => out.push(s));
    expect(code, out.join('')).to.equal(0);
    const st = (await get('sched')).status!;
    expect(st.backups!.lastRequest).to.equal('req-1');
    const od = st.backups!.items!.filter((x) => x.kind === 'on-demand');
    expect(od).to.have.length(1);
    expect(out.join('')).to.contain(`taken: ${od[0].location}`);
    expect(od[0].revision).to.be.at.least(scheduled!.revision + AFTER.length + 1);
    expect((await get('sched')).metadata.annotations?.['svc.dev/backup-request']).to.equal('req-1');
    expect(await backupNowMain(['backup-now', 'nosuch', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`], () => undefined)).to.equal(1);
  });

  it('restore drills (kubectl svc verify): a drill Job restores the newest backup and passes; altered bytes fail it (condition, Warning Event, metric)', async () => {
    const drillFailing = async () => {
      const line = (await op.ctl.registry.metrics()).split('\n').find((l) => l.startsWith('svc_operator_backup_verify_failing{') && l.includes(`namespace="${NS}"`) && l.includes('cluster="sched"'));
      return line === undefined ? undefined : Number(line.split(' ').at(-1));
    };
    const verify = async (token: string) => {
      const out: string[] = [];
      const code = await backupNowMain(['verify-now', 'sched', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`, `--token=${token}`, '--wait=150'], (x) => out.push(x), 'kubectl svc verify');
      return { code, out: out.join('') };
    };
    const newest = (await get('sched')).status!.backups!.items!.at(-1)!;
    // the backup Job recorded the member's KV hash at the backup's revision
    expect(newest.kvHash).to.be.a('number');
    const ok = await verify('drill-1');
    expect(ok.code, ok.out).to.equal(0);
    expect(ok.out).to.match(/restore drill passed at .*: restored .* KV hash at revision \d+ is \d+, as recorded/);
    let st = (await get('sched')).status!;
    expect(st.backups!.lastVerified).to.include({ result: 'Passed', location: newest.location, revision: newest.revision });
    expect(st.conditions!.find((c) => c.type === 'BackupVerified')).to.include({ status: 'True', reason: 'DrillPassed' });
    expect(await drillFailing()).to.equal(0);
    expect([...jobPods.get('verify')!].filter((p) => p.startsWith('sched/')), 'a drill pod ran').to.have.length(1);

    const file = join(await claimFolder('sched-backups'), newest.location.slice('pvc://sched-backups/'.length));
    const original = readFileSync(file);
    const bad = Buffer.from(original);
    for (let i = 0; i < 16; i++) bad[Math.floor(bad.length / 2) + i] ^= 0xff;
    writeFileSync(file, bad);
    try {
      const failed = await verify('drill-2');
      expect(failed.code, failed.out).to.equal(1);
      st = (await get('sched')).status!;
      expect(st.backups!.lastVerified).to.include({ result: 'Failed', location: newest.location });
      expect(st.backups!.lastVerified!.message).to.match(/sha256/);
      expect(st.conditions!.find((c) => c.type === 'BackupVerified')).to.include({ status: 'False', reason: 'DrillFailed' });
      // a drill touches no member: the cluster stays Ready
      expect(st.conditions!.find((c) => c.type === 'Ready')).to.include({ status: 'True' });
      expect((await events('sched')).find((e) => e.reason === 'BackupVerifyFailed')).to.include({ type: 'Warning' });
      // the chart's SvcBackupFailing alert reads this gauge
      expect(await drillFailing()).to.equal(1);
    } finally {
      writeFileSync(file, original);
    }
  });

  it('restore of the scheduled backup into a new SvcCluster: every key of the backup with its value, none written later', async () => {
    await apply('sched-r', { version: '3.5.21', replicas: 3, restore: { snapshot: scheduled!.location } });
    const st = await waitFor('sched-r Running', async () => {
      const s = (await get('sched-r')).status;
      return s?.phase === 'Running' ? s : undefined;
    }, 200_000, 1000);
    expect(st.members!.every((m) => m.healthy)).to.equal(true);
    expect((await readKeys('sched-r', 'key-b')).sort()).to.deep.equal(BEFORE.map((k) => `${k}=before-${k}`));
    expect(await readKeys('sched-r', 'key-c')).to.deep.equal([]);
    // and the source still has the later writes
    expect(await readKeys('sched', 'key-c')).to.have.length(AFTER.length);
    expect((await events('sched-r')).find((e) => e.reason === 'Restored')?.message).to.equal(`members restored from ${scheduled!.location}`);
    // deleting the source cluster keeps its backups (the claim is not owned by it)
    await op.tb.kubectl(['-n', NS, 'delete', 'svcc', 'sched', '--wait=true']);
    expect((await op.tb.kubectl(['-n', NS, 'get', 'pvc', 'sched-backups', '-o', 'name'])).trim()).to.equal('persistentvolumeclaim/sched-backups');
  });
});
