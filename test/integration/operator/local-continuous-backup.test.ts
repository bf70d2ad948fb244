// Continuous backup with the local runtime, against a real S3-compatible server (versitygw on loopback) and real svc
// members, through the command line: with spec.backup.continuous the runtime runs `svc-operator backup-agent` beside
// the cluster; under a writer its delta segments land in the bucket; a restore to a revision between two full
// snapshots holds exactly the keyspace at that revision (the model the test keeps from the writer's answers); the
// agent killed with SIGKILL and started again resumes without a hole; compaction past the agent makes it take a new
// full snapshot and say so, retention then removes the older full snapshot and exactly the segments only it needed,
// and a revision in the compacted gap is refused with the covered revisions before anything is created.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { parseDeltaKey, type RestorePoint } from '../../../operator/backup/restore-points.js';
import { operatorCli } from './operator-cli.js';
import { KeyspaceModel } from './keyspace-model.js';
import { BUCKET, MOVED_BUCKET as MOVED, useContinuousBackup, type Destination } from './continuous-fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PREFIX = 'cont';

interface Listing {
  destinations: Array<{ oldest: { revision: number } | null; newest: { revision: number; time?: string } | null; points: RestorePoint[]; deltas: { segments: number; coverage: string } | null; error: string | null }>;
}

