// Backups to object storage on Kubernetes, against a real S3-compatible server (versitygw, harness/s3-server.ts)
// listening on the test node's bridge address: reachable from the pods and from here, never beyond the machine (the
// node's network rules are checked unchanged at the end). One cluster: a wrong credential in its Secret fails the
// on-demand backup with the classified condition and Event naming the destination, the members untouched and the
// bucket empty; the Secret fixed, the retried backup lands in the bucket with its manifest, and so does a scheduled
// one; `kubectl svc backups` lists them. Then the cluster's namespace is DELETED (its claim and its backups there
// go with it), and a new SvcCluster in another namespace is created from the bucket holding every key; one asking
// for a revision the bucket does not cover is refused with the covered range before anything of it is created.
// Between the two, continuous backup is turned on: its agent's Deployment writes delta segments under a writer, and
// the new cluster is restored to a revision R after the last full snapshot (the segments replayed): exactly R's keys.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseDeltaKey, type FullManifest, type SegmentRef } from '../../operator/backup/restore-points.js';
import { backupNowMain } from '../../operator/cli/backup-now.js';
import { kubeBackupsMain } from '../../operator/cli/backups-kube.js';
import { startS3Server, type S3Server } from '../../harness/s3-server.js';
import { b64, postJson, unb64 } from '../../harness/svc-cluster.js';
import { waitFor } from '../../harness/process.js';
import { useOperator } from './operator/fixture.js';
import type { StoredSvcCluster } from './operator/helpers.js';

const NS = 'svcc-s3';
const NS2 = 'svcc-s3-restore';
const BUCKET = 'kv-backups';
const PREFIX = 'prod/kv';
const BEFORE = Array.from({ length: 20 }, (_, i) => `key-a${String(i).padStart(2, '0')}`);
const AFTER = Array.from({ length: 10 }, (_, i) => `key-b${String(i).padStart(2, '0')}`);
/** Written with continuous backup on, up to revision R (with AFTER_R[0]); the rest of AFTER_R and a delete come after R. */
const CONTINUOUS = Array.from({ length: 5 }, (_, i) => `key-c${i}`);
const AFTER_R = Array.from({ length: 4 }, (_, i) => `key-d${i}`);

interface KubeEvent { reason: string; message: string; type: string }
interface AgentDeployment { metadata: { name: string; ownerReferences: object[] }; spec: { replicas: number } }

