// Scheduled and on-demand backups of the local runtime against real svc processes, through the command line:
// `local apply` with a schedule every 4 seconds (croner's 6 fields) takes the due slot at each run, `local backup
// --wait` takes an on-demand one, `local status` lists them, spec.backup.keep prunes the record and the files, and a
// new 3-member cluster created from a backup (spec.restore.snapshot) serves every key written before it.
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import type { BackupEntry } from '../../../operator/api/types.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { operatorCli } from './operator-cli.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StatusJson {
  backups: { claim: string; items?: BackupEntry[]; lastScheduleTime?: string; nextScheduleTime?: string; lastRequest?: string };
  backupRequested: string | null;
  backupFailure: string | null;
}

describe('operator local runtime: scheduled and on-demand backups, and a cluster created from one', function () {
  this.timeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-op-localbk-'));
  const stateDir = join(dir, 'src');
  const restoredDir = join(dir, 'restored');
  const file = join(dir, 'bk.yaml');
  const restoredFile = join(dir, 'bk2.yaml');
  const runtimes = [new LocalRuntime({ stateDir }), new LocalRuntime({ stateDir: restoredDir })];

  after(async function () {
    this.timeout(60_000);
    for (const rt of runtimes) await rt.delete().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const status = async (sd: string): Promise<StatusJson> => {
    const r = await operatorCli(['local', 'status', '--state-dir', sd, '--output', 'json']);
    expect(r.code, r.out).to.equal(0);
    return JSON.parse(r.out) as StatusJson;
  };
  const backupFiles = () => readdirSync(join(stateDir, 'backups')).filter((f) => f.endsWith('.db')).map((f) => join(stateDir, 'backups', f)).sort();

  it('takes scheduled backups at each run of local apply, an on-demand one with local backup --wait, keeps spec.backup.keep', async () => {
    writeFileSync(file, ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', 'metadata: {name: bk}', 'spec:', '  version: 3.4.34', '  replicas: 1', '  backup: {schedule: "*/4 * * * * *", keep: 2}', ''].join('\n'));
    const created = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect(created.code, created.out).to.equal(0);
    const url = `http://127.0.0.1:${runtimes[0].state()!.members[0].clientPort}`;
    const c = await Client.connect({ endpoints: [url] });
    try {
      for (let i = 0; i < 50; i++) await c.put(`bk/${String(i).padStart(2, '0')}`, `v${i}`);
    } finally {
      c.close();
    }

    // a slot passes: the next run takes it (the latest slot, once)
    await sleep(4500);
    const second = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect(second.code, second.out).to.equal(0);
    expect(second.out).to.match(/scheduled backup \(slot [0-9T:.-]+Z\) from leader bk-0/);
    const s1 = await status(stateDir);
    const sched1 = s1.backups.items!.filter((i) => i.kind === 'scheduled');
    expect(sched1.length).to.be.at.least(1);
    expect(s1.backups.lastScheduleTime).to.equal(new Date(Date.parse(s1.backups.lastScheduleTime!)).toISOString());
    expect(Date.parse(s1.backups.nextScheduleTime!) - Date.parse(s1.backups.lastScheduleTime!)).to.equal(4000);
    // the newest one holds the 50 keys (revision 1 + 50 puts)
    expect(sched1.at(-1)!.revision).to.be.at.least(51);

    await sleep(4500);
    expect((await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir])).code).to.equal(0);
    const s2 = await status(stateDir);
    expect(s2.backups.lastScheduleTime! > s1.backups.lastScheduleTime!).to.equal(true);
    expect(s2.backups.items).to.have.length(2);
    // retention: the files on disk are exactly the ones the record keeps
    expect(backupFiles()).to.deep.equal(s2.backups.items!.map((i) => i.location).sort());

    // on demand: without --wait it says how it gets taken; status shows it requested
    const asked = await operatorCli(['local', 'backup', '--state-dir', stateDir]);
    expect(asked.code, asked.out).to.equal(0);
    expect(asked.out).to.match(/on-demand backup requested .*local backup --wait/);
    expect((await status(stateDir)).backupRequested).to.be.a('string');
    const taken = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir]);
    expect(taken.code, taken.out).to.equal(0);
    const s3 = await status(stateDir);
    expect(s3.backupRequested).to.equal(null);
    expect(s3.backupFailure).to.equal(null);
    expect(s3.backups.items).to.have.length(2);
    // (the run also takes the slots that passed meanwhile: the request first, then the schedule; when two slots
    // passed, keep 2 leaves only them, and the command says the on-demand one was taken and removed)
    const kept = s3.backups.items!.some((i) => i.kind === 'on-demand');
    if (kept) expect(taken.out).to.match(/on-demand backup of bk-0 at .*\/backups\/bk-0-on-demand-.*\.db: revision \d+/);
    else expect(taken.out).to.match(/on-demand backup \S+ taken; spec\.backup\.keep \(2\) has since removed it/);
    expect(s2.backups.lastRequest).to.equal(undefined);
    expect(Date.parse(s3.backups.lastRequest!)).to.be.greaterThan(Date.parse(s2.backups.lastScheduleTime!));
    expect(backupFiles()).to.deep.equal(s3.backups.items!.map((i) => i.location).sort());

    const text = await operatorCli(['local', 'status', '--state-dir', stateDir]);
    expect(text.out).to.match(/backups in .*\/backups: 2; schedule "\*\/4 \* \* \* \* \*", next /);
    expect(text.out).to.match(/KIND\s+TIME\s+REVISION\s+BYTES\s+FILE/);
    if (kept) expect(text.out).to.match(/on-demand\s+\S+\s+\d+\s+\d+\s+\S+bk-0-on-demand-/);
  });

  it('a backup that fails says why and what to do, in the loop\'s output, the exit status and local status', async function () {
    this.timeout(180_000);
    // backups/ cannot be written (a file in its place): the loop retries by its backoff, then gives up
    const held = join(dir, 'held-backups');
    renameSync(join(stateDir, 'backups'), held);
    writeFileSync(join(stateDir, 'backups'), 'not a folder');
    try {
      const r = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir]);
      expect(r.code, r.out).to.equal(1);
      expect(r.out).to.match(/step backup failed \(will retry\): EEXIST/);
      expect(r.out).to.match(/on-demand backup \S+ of bk not taken: .*EEXIST/);
      const text = await operatorCli(['local', 'status', '--state-dir', stateDir]);
      expect(text.out).to.match(/last backup failed: EEXIST.*; it is tried again by the next `svc-operator local apply` or `svc-operator local backup --wait/);
    } finally {
      rmSync(join(stateDir, 'backups'), { force: true });
      renameSync(held, join(stateDir, 'backups'));
    }
    // once it works again the request is answered and the failure cleared
    const ok = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir]);
    expect(ok.code, ok.out).to.equal(0);
    const s = await status(stateDir);
    expect(s.backupFailure).to.equal(null);
    expect(backupFiles()).to.deep.equal(s.backups.items!.map((i) => i.location).sort());
  });

  it('a new 3-member cluster created from a local backup has every key written before it; local delete keeps the backups', async () => {
    const snap = runtimes[0].state()!.records.backups!.items!.find((i) => i.kind === 'on-demand')!.location;
    const manifest = (name: string, from: string) => ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', `metadata: {name: ${name}}`, 'spec:', '  version: 3.4.34', '  replicas: 3', `  restore: {snapshot: "${from}"}`, ''].join('\n');
    // a corrupt copy is refused before anything is created
    const corrupt = join(dir, 'corrupt.db');
    const bytes = readFileSync(snap);
    bytes[100] ^= 0xff;
    writeFileSync(corrupt, bytes);
    writeFileSync(restoredFile, manifest('bk3', corrupt));
    const refused = await operatorCli(['local', 'apply', '-f', restoredFile, '--state-dir', join(dir, 'refused')]);
    expect(refused.code, refused.out).to.equal(1);
    expect(refused.out).to.match(/cannot create bk3: spec.restore.snapshot: snapshot file .*corrupt.db is corrupt: its sha256 does not match its content; name a backup file `svc-operator local status` lists/);
    expect(existsSync(join(dir, 'refused', 'state.json'))).to.equal(false);

    writeFileSync(restoredFile, manifest('bk2', snap));
    const r = await operatorCli(['local', 'apply', '-f', restoredFile, '--state-dir', restoredDir]);
    expect(r.code, r.out).to.equal(0);
    const st = runtimes[1].state()!;
    expect(st.members.map((m) => m.name)).to.deep.equal(['bk2-0', 'bk2-1', 'bk2-2']);
    for (const m of st.members) {
      const c = await Client.connect({ endpoints: [`http://127.0.0.1:${m.clientPort}`] });
      try {
        const kvs = (await c.get('bk/', { prefix: true, serializable: true })).kvs;
        expect(kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`), m.name).to.deep.equal(Array.from({ length: 50 }, (_, i) => `bk/${String(i).padStart(2, '0')}=v${i}`));
      } finally {
        c.close();
      }
    }

    const del = await operatorCli(['local', 'delete', '--state-dir', stateDir]);
    expect(del.code, del.out).to.equal(0);
    expect(del.out).to.match(/kept its backups in .*backups/);
    expect(existsSync(snap)).to.equal(true);
    expect(existsSync(join(stateDir, 'state.json'))).to.equal(false);
  });
});
