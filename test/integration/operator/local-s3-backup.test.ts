// Backups to object storage with the local runtime, against a real S3-compatible server (versitygw on loopback,
// harness/s3-server.ts) and real svc members, through the command line: with a writer running, on-demand and
// scheduled full snapshots land in the bucket with their manifests and the reference's etcdutl reads them; a restore
// to a revision and to a time picks the newest full snapshot at or before it and the new cluster holds exactly the
// keyspace at that snapshot's revision (checked against a model the test keeps from the writer's answers); retention
// removes exactly the oldest; bad input (a point not covered, wrong credentials, an unreachable endpoint, a missing
// bucket, a corrupt or a foreign object) is refused or reported naming the destination and the cause, the cluster
// untouched.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import type { RestorePoint } from '../../../operator/backup/restore-points.js';
import { S3Store } from '../../../operator/backup/destinations/index.js';
import { startS3Server, type S3Server } from '../../../harness/s3-server.js';
import { etcdctl, ref35 } from '../../../harness/reference-cluster.js';
import { closedPipeCli, operatorCli } from './operator-cli.js';
import { KeyspaceModel } from './keyspace-model.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BUCKET = 'svc-backups';
const PREFIX = 'prod/kv';

interface Listing {
  cluster: string;
  destinations: Array<{ name: string; where: string; oldest: { revision: number; time: string } | null; newest: { revision: number; time: string } | null; points: RestorePoint[]; problems: string[]; error: string | null }>;
}