describe('k8s: backups to an S3-compatible store, and a restore after the namespace is gone', function () {
  this.timeout(240_000);
  const op = useOperator(NS, { namespaces: [NS2] });
  let s3: S3Server;

  const kubectl = (args: string[], input?: string) => op.tb.kubectl(args, input);
  const get = async (ns: string, name: string): Promise<StoredSvcCluster> => JSON.parse(await kubectl(['-n', ns, 'get', 'svcc', name, '-o', 'json'])) as StoredSvcCluster;
  const events = async (ns: string, name: string): Promise<KubeEvent[]> =>
    (JSON.parse(await kubectl(['-n', ns, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: KubeEvent[] }).items;
  const secret = (ns: string, secretAccessKey: string) => kubectl(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3-creds', namespace: ns }, stringData: { accessKeyId: s3.accessKeyId, secretAccessKey },
  }));
  const dest = () => ({ endpoint: s3.endpoint, bucket: BUCKET, prefix: PREFIX, region: s3.region, forcePathStyle: true, credentialsSecret: 's3-creds' });
  const apply = (ns: string, name: string, spec: object) => kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: ns }, spec }));
  const member = (ns: string, cluster: string) => `http://${cluster}-0.${cluster}.${ns}.svc:2379`;
  /** Writes k=v-k; resolves with the revision of the write. */
  const put = async (k: string): Promise<number> => {
    const r = await postJson(`${member(NS, 'kv')}/v3/kv/put`, { key: b64(k), value: b64(`v-${k}`) });
    expect(r.status).to.equal(200);
    return Number((r.body.header as { revision: string }).revision);
  };
  const del = async (k: string): Promise<number> => {
    const r = await postJson(`${member(NS, 'kv')}/v3/kv/deleterange`, { key: b64(k) });
    expect(r.status).to.equal(200);
    return Number((r.body.header as { revision: string }).revision);
  };
  /** The delta segments of kv in the bucket. */
  const segments = (): SegmentRef[] => {
    try {
      return readdirSync(join(s3.root, BUCKET, PREFIX, 'kv', 'delta')).map((f) => parseDeltaKey(`${PREFIX}/kv/delta/${f}`)).filter((x): x is SegmentRef => x !== undefined);
    } catch {
      return [];
    }
  };
  let atR = 0;
  const readKeys = async (ns: string, cluster: string): Promise<string[]> => {
    const a = await postJson(`${member(ns, cluster)}/v3/kv/range`, { key: b64('key-'), range_end: b64('key.') });
    return ((a.body.kvs ?? []) as Array<{ key: string; value: string }>).map((kv) => `${unb64(kv.key)}=${unb64(kv.value)}`);
  };
  /** The objects of kv's folder in the bucket (the posix backend keeps each as a file). */
  const objects = (): string[] => {
    try {
      return readdirSync(join(s3.root, BUCKET, PREFIX, 'kv', 'full')).sort();
    } catch {
      return [];
    }
  };
  const manifests = (): FullManifest[] => objects().filter((o) => o.endsWith('.json')).map((o) => JSON.parse(readFileSync(join(s3.root, BUCKET, PREFIX, 'kv', 'full', o), 'utf8')) as FullManifest);
  const podFacts = async () => kubectl(['-n', NS, 'get', 'pod', 'kv-0', '-o', 'jsonpath={.metadata.uid} {.status.containerStatuses[0].restartCount}']);

  before(async () => {
    // on the node's bridge address: the pods' own subnet, so Jobs reach it; nothing routes it off the machine
    s3 = await startS3Server({ host: op.tb.node.dnsIp, buckets: [BUCKET] });
  });

  after(async () => {
    await s3?.stop();
  });

  it('a wrong credential fails the on-demand backup: condition and Warning Event name the destination and the cause, the cluster untouched', async () => {
    await secret(NS, 'not-the-secret-key');
    await apply(NS, 'kv', { version: '3.5.21', replicas: 1, backup: { keep: 3, destinations: [{ name: 'offsite', s3: dest() }] } });
    await waitFor('kv Running', async () => ((await get(NS, 'kv')).status?.phase === 'Running' ? true : undefined), 150_000, 1000);
    for (const k of BEFORE) await put(k);
    const pod = await podFacts();
    expect(await backupNowMain(['backup', 'kv', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`, '--token=req-1'], () => undefined, 'kubectl svc backup')).to.equal(0);
    const st = await waitFor('the classified failure', async () => {
      const s = (await get(NS, 'kv')).status;
      return s?.conditions?.find((c) => c.type === 'BackupReady' && c.status === 'False' && c.reason === 'DestinationCredentialsRefused') ? s : undefined;
    }, 120_000, 500);
    const cond = st.conditions!.find((c) => c.type === 'BackupReady')!;
    expect(cond.message).to.contain(`"offsite" (s3://${BUCKET}/${PREFIX} at ${s3.endpoint})`).and.to.contain('the credentials were refused').and.to.contain('credentialsSecret');
    const ev = (await events(NS, 'kv')).find((e) => e.reason === 'DestinationCredentialsRefused');
    expect(ev?.type).to.equal('Warning');
    expect(ev?.message).to.contain('"offsite"');
    expect(st.backups?.lastRequest).to.not.equal('req-1');
    expect(objects()).to.deep.equal([]);
    expect(await podFacts()).to.equal(pod);
    expect(st.phase).to.equal('Running');
  });

  it('the Secret fixed: the retried on-demand backup and a scheduled one land in the bucket with their manifests', async () => {
    await secret(NS, s3.secretAccessKey);
    await waitFor('req-1 taken', async () => ((await get(NS, 'kv')).status?.backups?.lastRequest === 'req-1' ? true : undefined), 150_000, 1000);
    const st = (await get(NS, 'kv')).status!;
    expect(st.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'True' });
    const first = manifests();
    expect(first).to.have.length(1);
    expect(first[0]).to.include({ cluster: 'kv', member: 'kv-0', backupKind: 'on-demand', release: '3.5.21' });
    expect(first[0].hashKV).to.be.a('number');
    const od = st.backups!.items!.find((x) => x.kind === 'on-demand')!;
    expect(first[0]).to.include({ revision: od.revision, sha256: od.sha256, size: od.size });
    // the object is the reference's snapshot format: the database, then its sha256
    const db = readFileSync(join(s3.root, BUCKET, PREFIX, 'kv', first[0].snapshot));
    expect(db.length).to.equal(first[0].size + 32);
    expect(createHash('sha256').update(db.subarray(0, first[0].size)).digest('hex')).to.equal(first[0].sha256);

    for (const k of AFTER) await put(k);
    await kubectl(['-n', NS, 'patch', 'svcc', 'kv', '--type=merge', '-p', JSON.stringify({ spec: { backup: { schedule: '*/5 * * * * *' } } })]);
    const sched = await waitFor('a scheduled backup in the bucket', async () => manifests().find((m) => m.backupKind === 'scheduled'), 120_000, 500);
    await kubectl(['-n', NS, 'patch', 'svcc', 'kv', '--type=json', '-p', '[{"op":"remove","path":"/spec/backup/schedule"}]']);
    expect(sched.revision).to.be.at.least(first[0].revision + AFTER.length);
    expect(manifests().length).to.be.at.most(3); // keep: 3
  });

  it('kubectl svc backups lists the restore points with the oldest and newest restorable revision and time', async () => {
    const out: string[] = [];
    expect(await kubeBackupsMain(['backups', 'kv', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`, '--output', 'json'], (s) => out.push(s))).to.equal(0);
    const l = (JSON.parse(out.join('')) as { cluster: string; destinations: Array<{ name: string; error: string | null; oldest: { revision: number; time: string }; newest: { revision: number; time: string }; points: Array<{ revision: number; key: string }> }> });
    expect(l.cluster).to.equal('kv');
    expect(l.destinations).to.have.length(1);
    const d = l.destinations[0];
    expect(d.error).to.equal(null);
    const ms = manifests().sort((a, b) => a.revision - b.revision);
    expect(d.points.map((p) => p.revision)).to.deep.equal(ms.map((m) => m.revision));
    expect(d.oldest).to.deep.equal({ revision: ms[0].revision, time: ms[0].time });
    expect(d.newest).to.deep.equal({ revision: ms.at(-1)!.revision, time: ms.at(-1)!.time });
    const text: string[] = [];
    expect(await kubeBackupsMain(['backups', 'kv', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`], (s) => text.push(s))).to.equal(0);
    expect(text.join('')).to.match(new RegExp(`^"offsite" \\(s3://${BUCKET}/${PREFIX} at ${s3.endpoint.replace(/[.]/g, '\\.')}\\), cluster kv: restore points from revision ${ms[0].revision} `));
    expect(text.join('')).to.contain('REVISION').and.to.contain(ms.at(-1)!.snapshot);
  });

  it('restore drills (kubectl svc verify): the claim\'s backup and the bucket\'s newest point pass; that object corrupted, the next drill fails naming it', async () => {
    const verify = async (token: string) => {
      const out: string[] = [];
      const code = await backupNowMain(['verify-now', 'kv', '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`, `--token=${token}`, '--wait=150'], (x) => out.push(x), 'kubectl svc verify');
      return { code, out: out.join('') };
    };
    // a scheduled backup Job still running when the schedule was removed lands first: the newest point must hold still
    let seen = -1;
    await waitFor('no backup landing any more', async () => {
      const n = manifests().length;
      const still = n === seen;
      seen = n;
      return still ? true : undefined;
    }, 90_000, 6000);
    const newest = manifests().sort((a, b) => a.revision - b.revision).at(-1)!;
    const ok = await verify('s3-drill-1');
    expect(ok.code, ok.out).to.equal(0);
    expect(ok.out, ok.out).to.contain(`restored s3://${BUCKET}/${PREFIX}/kv/${newest.snapshot} into a scratch member: KV hash at revision ${newest.revision}`);
    const file = join(s3.root, BUCKET, PREFIX, 'kv', newest.snapshot);
    const original = readFileSync(file);
    const bad = Buffer.from(original);
    bad[200] ^= 0xff;
    writeFileSync(file, bad);
    try {
      const failed = await verify('s3-drill-2');
      expect(failed.code, failed.out).to.equal(1);
      const v = (await get(NS, 'kv')).status!.backups!.lastVerified!;
      expect(v).to.include({ result: 'Failed', location: `s3://${BUCKET}/${PREFIX}/kv/${newest.snapshot}` });
      expect(v.message).to.match(/is corrupt: its sha256 \S+ does not match its manifest's/);
    } finally {
      writeFileSync(file, original);
    }
  });

  it('continuous on: the agent\'s Deployment (owned by kv) writes delta segments under a writer, status.backups.continuousRevision follows; off: the Deployment is gone', async () => {
    const uid = (await get(NS, 'kv')).metadata.uid;
    await kubectl(['-n', NS, 'patch', 'svcc', 'kv', '--type=merge', '-p', JSON.stringify({ spec: { backup: { continuous: true } } })]);
    const dep = await waitFor('the agent Deployment', async () => {
      const out = await kubectl(['-n', NS, 'get', 'deployments', '-o', 'json']);
      return (JSON.parse(out) as { items: AgentDeployment[] }).items.find((d) => d.metadata.name === 'kv-backup-agent');
    }, 60_000, 500);
    expect(dep.metadata.ownerReferences).to.deep.include({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', name: 'kv', uid, controller: true, blockOwnerDeletion: true });
    expect(dep.spec.replicas).to.equal(1);
    // the writer: keys up to revision R (the restore below asks for it), then more writes and a delete after R
    for (const k of CONTINUOUS) await put(k);
    atR = await put(AFTER_R[0]);
    for (const k of AFTER_R.slice(1)) await put(k);
    const last = await del(BEFORE[0]);
    const segs = await waitFor(`segments up to revision ${last}`, async () => {
      const s = segments();
      return s.length > 0 && Math.max(...s.map((x) => x.toRevision)) >= last ? s : undefined;
    }, 90_000, 500);
    expect(Math.min(...segs.map((x) => x.fromRevision)), 'the segments follow the newest full snapshot').to.be.at.most(Math.max(...manifests().map((m) => m.revision)) + 1);
    const st = await waitFor('status.backups.continuousRevision', async () => {
      const b = (await get(NS, 'kv')).status?.backups;
      return (b?.continuousRevision ?? 0) >= last ? b : undefined;
    }, 40_000, 500);
    expect(Date.parse(st!.continuousTime!)).to.be.above(Date.now() - 120_000);
    await kubectl(['-n', NS, 'patch', 'svcc', 'kv', '--type=json', '-p', '[{"op":"replace","path":"/spec/backup/continuous","value":false}]']);
    await waitFor('the agent Deployment gone', async () => ((await kubectl(['-n', NS, 'get', 'deployments', '-o', 'name'])).includes('kv-backup-agent') ? undefined : true), 30_000, 500);
  });

  it('the namespace deleted, a new SvcCluster elsewhere is created from the bucket at revision R with exactly its keys (segments replayed); a revision not covered is refused before anything is created', async () => {
    await kubectl(['delete', 'namespace', NS, '--wait=true', '--timeout=120s']);
    expect(objects().length).to.be.at.least(4);
    await secret(NS2, s3.secretAccessKey);
    const range = manifests().sort((a, b) => a.revision - b.revision);
    const source = { s3: dest() };
    // before every restore point: refused with the range, nothing of it created
    await apply(NS2, 'early', { version: '3.5.21', replicas: 1, restore: { source, revision: 1 } });
    const refused = await waitFor('the refusal', async () => {
      const s = (await get(NS2, 'early')).status;
      return s?.conditions?.find((c) => c.type === 'BackupReady' && c.reason === 'RestoreNotCovered') ? s : undefined;
    }, 60_000, 500);
    expect(refused.lastError).to.contain('does not cover revision 1').and.to.contain(`restore points from revision ${range[0].revision} (${range[0].time}) to revision ${range.at(-1)!.revision}`);
    expect((await events(NS2, 'early')).find((e) => e.reason === 'RestoreNotCovered')?.type).to.equal('Warning');
    expect(await kubectl(['-n', NS2, 'get', 'statefulsets,pvc,jobs', '-o', 'name'])).to.equal('');
    await kubectl(['-n', NS2, 'delete', 'svcc', 'early', '--wait=true']);

    // revision R is after the last full snapshot: the restore Job replays the delta segments up to it
    expect(atR).to.be.above(range.at(-1)!.revision);
    await apply(NS2, 'kv-restored', { version: '3.5.21', replicas: 1, restore: { source, revision: atR } });
    await waitFor('kv-restored Running', async () => ((await get(NS2, 'kv-restored')).status?.phase === 'Running' ? true : undefined), 150_000, 1000);
    expect(await readKeys(NS2, 'kv-restored')).to.deep.equal([...BEFORE, ...AFTER, ...CONTINUOUS, AFTER_R[0]].sort().map((k) => `${k}=v-${k}`));
    const r = await postJson(`${member(NS2, 'kv-restored')}/v3/kv/range`, { key: b64('key-'), range_end: b64('key.'), count_only: true });
    expect(Number((r.body.header as { revision: string }).revision), 'the restored revision').to.equal(atR);
    const restored = (await events(NS2, 'kv-restored')).find((e) => e.reason === 'Restored');
    expect(restored?.message).to.contain(`s3://${BUCKET}/${PREFIX}`).and.to.contain(`at revision ${atR}`);
    // versitygw on the bridge changed no rule of the host's network
    await op.tb.node.checkNetwork('after the object-store backups');
  });
});
