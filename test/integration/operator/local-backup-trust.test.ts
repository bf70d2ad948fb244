// Continuous backup you can trust (issue 39 items 4 and 5), with the local runtime, a real S3-compatible server
// (versitygw on loopback) and real svc members, through the command line: a restore to a time T under a writer holds
// every write acknowledged more than 100 ms before T, none acknowledged after T, and no hole (the agent times each
// revision); a restore drill replays the delta chain and compares the keyspace with the cluster's (a segment rewritten
// with another value and a right checksum fails it); one flipped byte in a delta segment on the S3 server fails the
// drill naming the object, shortens the range `local backups` shows to the last intact segment naming the broken one,
// and a restore that needs it is refused leaving nothing under <state-dir>/restore/; a backup that fails (its
// destination refuses the credentials) leaves no file under backups/.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { parseDeltaKey } from '../../../operator/backup/restore-points.js';
import { decodeSegment, encodeSegment } from '../../../operator/backup/delta.js';
import { operatorCli } from './operator-cli.js';
import { BUCKET, useContinuousBackup } from './continuous-fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PREFIX = 'trust';
const re = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Listing {
  where: string;
  newest: { revision: number } | null;
  points: Array<{ key: string; revision: number }>;
  deltas: { segments: number; coverage: string; broken: Array<{ key: string; fromRevision: number; toRevision: number; problem: string }> } | null;
}

/** One write of the writer: its key, the revision it made, when it was sent and when its answer came (ms). */
interface Write {
  key: string;
  revision: number;
  issued: number;
  acked: number;
}