describe('operator local runtime: backups to an S3-compatible store and restores to a point', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-op-s3-'));
  const stateDir = join(dir, 'src');
  const secrets = join(dir, 'secrets');
  const env = { SVC_OPERATOR_SECRETS_DIR: secrets };
  const runtimes: LocalRuntime[] = [new LocalRuntime({ stateDir })];
  const model = new KeyspaceModel();
  let s3: S3Server;
  let client: Client;
  let writing = true;
  let writer: Promise<void> = Promise.resolve();

  const s3Yaml = (o: { endpoint?: string; bucket?: string; secret?: string } = {}) =>
    `{endpoint: "${o.endpoint ?? s3.endpoint}", bucket: ${o.bucket ?? BUCKET}, prefix: ${PREFIX}, region: us-east-1, forcePathStyle: true, credentialsSecret: ${o.secret ?? 's3creds'}}`;
  // a schedule only where a scheduled backup is wanted: each run of `local apply` or `local backup --wait` takes the
  // slot that passed (a failing one would be retried by the loop's own backoff)
  const manifest = (o: { secret?: string; endpoint?: string; bucket?: string; schedule?: boolean; keep?: number; auth?: string } = {}) => ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', 'metadata: {name: kv}', 'spec:', '  version: 3.5.21', '  replicas: 1',
    '  backup:', ...(o.schedule ? ['    schedule: "*/2 * * * * *"'] : []), ...(o.auth ? [`    credentialsSecret: ${o.auth}`] : []), `    keep: ${o.keep ?? 3}`, '    destinations:', `      - {name: offsite, s3: ${s3Yaml(o)}}`, ''].join('\n');
  const restoreManifest = (name: string, at: string) => ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', `metadata: {name: ${name}}`, 'spec:', '  version: 3.5.21', '  replicas: 1',
    '  restore:', `    source: {s3: ${s3Yaml()}}`, ...(at ? [`    ${at}`] : []), ''].join('\n');
  const apply = async (yaml: string, sd: string) => {
    const f = join(dir, `m-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(f, yaml);
    return operatorCli(['local', 'apply', '-f', f, '--state-dir', sd], env);
  };
  const listing = async (): Promise<Listing['destinations'][number]> => {
    const r = await operatorCli(['local', 'backups', '--state-dir', stateDir, '--output', 'json'], env);
    expect(r.code, r.out).to.equal(0);
    return (JSON.parse(r.out) as Listing).destinations[0];
  };
  /** The objects in the bucket under the cluster's folder (the posix backend keeps each as a file). */
  const objects = () => readdirSync(join(s3.root, BUCKET, PREFIX, 'kv', 'full')).sort();
  const keysOf = async (sd: string, rt: LocalRuntime) => {
    const c = await Client.connect({ endpoints: [`http://127.0.0.1:${rt.state()!.members[0].clientPort}`] });
    try {
      const kvs = (await c.get('w/', { prefix: true })).kvs;
      return { keys: kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`).sort(), c };
    } catch (e) {
      c.close();
      throw new Error(`reading ${sd}: ${(e as Error).message}`, { cause: e });
    }
  };

  before(async function () {
    s3 = await startS3Server({ buckets: [BUCKET] });
    mkdirSync(join(secrets, 's3creds'), { recursive: true });
    writeFileSync(join(secrets, 's3creds', 'accessKeyId'), `${s3.accessKeyId}\n`);
    writeFileSync(join(secrets, 's3creds', 'secretAccessKey'), `${s3.secretAccessKey}\n`);
    mkdirSync(join(secrets, 'wrong'), { recursive: true });
    writeFileSync(join(secrets, 'wrong', 'accessKeyId'), s3.accessKeyId);
    writeFileSync(join(secrets, 'wrong', 'secretAccessKey'), 'not-the-secret');
  });

  after(async function () {
    this.timeout(60_000);
    writing = false;
    await writer.catch(() => undefined);
    client?.close();
    for (const rt of runtimes) await rt.delete().catch(() => undefined);
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let pointA: RestorePoint;
  let pointB: RestorePoint;
  /** The restore point after A: a restore to the revision just before it picks A. */
  let afterA: RestorePoint;

  it('on-demand and scheduled full snapshots land in the bucket with manifests, under a writer; etcdutl reads them', async () => {
    const created = await apply(manifest({ keep: 5 }), stateDir);
    expect(created.code, created.out).to.equal(0);
    client = await Client.connect({ endpoints: [`http://127.0.0.1:${runtimes[0].state()!.members[0].clientPort}`] });
    // the writer: one put after another, each answer's revision recorded in the model
    writer = (async () => {
      for (let i = 0; writing; i++) {
        const key = `w/${String(i).padStart(5, '0')}`;
        const r = await client.put(key, `v${i}`);
        model.record(Number(r.header.revision), key, `v${i}`);
        await sleep(5);
      }
    })();
    await sleep(300);
    const onDemand = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir], env);
    expect(onDemand.code, onDemand.out).to.equal(0);
    // the schedule's slots counted from the cluster's creation: one passed, the run takes the latest
    const scheduled = await apply(manifest({ keep: 5, schedule: true }), stateDir);
    expect(scheduled.code, scheduled.out).to.equal(0);
    expect(scheduled.out).to.match(/scheduled backup \(slot [0-9T:.-]+Z\) from leader kv-0/);

    const l = await listing();
    expect(l.error).to.equal(null);
    expect(l.problems).to.deep.equal([]);
    // the run may take two slots (one more passed while it took the first): the on-demand one first, then scheduled
    expect(l.points.map((p) => p.backupKind)).to.deep.equal(['on-demand', ...l.points.slice(1).map(() => 'scheduled')]);
    expect(l.points.length).to.be.within(2, 3);
    [pointA, pointB] = [l.points[0], l.points.at(-1)!];
    afterA = l.points[1];
    expect(pointB.revision).to.be.greaterThan(pointA.revision);
    expect(l.oldest).to.deep.equal({ revision: pointA.revision, time: pointA.time });
    expect(l.newest).to.deep.equal({ revision: pointB.revision, time: pointB.time });
    // exactly a snapshot and its manifest each, named by revision and time
    expect(objects()).to.deep.equal(l.points.flatMap((p) => [p.key, p.manifestKey].map((k) => k.slice(k.lastIndexOf('/') + 1))).sort());
    for (const p of l.points) {
      expect(p).to.include({ cluster: 'kv', member: 'kv-0', release: '3.5.21', format: 'svc.dev/backup/v1', kind: 'full' });
      expect(p.key).to.equal(`${PREFIX}/kv/full/${String(p.revision).padStart(20, '0')}-${p.time.replace(/[:.]/g, '-')}.db`);
      expect(p.hashKV).to.be.a('number');
      // the reference reads the object as it is in the bucket
      const st = await etcdctl(['snapshot', 'status', join(s3.root, BUCKET, p.key), '-w', 'json'], { bin: ref35('etcdutl') });
      expect(st.code, st.stderr).to.equal(0);
      expect((JSON.parse(st.stdout) as { revision: number }).revision).to.equal(p.revision);
    }
    const text = await operatorCli(['local', 'backups', '--state-dir', stateDir], env);
    expect(text.out).to.match(new RegExp(`"offsite" \\(s3://${BUCKET}/${PREFIX} at ${s3.endpoint}\\), cluster kv: restore points from revision ${pointA.revision} \\(${pointA.time}\\) to revision ${pointB.revision} \\(${pointB.time}\\), ${l.points.length} in all`));
    expect(text.out).to.match(/REVISION\s+TIME\s+KIND\s+MEMBER\s+RELEASE\s+BYTES\s+HASHKV\s+OBJECT/);
    // `local backups | head -2`: the reader goes away, the listing ends quietly (server/cli/closed-pipe.ts)
    const piped = await closedPipeCli('svc-operator', ['local', 'backups', '--state-dir', stateDir], env);
    expect(piped.stderr).to.equal('');
    expect(piped.code).to.equal(141);
  });

  it('restores to a revision and to a time: the newest full snapshot at or before it, exactly its keyspace', async () => {
    // deletes and a compaction after B do not reach a restore of A or B
    for (const k of ['w/00000', 'w/00001']) {
      const r = await client.delete(k);
      model.record(Number(r.header.revision), k);
    }
    await client.compact(pointB.revision);
    writing = false;
    await writer;
    const cases: Array<[string, string, RestorePoint]> = [
      ['ra', `revision: ${afterA.revision - 1}`, pointA],
      ['rb', `time: "${pointB.time}"`, pointB],
    ];
    for (const [name, at, want] of cases) {
      const sd = join(dir, name);
      const rt = new LocalRuntime({ stateDir: sd });
      runtimes.push(rt);
      const r = await apply(restoreManifest(name, at), sd);
      expect(r.code, r.out).to.equal(0);
      expect(r.out).to.include(`restoring from ${want.key}`);
      const { keys, c } = await keysOf(sd, rt);
      try {
        expect(keys.length, name).to.be.greaterThan(0);
        expect(keys, `${name}: the keyspace at revision ${want.revision}`).to.deep.equal(model.keyspace(want.revision));
        // the restored member's KV hash at the backed-up revision is the one recorded at backup time
        const h = await c.hashKV(undefined, want.revision);
        expect(h.hash, `${name}: HashKV at ${want.revision}`).to.equal(want.hashKV);
      } finally {
        c.close();
      }
      // the downloaded restore point is not kept (the bucket has it)
      expect(existsSync(join(sd, 'restore'))).to.equal(false);
      await rt.delete();
    }
  });

  it('a point before every restore point is refused with the covered range, before anything is created', async () => {
    const sd = join(dir, 'early');
    const r = await apply(restoreManifest('early', `revision: ${pointA.revision - 1}`), sd);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.include(`cannot create early: "restore source" (s3://${BUCKET}/${PREFIX} at ${s3.endpoint}) (cluster kv) does not cover revision ${pointA.revision - 1}: it has restore points from revision ${pointA.revision} (${pointA.time}) to revision`);
    expect(existsSync(join(sd, 'state.json'))).to.equal(false);
    // the range, before a restore, from the manifest alone (no cluster)
    const f = join(dir, 'early.yaml');
    writeFileSync(f, restoreManifest('early', ''));
    const l = await operatorCli(['local', 'backups', '-f', f, '--state-dir', sd, '--output', 'json'], env);
    expect(l.code, l.out).to.equal(0);
    const got = (JSON.parse(l.out) as Listing).destinations;
    expect(got.map((d) => [d.name, d.oldest?.revision, d.points.at(-1)?.key])).to.deep.equal([['restore source', pointA.revision, pointB.key]]);
  });

  it('retention keeps the newest spec.backup.keep full snapshots: exactly the oldest go', async () => {
    expect((await apply(manifest(), stateDir)).code).to.equal(0);
    const had = (await listing()).points;
    for (let i = 0; i < 2; i++) {
      await client.put('w/more', `m${i}`);
      const r = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir], env);
      expect(r.code, r.out).to.equal(0);
    }
    const l = await listing();
    expect(l.points).to.have.length(3);
    expect(l.points.map((p) => p.backupKind)).to.deep.equal(['scheduled', 'on-demand', 'on-demand']);
    // of the points there before, the newest (B) stays; the others are gone, snapshot and manifest
    expect(had.at(-1)!.key).to.equal(pointB.key);
    expect(l.points[0].key).to.equal(pointB.key);
    expect(objects()).to.deep.equal(l.points.flatMap((p) => [p.key, p.manifestKey].map((k) => k.slice(k.lastIndexOf('/') + 1))).sort());
  });

  it('bad input names the destination and the cause: wrong credentials, an unreachable endpoint, a missing bucket; the cluster is untouched', async () => {
    const before = (await client.get('w/', { prefix: true, countOnly: true })).count;
    const stored = objects();
    // the members are as applied; the apply says on the spot that the backups cannot be written, and why
    const wrong = await apply(manifest({ secret: 'wrong' }), stateDir);
    expect(wrong.code, wrong.out).to.equal(1);
    expect(wrong.out).to.match(/\nsvc-operator: kv is as applied, but its backups cannot be written: destination "offsite" \(s3:\/\/svc-backups\/prod\/kv at http:\/\/127\.0\.0\.1:\d+\): the credentials were refused \(SignatureDoesNotMatch: .*\); check the access key and secret in credentialsSecret .*; fix the destination, then run `svc-operator local apply` again \(a backup due or asked for is taken then\)\n$/);
    const failed = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir], env);
    expect(failed.code, failed.out).to.equal(1);
    // told once, at once: no retries against a store that refuses
    expect(failed.out.match(/step backup failed/g), failed.out).to.have.length(1);
    expect(failed.out).to.match(/step backup failed: destination "offsite" \(s3:\/\/svc-backups\/prod\/kv at http:\/\/127\.0\.0\.1:\d+\): the credentials were refused \(SignatureDoesNotMatch/);
    const status = await operatorCli(['local', 'status', '--state-dir', stateDir], env);
    expect(status.out).to.match(/last backup failed: destination "offsite" .*the credentials were refused.*; it is tried again by the next `svc-operator local apply`/);
    expect(objects()).to.deep.equal(stored); // nothing written, nothing removed
    // the request stays open: the next run with working credentials answers it
    const mended = await apply(manifest(), stateDir);
    expect(mended.code, mended.out).to.equal(0);
    expect(mended.out).to.match(/backup: on-demand backup \(request/);
    expect((await operatorCli(['local', 'status', '--state-dir', stateDir], env)).out).to.not.match(/last backup failed/);

    const unreachable = await apply(manifest({ endpoint: 'http://127.0.0.1:9' }), stateDir);
    expect(unreachable.code, unreachable.out).to.equal(1);
    expect(unreachable.out).to.match(/\nsvc-operator: kv is as applied, but its backups cannot be written: destination "offsite" \(s3:\/\/svc-backups\/prod\/kv at http:\/\/127\.0\.0\.1:9\): the endpoint cannot be reached \(ECONNREFUSED.*; fix the destination, then run `svc-operator local apply` again \(a backup due or asked for is taken then\)\n$/);
    const down = await operatorCli(['local', 'backups', '--state-dir', stateDir], env);
    expect(down.code, down.out).to.equal(1);
    expect(down.out).to.match(/destination "offsite" \(s3:\/\/svc-backups\/prod\/kv at http:\/\/127\.0\.0\.1:9\): the endpoint cannot be reached \(ECONNREFUSED/);

    const nobucketApply = await apply(manifest({ bucket: 'no-such-bucket' }), stateDir);
    expect(nobucketApply.code, nobucketApply.out).to.equal(1);
    expect(nobucketApply.out).to.match(/svc-operator: kv is as applied, but its backups cannot be written: destination "offsite" \(s3:\/\/no-such-bucket\/prod\/kv .*\): the bucket does not exist/);
    const nobucket = await operatorCli(['local', 'backups', '--state-dir', stateDir], env);
    expect(nobucket.code, nobucket.out).to.equal(1);
    expect(nobucket.out, nobucket.out).to.match(/destination "offsite" \(s3:\/\/no-such-bucket\/prod\/kv .*\): the bucket does not exist .*; create it, or fix spec\.backup\.destinations\[\]\.s3\.bucket\n/);
    // a restore source's own bucket is blamed where it is written
    const sourceFile = join(dir, 'no-bucket-source.yaml');
    writeFileSync(sourceFile, restoreManifest('nb', '').replace(`bucket: ${BUCKET}`, 'bucket: no-such-bucket'));
    const nosource = await operatorCli(['local', 'backups', '-f', sourceFile, '--state-dir', join(dir, 'nb')], env);
    expect(nosource.code, nosource.out).to.equal(1);
    expect(nosource.out, nosource.out).to.match(/destination "restore source" \(s3:\/\/no-such-bucket\/prod\/kv at http:\/\/127\.0\.0\.1:\d+\): the bucket does not exist .*; create it, or fix spec\.restore\.source\.s3\.bucket\n/);
    // a credentials Secret that is not there: the folder it was looked for in, by its name
    const secretFile = join(dir, 'no-secret.yaml');
    writeFileSync(secretFile, manifest({ secret: 'nosuch' }));
    const nosecret = await operatorCli(['local', 'backups', '-f', secretFile, '--state-dir', join(dir, 'ns')], env);
    expect(nosecret.code, nosecret.out).to.equal(1);
    expect(nosecret.out).to.include(`credentialsSecret nosuch has no accessKeyId and secretAccessKey in the folder ${join(secrets, 'nosuch')}/ (SVC_OPERATOR_SECRETS_DIR); create it with both keys`);

    expect((await apply(manifest(), stateDir)).code).to.equal(0);
    expect((await client.get('w/', { prefix: true, countOnly: true })).count).to.equal(before);
  });

  it('a drill restores the bucket\'s newest point and passes; once it is corrupt the drill fails and a restore from it is refused before anything is created; a foreign manifest is listed as not a restore point', async () => {
    const newest = (await listing()).points.at(-1)!;
    const drill = () => operatorCli(['local', 'verify-backup', '--wait', '--state-dir', stateDir], env);
    const passed = await drill();
    expect(passed.code, passed.out).to.equal(0);
    expect(passed.out).to.contain(`${newest.key} into a scratch member: KV hash at revision ${newest.revision}`);
    const file = join(s3.root, BUCKET, newest.key);
    const bytes = readFileSync(file);
    bytes[200] ^= 0xff;
    writeFileSync(file, bytes);
    const failed = await drill();
    expect(failed.code, failed.out).to.equal(1);
    expect(failed.out, failed.out).to.match(new RegExp(`restoring s3://${BUCKET}/${newest.key.replace(/[.]/g, '[.]')} failed: .*is corrupt: its sha256`));
    const sd = join(dir, 'corrupt');
    const r = await apply(restoreManifest('corrupt', ''), sd);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.match(new RegExp(`cannot create corrupt: destination "restore source" .*: ${newest.key.replace(/[.]/g, '[.]')} is corrupt: its sha256 \\S+ does not match its manifest's ${newest.sha256}; pick another restore point`));
    expect(existsSync(join(sd, 'state.json'))).to.equal(false);

    const store = new S3Store({ name: 'test', spec: { bucket: BUCKET, endpoint: s3.endpoint, forcePathStyle: true }, credentials: s3 });
    await store.put(`${PREFIX}/kv/full/notes.json`, Buffer.from('{"hello": "world"}'));
    store.close();
    const l = await listing();
    expect(l.points).to.have.length(3);
    expect(l.problems).to.deep.equal([`${PREFIX}/kv/full/notes.json is not an svc-operator manifest (no format "svc.dev/backup/v1")`]);
  });

  it('a file larger than a part goes up in parts and reads back whole; one into a missing bucket fails naming the bucket', async () => {
    const file = join(dir, 'large.db');
    const bytes = randomBytes(12 * 1024 * 1024 + 123);
    writeFileSync(file, bytes);
    const store = new S3Store({ name: 'test', spec: { bucket: BUCKET, endpoint: s3.endpoint, forcePathStyle: true }, credentials: s3, partBytes: 5 * 1024 * 1024 });
    try {
      await store.putFile('parts/large.db', file);
      const back = await store.get('parts/large.db');
      expect(createHash('sha256').update(back).digest('hex')).to.equal(createHash('sha256').update(bytes).digest('hex'));
      await store.delete('parts/large.db');
    } finally {
      store.close();
    }
    const missing = new S3Store({ name: 'test', spec: { bucket: 'no-such-bucket', endpoint: s3.endpoint, forcePathStyle: true }, credentials: s3, partBytes: 5 * 1024 * 1024 });
    try {
      await missing.putFile('parts/large.db', file).then(() => expect.fail('uploaded into a missing bucket'), (e: Error) => expect(e.message).to.match(/the bucket does not exist/));
    } finally {
      missing.close();
    }
    rmSync(file);
  });

  it('a cluster with authentication on is backed up as the user of spec.backup.credentialsSecret; without it the failure says so', async () => {
    const ctl = (args: string[]) => etcdctl(args, { bin: ref35('etcdctl'), endpoints: [`127.0.0.1:${runtimes[0].state()!.members[0].clientPort}`] });
    for (const args of [['user', 'add', 'root:rootpw'], ['role', 'add', 'root'], ['user', 'grant-role', 'root', 'root'], ['auth', 'enable']]) {
      const r = await ctl(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
    }
    const refused = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir], env);
    expect(refused.code, refused.out).to.equal(1);
    expect(refused.out).to.match(/snapshot of kv-0 \(http:\/\/127\.0\.0\.1:\d+\) failed: etcdserver: user name is empty; authentication is on: name a Secret with the username and password of a user with the root role in spec.backup.credentialsSecret/);

    mkdirSync(join(secrets, 'kvroot'), { recursive: true });
    writeFileSync(join(secrets, 'kvroot', 'username'), 'root\n');
    writeFileSync(join(secrets, 'kvroot', 'password'), 'rootpw\n');
    const had = (await listing()).points.map((p) => p.key);
    // the open request is answered by this run, as the root user
    const taken = await apply(manifest({ auth: 'kvroot' }), stateDir);
    expect(taken.code, taken.out).to.equal(0);
    expect(taken.out).to.match(/backup: on-demand backup \(request/);
    const now = (await listing()).points;
    const added = now.filter((p) => !had.includes(p.key));
    expect(added).to.have.length(1);
    expect(added[0].hashKV).to.be.a('number');
  });
});
