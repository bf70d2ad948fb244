// `svc-operator backup` and `svc-operator restore` (what the operator's Jobs run) against real svc processes:
// snapshots into a folder with pruning and the record a Job leaves as its termination message (with the member's KV
// hash at its revision), then a new 3-member cluster restored from one of them that serves every key; a corrupt or missing snapshot is refused
// before any data dir is touched, and a re-run restore keeps what an earlier run restored. With --s3 (what the
// Kubernetes Jobs run for object-store destinations) against a real versitygw on loopback: a wrong credential is a
// failed Job whose record names the destination and the cause, nothing uploaded; the right one uploads the snapshot
// with its manifest; a restore downloads the restore point by its manifest, checks it and restores from it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { BackupRecord, JobError, RestoreRecord, VerifyRecord } from '../../../operator/api/job-records.js';
import { secretEnvName } from '../../../operator/backup/destinations/index.js';
import type { FullManifest } from '../../../operator/backup/restore-points.js';
import { startS3Server } from '../../../harness/s3-server.js';
import { jobMain } from '../../../operator/cli/backup.js';
import { operatorCli } from './operator-cli.js';
import { freePorts } from '../../../harness/ports.js';
import { waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { makeTestPki } from '../../../harness/tls.js';
import { b64, postJson, spawnSvc, startSvcCluster, unb64, type SvcCluster } from '../../../harness/svc-cluster.js';

describe('operator: svc-operator backup and restore (the Job commands)', function () {
  this.timeout(120_000);
  let src: SvcCluster;
  let dir: string;
  const procs: LoggedProcess[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-op-backup-'));
    src = await startSvcCluster({ size: 1 });
    for (let i = 0; i < 20; i++) await src.put(0, `k${i}`, `v${i}`);
  });

  after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL', 5000)));
    await src?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const backupArgs = (out: string, file: string, record: string, keep = 2) =>
    ['backup', `--endpoint=${src.members[0].clientURL}`, '--member=m0', `--dir=${out}`, `--file=${file}`, `--keep=${keep}`, `--record=${record}`];

  it('writes the snapshot, its record (revision, size, sha256) and keeps the newest N files', async () => {
    const out = join(dir, 'ns', 'kv');
    const record = join(dir, 'record-1');
    for (const [i, f] of ['a-1.db', 'a-2.db', 'a-3.db'].entries()) {
      expect(await jobMain(backupArgs(out, f, record))).to.equal(0);
      // mtimes one second apart: pruning goes by age
      utimesSync(join(out, f), 1_700_000_000 + i, 1_700_000_000 + i);
    }
    expect(readdirSync(out).sort()).to.deep.equal(['a-2.db', 'a-3.db']);
    const rec = JSON.parse(readFileSync(record, 'utf8')) as BackupRecord;
    expect(rec).to.include({ file: 'a-3.db', member: 'm0' });
    expect(rec.pruned).to.deep.equal(['a-1.db']);
    expect(rec.revision).to.be.at.least(21);
    const bytes = readFileSync(join(out, 'a-3.db'));
    expect(bytes.length).to.equal(rec.size + 32);
    expect(createHash('sha256').update(bytes.subarray(0, rec.size)).digest('hex')).to.equal(rec.sha256);
    expect(Buffer.byteLength(readFileSync(record))).to.be.below(4096);
    // the member's KV hash at the recorded revision, which a restore drill compares (the gateway's HashKV)
    const hk = await postJson(`${src.members[0].clientURL}/v3/maintenance/hashkv`, { revision: String(rec.revision) });
    expect(rec.kvHash).to.equal(Number(hk.body.hash));
    expect(rec.compactRevision).to.equal(Number(hk.body.compact_revision ?? 0));
  });

  it('a member that does not answer: exit 1, the reason in the record, no file', async () => {
    const [port] = await freePorts(1);
    const out = join(dir, 'none');
    const record = join(dir, 'record-2');
    const args = ['backup', `--endpoint=http://127.0.0.1:${port}`, '--member=m0', `--dir=${out}`, '--file=x.db', `--record=${record}`];
    expect(await jobMain(args)).to.equal(1);
    expect((JSON.parse(readFileSync(record, 'utf8')) as { error: string }).error).to.match(/snapshot of m0 .* failed/);
    expect(readdirSync(out)).to.deep.equal([]);
    expect(await jobMain(['backup', '--endpoint=x', '--member=m0', `--dir=${out}`, '--file=../x.db'])).to.equal(2);
  });

  it('snapshots a TLS member with --cacert/--cert/--key; refuses half a set of TLS files', async () => {
    const pkiDir = join(dir, 'pki');
    mkdirSync(pkiDir);
    const pki = makeTestPki(pkiDir);
    const [c, p] = await freePorts(2);
    const url = `https://127.0.0.1:${c}`;
    const member = spawnSvc([
      '--name=t0', `--data-dir=${join(dir, 'tls-data')}`, `--listen-client-urls=${url}`, `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${p}`, `--initial-advertise-peer-urls=http://127.0.0.1:${p}`, `--initial-cluster=t0=http://127.0.0.1:${p}`,
      `--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth=true',
    ], { logFile: join(dir, 'tls-member.log'), name: 't0' });
    procs.push(member);
    await waitForHttp(`${url}/health`, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey, process: member });
    const out = join(dir, 'tls-backups');
    const record = join(dir, 'record-tls');
    const args = ['backup', `--endpoint=${url}`, '--member=t0', `--dir=${out}`, '--file=t.db', `--record=${record}`];
    expect(await jobMain([...args, `--cacert=${pki.caFile}`, `--cert=${pki.clientCertFile}`, `--key=${pki.clientKeyFile}`])).to.equal(0);
    const rec = JSON.parse(readFileSync(record, 'utf8')) as BackupRecord;
    expect(rec.size).to.equal(readFileSync(join(out, 't.db')).length - 32);
    // without a client certificate the member refuses the stream
    expect(await jobMain([...args, '--file=u.db'])).to.equal(1);
    expect(await jobMain([...args, `--cacert=${pki.caFile}`])).to.equal(2);
    // a usage error ends the output (a Job that could not write its record is judged by its log's last lines)
    const usage = await operatorCli(['backup', `--endpoint=${url}`, '--member=t0', `--dir=${out}`, '--file=t.txt']);
    expect(usage.code, usage.out).to.equal(2);
    expect(usage.out.trim().split('\n').at(-1)).to.equal('svc-operator: --file must be a plain file name ending in .db');
  });

  it('restores every member of a new 3-member cluster from the snapshot; it serves every key', async () => {
    const snap = join(dir, 'ns', 'kv', 'a-3.db');
    const ports = await freePorts(6);
    const names = ['r0', 'r1', 'r2'];
    const peer = (i: number) => `http://127.0.0.1:${ports[3 + i]}`;
    const initial = names.map((n, i) => `${n}=${peer(i)}`).join(',');
    const dataDirs = names.map((n) => join(dir, 'pv', n, 'data'));
    const record = join(dir, 'record-3');
    const args = ['restore', `--snapshot=${snap}`, `--members=${names.map((n, i) => `${n}=${dataDirs[i]}`).join(',')}`, `--initial-cluster=${initial}`, '--initial-cluster-token=ns-restored', `--record=${record}`];
    expect(await jobMain(args)).to.equal(0);
    const rec = JSON.parse(readFileSync(record, 'utf8')) as RestoreRecord;
    expect(rec.members.map((m) => m.name)).to.deep.equal(names);
    expect(rec.members.every((m) => /^[0-9a-f]+$/.test(m.memberId!) && !m.skipped)).to.equal(true);
    expect(rec.clusterId).to.match(/^[0-9a-f]+$/);
    // a Job that runs again (its pod was lost after the work) finds its own work and keeps it
    expect(await jobMain(args)).to.equal(0);
    const again = JSON.parse(readFileSync(record, 'utf8')) as RestoreRecord;
    expect(again.members.every((m) => m.skipped)).to.equal(true);
    expect(again.clusterId).to.equal(rec.clusterId);

    for (const [i, n] of names.entries()) {
      const p = spawnSvc([
        `--name=${n}`, `--data-dir=${dataDirs[i]}`, `--listen-client-urls=http://127.0.0.1:${ports[i]}`, `--advertise-client-urls=http://127.0.0.1:${ports[i]}`,
        `--listen-peer-urls=${peer(i)}`, `--initial-advertise-peer-urls=${peer(i)}`, `--initial-cluster=${initial}`, '--initial-cluster-token=ns-restored', '--initial-cluster-state=new',
      ], { logFile: join(dir, `${n}.log`), name: n });
      procs.push(p);
    }
    for (let i = 0; i < 3; i++) await waitForHttp(`http://127.0.0.1:${ports[i]}/health`, { timeoutMs: 30_000 });
    for (let i = 0; i < 3; i++) {
      const a = await postJson(`http://127.0.0.1:${ports[i]}/v3/kv/range`, { key: b64('k'), range_end: b64('l') });
      const kvs = (a.body.kvs as Array<{ key: string; value: string }>).map((kv) => `${unb64(kv.key)}=${unb64(kv.value)}`).sort();
      expect(kvs, `member r${i}`).to.deep.equal(Array.from({ length: 20 }, (_, k) => `k${k}=v${k}`).sort());
    }
    const put = await postJson(`http://127.0.0.1:${ports[1]}/v3/kv/put`, { key: b64('after'), value: b64('restore') });
    expect(put.status).to.equal(200);
  });

  it('refuses a corrupt or missing snapshot before touching a data dir, and a data dir it did not restore', async () => {
    const good = readFileSync(join(dir, 'ns', 'kv', 'a-2.db'));
    const bad = Buffer.from(good);
    bad[100] ^= 0xff;
    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, bad);
    const target = join(dir, 'pv2', 'x0', 'data');
    const record = join(dir, 'record-4');
    const args = (snap: string, data = target) => ['restore', `--snapshot=${snap}`, `--members=x0=${data}`, '--initial-cluster=x0=http://127.0.0.1:1', '--initial-cluster-token=t', `--record=${record}`];
    expect(await jobMain(args(corrupt))).to.equal(1);
    expect((JSON.parse(readFileSync(record, 'utf8')) as { error: string }).error).to.match(/corrupt.*sha256/);
    expect(existsSync(target)).to.equal(false);
    expect(await jobMain(args(join(dir, 'nope.db')))).to.equal(1);
    expect((JSON.parse(readFileSync(record, 'utf8')) as { error: string }).error).to.contain('cannot read snapshot file');
    // a data dir with other data: refused, left as it was
    expect(await jobMain(args(join(dir, 'ns', 'kv', 'a-2.db'), src.members[0].dataDir))).to.equal(1);
    expect((JSON.parse(readFileSync(record, 'utf8')) as { error: string }).error).to.contain('refusing to overwrite');
  });

  it('--s3: a wrong credential fails naming the destination and the cause; the right one uploads with the manifest; restore --s3 downloads, checks and restores', async () => {
    const s3 = await startS3Server({ buckets: ['bkt1'] });
    const dests = JSON.stringify([{ name: 'offsite', s3: { endpoint: s3.endpoint, bucket: 'bkt1', prefix: 'p', forcePathStyle: true, credentialsSecret: 'creds' } }]);
    const env = (secret: string) => {
      process.env[secretEnvName('creds', 'accessKeyId')] = s3.accessKeyId;
      process.env[secretEnvName('creds', 'secretAccessKey')] = secret;
    };
    const out = join(dir, 's3', 'claim');
    const record = join(dir, 'record-s3');
    const args = [...backupArgs(out, 'b-1.db', record, 3), `--s3=${dests}`, '--cluster=kv', '--release=3.5.21', '--kind=on-demand'];
    try {
      env('wrong-secret');
      expect(await jobMain(args)).to.equal(1);
      const failed = JSON.parse(readFileSync(record, 'utf8')) as JobError;
      expect(failed, failed.error).to.include({ cause: 'CredentialsRefused', destination: `"offsite" (s3://bkt1/p at ${s3.endpoint})` });
      expect(failed.error).to.contain('the credentials were refused');
      expect(readdirSync(join(s3.root, 'bkt1'))).to.deep.equal([]);

      env(s3.secretAccessKey);
      expect(await jobMain(args)).to.equal(0);
      const rec = JSON.parse(readFileSync(record, 'utf8')) as BackupRecord;
      expect(rec.uploaded).to.have.length(1);
      const key = rec.uploaded![0];
      expect(key).to.match(/^p\/kv\/full\/0+\d+-.*\.db$/);
      const manifest = JSON.parse(readFileSync(join(s3.root, 'bkt1', key.replace(/\.db$/, '.json')), 'utf8')) as FullManifest;
      expect(manifest).to.include({ cluster: 'kv', member: 'm0', revision: rec.revision, sha256: rec.sha256, size: rec.size, release: '3.5.21', backupKind: 'on-demand', hashKV: rec.kvHash });
      expect(readFileSync(join(s3.root, 'bkt1', key)).equals(readFileSync(join(out, 'b-1.db')))).to.equal(true);

      const ports = await freePorts(2);
      const data = join(dir, 's3', 'r0');
      const restoreRecord = join(dir, 'record-s3-restore');
      const restoreArgs = ['restore', `--s3=${JSON.stringify(JSON.parse(dests)[0])}`, `--object=${key.replace(/\.db$/, '.json')}`, `--download=${join(dir, 's3', 'download')}`,
        `--members=r0=${data}`, `--initial-cluster=r0=http://127.0.0.1:${ports[1]}`, '--initial-cluster-token=from-s3', `--record=${restoreRecord}`];
      expect(await jobMain(restoreArgs)).to.equal(0);
      expect(JSON.parse(readFileSync(restoreRecord, 'utf8')) as RestoreRecord).to.include({ object: key, sha256: rec.sha256 });
      const p = spawnSvc([
        '--name=r0', `--data-dir=${data}`, `--listen-client-urls=http://127.0.0.1:${ports[0]}`, `--advertise-client-urls=http://127.0.0.1:${ports[0]}`,
        `--listen-peer-urls=http://127.0.0.1:${ports[1]}`, `--initial-advertise-peer-urls=http://127.0.0.1:${ports[1]}`, `--initial-cluster=r0=http://127.0.0.1:${ports[1]}`, '--initial-cluster-token=from-s3',
      ], { logFile: join(dir, 'r0-s3.log'), name: 'r0-s3' });
      procs.push(p);
      await waitForHttp(`http://127.0.0.1:${ports[0]}/health`, { timeoutMs: 30_000 });
      const a = await postJson(`http://127.0.0.1:${ports[0]}/v3/kv/range`, { key: b64('k'), range_end: b64('l') });
      expect((a.body.kvs as Array<{ key: string; value: string }>).map((kv) => `${unb64(kv.key)}=${unb64(kv.value)}`).sort()).to.deep.equal(Array.from({ length: 20 }, (_, k) => `k${k}=v${k}`).sort());

      // verify --s3 (the Kubernetes drill of a bucket's restore point): the hash at its revision; a corrupt object, the cause
      const verifyRecord = join(dir, 'record-s3-verify');
      const verifyArgs = ['verify', `--s3=${JSON.stringify(JSON.parse(dests)[0])}`, `--object=${key.replace(/\.db$/, '.json')}`, `--download=${join(dir, 's3', 'drill-download')}`,
        `--revision=${rec.revision}`, `--scratch=${join(dir, 's3', 'drill')}`, `--record=${verifyRecord}`];
      expect(await jobMain(verifyArgs)).to.equal(0);
      expect(JSON.parse(readFileSync(verifyRecord, 'utf8')) as VerifyRecord).to.include({ revision: rec.revision, hash: rec.kvHash });
      const object = join(s3.root, 'bkt1', key);
      const bytes = readFileSync(object);
      bytes[200] ^= 0xff;
      writeFileSync(object, bytes);
      await jobMain(verifyArgs);
      const corrupt = JSON.parse(readFileSync(verifyRecord, 'utf8')) as VerifyRecord;
      expect(corrupt.hash).to.equal(undefined);
      expect(corrupt.failure).to.match(/is corrupt: its sha256 \S+ does not match its manifest's/);
    } finally {
      delete process.env[secretEnvName('creds', 'accessKeyId')];
      delete process.env[secretEnvName('creds', 'secretAccessKey')];
      await s3.stop();
    }
  });
});