describe('operator local runtime: backups you can trust (drill of the delta chain, checked listing, restore to a time)', function () {
  this.timeout(180_000);
  // 1 s segments: a time restore that stopped at a segment's end would miss most of a second of writes
  const { dir, stateDir, secrets, env, rt, s3, manifest, restoreManifest, apply, durable, ...fx } = useContinuousBackup('trust', PREFIX, '1');
  const listing = () => fx.listing<Listing>();
  const writes: Write[] = [];
  const segmentFiles = () => readdirSync(join(s3().root, BUCKET, PREFIX, 'kv', 'delta')).sort();

  it('a restore to a time T under a writer holds every write acknowledged more than 100 ms before T, none acknowledged after T, and nothing in between missing', async () => {
    const created = await apply(manifest(), stateDir);
    expect(created.code, created.out).to.equal(0);
    expect(created.out).to.match(/started the backup agent \(pid \d+/);
    const client = await Client.connect({ endpoints: [`http://127.0.0.1:${rt.state()!.members[0].clientPort}`] });
    try {
      // the agent's own first full snapshot is the restore point the time restore starts from
      await sleep(300);
      const until = Date.now() + 20_000;
      while (rt.agentStatus()?.continuousFull === undefined) {
        if (Date.now() > until) throw new Error(`the agent took no full snapshot: ${readFileSync(rt.agentLog(), 'utf8').slice(-2000)}`);
        await sleep(100);
      }
      // a writer that pauses 20 ms after each answer: no write is under way at T
      for (let i = 0; i < 250; i++) {
        const key = `w/${String(i).padStart(4, '0')}`;
        const issued = Date.now();
        const r = await client.put(key, `v${i}`);
        writes.push({ key, revision: Number(r.header.revision), issued, acked: Date.now() });
        await sleep(20);
      }
    } finally {
      client.close();
    }
    await durable(writes.at(-1)!.revision);

    const k = writes[Math.floor(writes.length / 2)];
    const T = k.acked + 5;
    const after = writes.filter((w) => w.acked > T);
    expect(after.every((w) => w.issued > T), 'the writer paused: every write answered after T was sent after it').to.equal(true);
    const sd = join(dir, 'at-time');
    const r = await apply(restoreManifest('attime', `time: "${new Date(T).toISOString()}"`), sd);
    expect(r.code, r.out).to.equal(0);
    const other = new LocalRuntime({ stateDir: sd });
    try {
      const c = await Client.connect({ endpoints: [`http://127.0.0.1:${other.state()!.members[0].clientPort}`] });
      let keys: string[];
      try {
        keys = (await c.get('w/', { prefix: true })).kvs.map((kv) => kv.key.toString()).sort();
      } finally {
        c.close();
      }
      // every revision the agent saw by T: a prefix of the writes, with all answered 100 ms before T and none after T
      const got = writes.slice(0, keys.length);
      expect(keys, 'the writes from the first on, without a hole').to.deep.equal(got.map((w) => w.key));
      expect(keys.length).to.be.at.least(writes.filter((w) => w.acked < T - 100).length);
      expect(keys.length, 'nothing answered after T').to.be.at.most(writes.length - after.length);
      expect(r.out).to.match(new RegExp(`restoring from ${re(PREFIX)}/kv/full/\\S+ of .*: revision \\d+, taken \\S+ from kv-0; \\d+ delta segment\\(s\\) replayed to revision ${got.at(-1)!.revision}\\n`));
    } finally {
      await other.delete();
    }
  });

  it('a drill replays the delta chain and compares the keyspace; a flipped byte in a segment fails it naming the object, shortens the listed range to the last intact segment, and a restore that needs it is refused leaving restore/ empty', async () => {
    const drill = () => operatorCli(['local', 'verify-backup', '--wait', '--state-dir', stateDir], env);
    const l = await listing();
    expect(l.deltas!.broken).to.deep.equal([]);
    expect(l.newest!.revision).to.equal(writes.at(-1)!.revision);
    const full = l.points.at(-1)!;
    const passed = await drill();
    expect(passed.code, passed.out).to.equal(0);
    expect(passed.out).to.match(new RegExp(`; replaying ${l.deltas!.segments} delta segment\\(s\\) of s3://${BUCKET}/${re(full.key)} from revision ${full.revision} to ${l.newest!.revision}: the keyspace at ${l.newest!.revision} \\(${writes.length} key\\(s\\)\\) hashes [0-9a-f]{16}, as the cluster's\\n`));

    const files = segmentFiles();
    expect(files.length).to.be.greaterThan(2);
    // a segment rewritten whole (its checksum right) with one value changed: only the comparison with the cluster tells
    const forged = join(s3().root, BUCKET, PREFIX, 'kv', 'delta', files[2]);
    const original = readFileSync(forged);
    const seg = decodeSegment(original);
    const op = seg.changes[0].ops[0] as { value: Buffer };
    op.value = Buffer.from('forged');
    writeFileSync(forged, encodeSegment(seg));
    const mismatch = await drill();
    expect(mismatch.code, mismatch.out).to.equal(1);
    expect(mismatch.out).to.match(new RegExp(`svc-operator: restore drill of kv FAILED: replaying ${files.length} delta segment\\(s\\) of s3://${BUCKET}/${re(full.key)} from revision ${full.revision} to ${l.newest!.revision}: the keyspace at ${l.newest!.revision} \\(${writes.length} key\\(s\\)\\) hashes [0-9a-f]{16}, the cluster's \\(${writes.length} key\\(s\\)\\) [0-9a-f]{16}: the segments do not hold the changes the cluster made; a new full snapshot \\(an on-demand backup\\) is a restore point that does not need them; restored `));
    writeFileSync(forged, original);

    // one byte of a segment in the middle of the chain, flipped on the S3 server
    const victim = files[1];
    const key = `${PREFIX}/kv/delta/${victim}`;
    const ref = parseDeltaKey(key)!;
    const path = join(s3().root, BUCKET, PREFIX, 'kv', 'delta', victim);
    const bytes = readFileSync(path);
    bytes[bytes.length - 10] ^= 0x01;
    writeFileSync(path, bytes);

    const failed = await drill();
    expect(failed.code, failed.out).to.equal(1);
    expect(failed.out).to.include(`svc-operator: restore drill of kv FAILED: replaying ${files.length} delta segment(s) of s3://${BUCKET}/${full.key} from revision ${full.revision} to ${l.newest!.revision} failed: destination ${l.where}: ${key}: sha256 mismatch (the file is truncated or altered); the revisions it holds cannot be restored (a full snapshot taken later can); restored s3://${BUCKET}/${full.key} into a scratch member`);

    const broken = await listing();
    expect(broken.newest!.revision, 'restorable up to the last intact segment').to.equal(ref.fromRevision - 1);
    expect(broken.deltas!.broken).to.deep.equal([{ key, fromRevision: ref.fromRevision, toRevision: ref.toRevision, problem: 'sha256 mismatch (the file is truncated or altered)' }]);
    expect(broken.deltas!.coverage).to.equal(`restorable revisions ${full.revision}..${ref.fromRevision - 1}`);
    const text = await operatorCli(['local', 'backups', '--state-dir', stateDir], env);
    expect(text.code, text.out).to.equal(0);
    expect(text.out).to.include(`continuous: ${files.length} delta segment(s), each read and checked (sha256, revisions without a hole); restorable revisions ${full.revision}..${ref.fromRevision - 1}; newest restorable revision ${ref.fromRevision - 1} (`);
    expect(text.out).to.include(`BROKEN delta segment ${key}: sha256 mismatch (the file is truncated or altered); its revisions ${ref.fromRevision}..${ref.toRevision} cannot be replayed from it: the restorable revisions above go only as far as the intact segments reach; a new full snapshot (an on-demand backup) covers what comes after\n`);

    const sd = join(dir, 'needs-broken');
    const r = await apply(restoreManifest('needsbroken', `revision: ${ref.toRevision}`), sd);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.include(`svc-operator: cannot create needsbroken: destination "restore source" (s3://${BUCKET}/${PREFIX}`);
    expect(r.out).to.include(`: ${key}: sha256 mismatch (the file is truncated or altered); the revisions it holds cannot be restored (a full snapshot taken later can)\n`);
    expect(existsSync(join(sd, 'state.json')), 'no cluster').to.equal(false);
    expect(existsSync(join(sd, 'restore')) ? readdirSync(join(sd, 'restore')) : [], 'nothing left under restore/').to.deep.equal([]);
  });

  it('a backup whose destination refuses the credentials fails, says so, and leaves no file under backups/', async () => {
    const backups = join(stateDir, 'backups');
    const before = existsSync(backups) ? readdirSync(backups) : [];
    writeFileSync(join(secrets, 's3creds', 'secretAccessKey'), 'revoked-key');
    const r = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir], env);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.match(new RegExp(`\\nsvc-operator: on-demand backup \\S+ of kv not taken: the backup failed: destination "offsite" \\(s3://${BUCKET}/${PREFIX} at ${re(s3().endpoint)}\\): the credentials were refused \\(SignatureDoesNotMatch: [^\\n]*\\); check the access key and secret in credentialsSecret \\(locally the AWS_\\* variables or the secrets folder\\); the backup agent keeps trying \\(log [^)]+\\); fix the destination, then run \`svc-operator local apply\` again \\(a backup due or asked for is taken then\\)\\n`));
    expect(readdirSync(backups), 'no file of the failed backup').to.deep.equal(before);
  });
});
