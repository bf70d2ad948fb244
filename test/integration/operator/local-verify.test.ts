// Restore drills of the local runtime against real svc processes, through the command line: a backup records the
// member's KV hash at its revision; a scheduled drill (spec.backup.verify) restores it into a scratch member and
// passes; `local verify-backup --wait` fails, saying why, once the recorded hash is not the file's (a backup of
// another cluster) and once the file's bytes are altered; `local status` shows the last drill.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import type { BackupEntry, BackupsStatus } from '../../../operator/api/types.js';
import { LocalRuntime, stateFile } from '../../../operator/runtime/local/index.js';
import { operatorCli } from './operator-cli.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('operator local runtime: restore drills (spec.backup.verify, local verify-backup)', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-op-drill-'));
  const stateDir = join(dir, 'state');
  const file = join(dir, 'drill.yaml');
  const rt = new LocalRuntime({ stateDir });
  const manifest = (verify: string) => ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', 'metadata: {name: drill}', 'spec:', '  version: 3.5.21', '  replicas: 1', `  backup: {verify: {schedule: "${verify}"}}`, ''].join('\n');
  const backups = (): BackupsStatus => rt.state()!.records.backups!;
  const editNewest = (f: (b: BackupEntry) => void) => {
    const s = JSON.parse(readFileSync(stateFile(stateDir), 'utf8')) as { records: { backups: BackupsStatus } };
    f(s.records.backups.items!.at(-1)!);
    writeFileSync(stateFile(stateDir), JSON.stringify(s));
  };

  after(async function () {
    this.timeout(60_000);
    await rt.delete().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  let backup: BackupEntry;

  it('records the KV hash with a backup; a scheduled drill restores it and passes', async () => {
    writeFileSync(file, manifest('*/2 * * * * *'));
    const created = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect(created.code, created.out).to.equal(0);
    const url = `http://127.0.0.1:${rt.state()!.members[0].clientPort}`;
    const c = await Client.connect({ endpoints: [url] });
    try {
      for (let i = 0; i < 30; i++) await c.put(`drill/${i}`, `v${i}`);
      await c.delete('drill/1');
      await c.delete('drill/2');
      const taken = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir]);
      expect(taken.code, taken.out).to.equal(0);
      backup = backups().items!.at(-1)!;
      // the recorded hash is the live member's at the recorded revision
      const live = await c.hashKV(url, backup.revision);
      expect(backup.kvHash).to.equal(live.hash);
      expect(backup.compactRevision).to.equal(Number(live.compact_revision));
      await c.put('drill/after', 'x'); // the cluster moves on; the drill compares at the backup's revision
    } finally {
      c.close();
    }
    // a slot passes after the last drill (`local backup --wait` ran one already: a slot was due once a backup
    // existed): the next apply runs the drill
    await sleep(2100);
    const applied = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect(applied.code, applied.out).to.equal(0);
    expect(applied.out).to.match(/restore drill \(slot [0-9T:.-]+Z\) of .*revision \d+/);
    expect(applied.out).to.include('restore drill passed');
    const v = backups().lastVerified!;
    expect(v).to.include({ result: 'Passed', revision: backup.revision, location: backup.location });
    expect(v.message).to.include(`is ${backup.kvHash}, as recorded`);
    expect(backups().lastVerifyScheduleTime).to.match(/Z$/);
    expect(existsSync(join(stateDir, 'drill')), 'the scratch dir is removed').to.equal(false);
    const status = await operatorCli(['local', 'status', '--state-dir', stateDir]);
    expect(status.out).to.match(/last restore drill: passed at .*revision \d+/);
  });

  it('svc-operator verify (what the Kubernetes drill Job runs) reports the restored member\'s KV hash, or why there is none', async () => {
    const record = join(dir, 'verify.json');
    const r = await operatorCli(['verify', `--snapshot=${backup.location}`, `--revision=${backup.revision}`, `--scratch=${join(dir, 'job-scratch')}`, `--record=${record}`]);
    expect(r.code, r.out).to.equal(0);
    expect(JSON.parse(readFileSync(record, 'utf8'))).to.deep.equal({ snapshot: backup.location.split('/').at(-1), revision: backup.revision, hash: backup.kvHash, compactRevision: backup.compactRevision });
    expect(existsSync(join(dir, 'job-scratch')), 'the scratch dir is removed').to.equal(false);
    // a revision the backup does not reach: a drill failure in the record, not a failed Job
    const far = await operatorCli(['verify', `--snapshot=${backup.location}`, `--revision=${backup.revision + 1000}`, `--scratch=${join(dir, 'job-scratch')}`, `--record=${record}`]);
    expect(far.code, far.out).to.equal(0);
    expect((JSON.parse(readFileSync(record, 'utf8')) as { failure: string }).failure).to.match(/refuses revision \d+: .*future revision/);
  });

  it('fails when the recorded hash is not the file\'s (a backup of another cluster), and says so', async () => {
    // no scheduled drill from here on: each result below is the request's
    writeFileSync(file, manifest('0 0 1 1 *'));
    expect((await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir])).code).to.equal(0);
    editNewest((b) => { b.kvHash = (backup.kvHash! + 1) % 2 ** 32; });
    const r = await operatorCli(['local', 'verify-backup', '--wait', '--state-dir', stateDir]);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.match(/restore drill of drill FAILED: KV hash at revision \d+ of the member restored from .* is \d+, the cluster's was \d+/);
    expect(r.out).to.include('WARNING restore drill FAILED');
    expect(backups().lastVerified).to.include({ result: 'Failed', revision: backup.revision });
    const status = await operatorCli(['local', 'status', '--state-dir', stateDir, '--output', 'json']);
    expect((JSON.parse(status.out) as { backups: BackupsStatus }).backups.lastVerified!.result).to.equal('Failed');
  });

  it('fails when the backup file\'s bytes are altered, naming the checksum; passes again once the file is whole', async () => {
    editNewest((b) => { b.kvHash = backup.kvHash; });
    const original = readFileSync(backup.location);
    const bad = Buffer.from(original);
    for (let i = 0; i < 16; i++) bad[Math.floor(bad.length / 2) + i] ^= 0xff; // inside the bbolt pages, not the digest
    writeFileSync(backup.location, bad);
    const r = await operatorCli(['local', 'verify-backup', '--wait', '--state-dir', stateDir]);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.match(/FAILED: restoring .* failed: .*sha256/);
    expect(backups().lastVerified!.result).to.equal('Failed');

    writeFileSync(backup.location, original);
    const ok = await operatorCli(['local', 'verify-backup', '--wait', '--state-dir', stateDir, '--output', 'json']);
    expect(ok.code, ok.out).to.equal(0);
    expect((JSON.parse(ok.out) as { verified: { result: string } }).verified.result).to.equal('Passed');
  });
});