describe('operator local runtime: continuous backup (backup agent, delta segments, restore to any revision)', function () {
  this.timeout(120_000);
  // short segments keep the test quick (the agent reads SVC_AGENT_* from the environment it inherits)
  const { dir, stateDir, secrets, env, rt, s3: server, apply, durable, ...fx } = useContinuousBackup('cont', PREFIX, '0.3');
  const manifest = (dest: Destination = {}) => fx.manifest(['keep: 2'], dest);
  const restoreManifest = (name: string, revision: number) => fx.restoreManifest(name, `revision: ${revision}`);
  const listing = () => fx.listing<Listing['destinations'][0]>();
  const model = new KeyspaceModel();
  let client: Client;
  let writing = true;
  let writer: Promise<void> = Promise.resolve();

  const segments = () => readdirSync(join(server().root, BUCKET, PREFIX, 'kv', 'delta')).map((f) => parseDeltaKey(`x/delta/${f}`)!).sort((a, b) => a.fromRevision - b.fromRevision);
  /** A new cluster restored to `revision`: its keyspace and revision, then it is deleted. */
  const restoreTo = async (name: string, revision: number) => {
    const sd = join(dir, name);
    const r = await apply(restoreManifest(name, revision), sd);
    const other = new LocalRuntime({ stateDir: sd });
    try {
      expect(r.code, r.out).to.equal(0);
      const c = await Client.connect({ endpoints: [`http://127.0.0.1:${other.state()!.members[0].clientPort}`] });
      try {
        const got = await c.get('w/', { prefix: true });
        return { out: r.out, keys: got.kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`).sort(), revision: Number(got.header.revision) };
      } finally {
        c.close();
      }
    } finally {
      await other.delete();
    }
  };
  const killAgent = async () => {
    const pid = rt.state()!.agent!.pid!;
    process.kill(pid, 'SIGKILL');
    while (rt.agentStatus()!.running) await sleep(20);
  };

  after(async function () {
    writing = false;
    await writer.catch(() => undefined);
    client?.close();
  });

  let first: RestorePoint;
  let second: RestorePoint;

  it('the agent writes delta segments under a writer; killed (SIGKILL) and started again it resumes without a hole; a restore to a revision between two full snapshots holds exactly its keyspace', async () => {
    const created = await apply(manifest(), stateDir);
    expect(created.code, created.out).to.equal(0);
    expect(created.out).to.match(/started the backup agent \(pid \d+/);
    client = await Client.connect({ endpoints: [`http://127.0.0.1:${rt.state()!.members[0].clientPort}`] });
    writer = (async () => {
      for (let i = 0; writing; i++) {
        const key = `w/${String(i % 400).padStart(4, '0')}`;
        // every 7th write a delete: restored keyspaces must drop keys too
        if (i % 7 === 6) {
          const r = await client.delete(key);
          if (r.deleted !== '0') model.record(Number(r.header.revision), key);
        } else {
          const r = await client.put(key, `v${i}`);
          model.record(Number(r.header.revision), key, `v${i}`);
        }
        await sleep(3);
      }
    })();
    // the agent found no full snapshot: it took one itself, then segments follow it
    await sleep(500);
    await durable(model.last);
    expect(rt.agentStatus()!.continuousFull?.reason).to.match(/holds no full snapshot of kv/);

    // killed, the writer going on: the revisions written meanwhile are read back from history once it is started again
    await killAgent();
    const during = model.last + 30;
    while (model.last < during + 30) await sleep(20);
    const again = await apply(manifest(), stateDir);
    expect(again.code, again.out).to.equal(0);
    expect(again.out).to.match(/started the backup agent/);
    const onDemand = await operatorCli(['local', 'backup', '--wait', '--state-dir', stateDir], env);
    expect(onDemand.code, onDemand.out).to.equal(0);
    await sleep(300);
    await durable(model.last);
    expect(readFileSync(rt.agentLog(), 'utf8')).to.match(/resuming after revision \d+/);

    const l = await listing();
    expect(l.error).to.equal(null);
    expect(l.points.map((p) => p.backupKind)).to.deep.equal(['continuous', 'on-demand']);
    [first, second] = l.points;
    // the agent's snapshot names its member as the engine's do (not the host:port it snapshotted from)
    expect(l.points.map((p) => p.member)).to.deep.equal(['kv-0', 'kv-0']);
    expect(l.deltas!.segments).to.be.greaterThan(2);
    expect(l.newest!.revision).to.be.at.least(second.revision);
    // the segments chain from the first full snapshot without a hole
    const segs = segments();
    expect(segs[0].fromRevision).to.equal(first.revision + 1);
    for (let i = 1; i < segs.length; i++) expect(segs[i].fromRevision, 'no hole').to.be.at.most(segs[i - 1].toRevision + 1);

    expect(during).to.be.within(first.revision + 1, second.revision - 1);
    const r = await restoreTo('mid', during);
    expect(r.out).to.include(`restoring from ${first.key}`);
    expect(r.out).to.match(new RegExp(`delta segment\\(s\\) replayed to revision ${during}`));
    expect(r.revision).to.equal(during);
    expect(r.keys, `the keyspace at revision ${during}, written while the agent was down`).to.deep.equal(model.keyspace(during));
  });

  it('compaction past the agent: a new full snapshot, said so; retention drops the oldest and only its segments; the gap is refused', async () => {
    await killAgent();
    const gone = model.last + 1;
    while (model.last < gone + 50) await sleep(50);
    const compactAt = model.last;
    await client.compact(compactAt);
    const again = await apply(manifest(), stateDir);
    expect(again.code, again.out).to.equal(0);
    const until = Date.now() + 20_000;
    while ((rt.agentStatus()?.continuousFull?.revision ?? 0) < compactAt && Date.now() < until) await sleep(100);
    const full = rt.agentStatus()!.continuousFull!;
    expect(full.revision).to.be.at.least(compactAt);
    expect(full.reason).to.match(/^compaction passed revision \d+, the next the agent needed$/);
    expect(readFileSync(rt.agentLog(), 'utf8')).to.match(new RegExp(`took a new full snapshot at revision ${full.revision} from http://127\\.0\\.0\\.1:\\d+: compaction passed revision`));
    const status = await operatorCli(['local', 'status', '--state-dir', stateDir], env);
    expect(status.out).to.match(new RegExp(`continuous backup: new full snapshot at revision ${full.revision} \\(.*\\): compaction passed revision`));
    await durable(model.last);

    // keep 2: the first full snapshot went, and with it exactly the segments that end at or before the second
    const l = await listing();
    expect(l.points.map((p) => p.key)).to.deep.equal([second.key, l.points[1].key]);
    expect(l.points[1].revision).to.equal(full.revision);
    const segs = segments();
    expect(segs.every((s) => s.toRevision > second.revision), 'no segment only the removed snapshot needed').to.equal(true);
    expect(segs.some((s) => s.fromRevision <= second.revision + 1), 'the second snapshot keeps its chain').to.equal(true);
    expect(l.oldest!.revision).to.equal(second.revision);
    expect(l.deltas!.coverage).to.match(new RegExp(`^restorable revisions ${second.revision}\\.\\.\\d+, ${full.revision}\\.\\.${l.newest!.revision}$`));
    const text = await operatorCli(['local', 'backups', '--state-dir', stateDir], env);
    // (the writer goes on: the counts may have grown since the listing above)
    expect(text.out).to.match(new RegExp(`\\n${full.revision} +\\S+ +continuous +kv-0 +3\\.5\\.21 `));
    expect(text.out).to.match(new RegExp(`continuous: \\d+ delta segment\\(s\\), each read and checked \\(sha256, revisions without a hole\\); restorable revisions ${second.revision}\\.\\.\\d+, ${full.revision}\\.\\.\\d+; newest restorable revision \\d+ \\(\\S+Z\\)`));

    // a revision the agent never saw (compacted away while it was down) is refused with what is covered
    const sd = join(dir, 'gap');
    const r = await apply(restoreManifest('gap', gone + 10), sd);
    expect(r.code, r.out).to.equal(1);
    expect(r.out).to.match(new RegExp(`cannot create gap: .* does not cover revision ${gone + 10}: it has restorable revisions ${second.revision}\\.\\.\\d+, ${full.revision}\\.\\.\\d+; ask for a revision in one of those ranges`));
    expect(existsSync(join(sd, 'state.json'))).to.equal(false);
    writing = false;
    await writer;
  });

  it('credentials changed under a running agent (a rotated Secret): refused, it reads them again and goes on without a restart', async () => {
    const keyFile = join(secrets, 's3creds', 'secretAccessKey');
    await killAgent();
    writeFileSync(keyFile, 'revoked-key');
    // started again, and said at once: the members are as applied, the destination refuses
    const again = await apply(manifest(), stateDir);
    expect(again.code, again.out).to.equal(1);
    expect(again.out).to.match(/started the backup agent \(pid \d+/);
    expect(again.out).to.include(`svc-operator: kv is as applied, but its backups cannot be written: destination "offsite" (s3://${BUCKET}/${PREFIX} at ${server().endpoint}): the credentials were refused (SignatureDoesNotMatch`);
    expect(again.out).to.include(`; the backup agent keeps trying (log ${rt.agentLog()}); fix the destination, then run \`svc-operator local apply\` again (a backup due or asked for is taken then)\n`);
    const pid = rt.state()!.agent!.pid;
    const put = await client.put('w/rotated', 'x');
    const until = Date.now() + 20_000;
    while (!/credentials were refused/.test(readFileSync(rt.agentLog(), 'utf8'))) {
      if (Date.now() > until) throw new Error(`the agent never reported the refused credentials: ${readFileSync(rt.agentLog(), 'utf8').slice(-2000)}`);
      await sleep(100);
    }
    writeFileSync(keyFile, server().secretAccessKey);
    await durable(Number(put.header.revision));
    expect(rt.state()!.agent!.pid, 'the same agent process').to.equal(pid);
    expect(readFileSync(rt.agentLog(), 'utf8')).to.match(/the credentials were refused: read them again for the next try/);
  });
  it('a destination changed while the agent runs: the agent restarts on it; one that refuses or cannot be reached is said at once (exit 1), a pending backup does not hold the run; the next good one gets the segments', async () => {
    const config = () => JSON.parse(readFileSync(join(stateDir, 'agent', 'config.json'), 'utf8')) as { destinations: Array<{ s3: { endpoint: string; bucket: string; credentialsSecret: string } }> };
    const first = rt.state()!.agent!.pid;
    const before = (await client.get('w/', { prefix: true, countOnly: true })).count;

    // credentials the store refuses: the agent is restarted with them, and the apply says so
    const wrong = await apply(manifest({ secret: 'wrong' }), stateDir);
    expect(wrong.code, wrong.out).to.equal(1);
    expect(wrong.out).to.match(/restarted the backup agent \(pid \d+/);
    expect(config().destinations[0].s3.credentialsSecret).to.equal('wrong');
    expect(rt.state()!.agent!.pid).to.not.equal(first);
    expect(wrong.out).to.include(`svc-operator: kv is as applied, but its backups cannot be written: destination "offsite" (s3://${BUCKET}/${PREFIX} at ${server().endpoint}): the credentials were refused (SignatureDoesNotMatch`);

    // an on-demand backup pending, then an endpoint that cannot be reached: the agent moves first, the backup fails
    // once and the run ends there, naming the destination and the cause
    const asked = await operatorCli(['local', 'backup', '--state-dir', stateDir], env);
    expect(asked.code, asked.out).to.equal(0);
    const down = await apply(manifest({ endpoint: 'http://127.0.0.1:9' }), stateDir);
    expect(down.code, down.out).to.equal(1);
    expect(config().destinations[0].s3.endpoint).to.equal('http://127.0.0.1:9');
    expect(down.out.match(/step backup failed/g), down.out).to.have.length(1);
    expect(down.out).to.match(/\nsvc-operator: kv is as applied, but the backup failed: destination "offsite" \(s3:\/\/svc-backups\/cont at http:\/\/127\.0\.0\.1:9\): the endpoint cannot be reached \(ECONNREFUSED[^\n]*; check spec\.backup\.destinations\[\]\.s3\.endpoint and that the store is up; the backup agent keeps trying \(log [^)]+\); fix the destination, then run `svc-operator local apply` again \(a backup due or asked for is taken then\)\n$/);
    expect(rt.agentStatus()!.running).to.equal(true);

    // another bucket that works: the agent writes there, and the pending backup is taken
    const moved = await apply(manifest({ bucket: MOVED }), stateDir);
    expect(moved.code, moved.out).to.equal(0);
    expect(moved.out).to.match(/backup: on-demand backup \(request/);
    expect(config().destinations[0].s3).to.include({ bucket: MOVED, endpoint: server().endpoint, credentialsSecret: 's3creds' });
    const put = await client.put('w/moved', 'x');
    const revision = Number(put.header.revision);
    const until = Date.now() + 20_000;
    const inMoved = () => existsSync(join(server().root, MOVED, PREFIX, 'kv', 'delta'))
      ? readdirSync(join(server().root, MOVED, PREFIX, 'kv', 'delta')).map((f) => parseDeltaKey(`x/delta/${f}`)!).some((g) => g.fromRevision <= revision && revision <= g.toRevision)
      : false;
    while (!inMoved()) {
      if (Date.now() > until) throw new Error(`no segment with revision ${revision} in ${MOVED}; the agent's log: ${readFileSync(rt.agentLog(), 'utf8').slice(-2000)}`);
      await sleep(100);
    }
    expect(readdirSync(join(server().root, MOVED, PREFIX, 'kv', 'full')).some((f) => f.endsWith('.json'))).to.equal(true);
    const status = await operatorCli(['local', 'status', '--state-dir', stateDir], env);
    expect(status.out).to.not.match(/last backup failed/);
    // the cluster's data as it was, plus the one write
    expect(Number((await client.get('w/', { prefix: true, countOnly: true })).count)).to.equal(Number(before) + 1);
  });
});
