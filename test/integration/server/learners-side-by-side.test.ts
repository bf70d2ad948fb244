// Learners, the same scenario against svc and the reference 3.5 (etcd v3.5.21 and its etcdctl), answers compared
// step by step (exit code, and the error text of a refusal): a learner with a unix:// peer URL, a second learner
// (the reference allows one), promotion before the learner caught up, a running learner refusing what the
// reference refuses (linearizable reads, writes, member list) and serving serializable reads and status, leadership
// refused to it, promotion once caught up, and a learner added while a voting member is down (refused by the
// strict reconfiguration check, on by default; allowed without it, and writes still commit).
import { expect } from 'chai';
import { join } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { ref35, startReferenceCluster } from '../../../harness/reference-cluster.js';
import { useCleanup } from '../../../harness/cleanup.js';
import { useSvcClusters, spawnSvc } from '../../../harness/svc-cluster.js';
import { memberArgs } from '../../../harness/member-args.js';
import { freePorts } from '../../../harness/ports.js';
import { sleep, spawnLogged, type LoggedProcess } from '../../../harness/process.js';

/** One cluster under test, whichever implementation runs it. */
interface Side {
  label: string;
  dir: string;
  /** name=peerURL of every member, for a joining member's --initial-cluster. */
  initialCluster: string;
  endpoints: string[];
  spawn(name: string, args: string[]): LoggedProcess;
  kill(i: number): Promise<void>;
}

interface Answer {
  step: string;
  code: number;
  /** The refusal ("Error: ..." line of etcdctl), or the output asked for. */
  text: string;
}

const ctl = (args: string[], endpoint: string) => etcdctl(args, { bin: ref35('etcdctl'), endpoints: [endpoint], timeoutMs: 20000 });
const errorLine = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('Error:')) ?? '';

/** Index of the endpoint whose member leads. */
async function leaderIndex(endpoints: string[]): Promise<number> {
  for (const [i, e] of endpoints.entries()) {
    const r = await ctl(['endpoint', 'status', '-w', 'json'], e);
    if (r.code === 0 && /"leader":(\d+)/.exec(r.stdout)?.[1] === /"member_id":(\d+)/.exec(r.stdout)?.[1]) return i;
  }
  throw new Error(`no leader among ${endpoints.join(',')}`);
}

/** Runs the scenario on one side; returns every answer, in order. */
async function scenario(side: Side, stopLater: (p: LoggedProcess) => LoggedProcess): Promise<Answer[]> {
  const answers: Answer[] = [];
  const [ep0] = side.endpoints;
  const step = async (name: string, args: string[], endpoint: string, keep: (out: string) => string = () => '') => {
    const r = await ctl(args, endpoint);
    const a = { step: name, code: r.code, text: r.code === 0 ? keep(r.stdout) : errorLine(r.stderr) };
    answers.push(a);
    return { ...a, stdout: r.stdout };
  };
  // etcdctl writes the ID padded to 16 columns ("Member  849a0bd865ef652 added").
  const idOf = (out: string) => /Member +([0-9a-f]+) added/.exec(out)?.[1] ?? '';
  const leaderEndpoint = async () => side.endpoints[await leaderIndex(side.endpoints)];

  await step('put', ['put', 'k', 'v1'], ep0);
  const [p1, p2, c3, p3, p4] = await freePorts(5);
  // Strict reconfiguration refuses a member add until the member has been connected to every voter for 5 s.
  for (const deadline = Date.now() + 15000; Date.now() < deadline; await sleep(500)) {
    const r = await ctl(['member', 'add', 'probe', `--peer-urls=http://127.0.0.1:${p4}`, '--learner'], ep0);
    const id = /Member +([0-9a-f]+) added/.exec(r.stdout)?.[1];
    if (id) {
      expect((await ctl(['member', 'remove', id], ep0)).code).to.equal(0);
      break;
    }
  }
  const unixLearner = await step('add a learner with a unix:// peer URL', ['member', 'add', 'u', `--peer-urls=unix://127.0.0.1:${p1}`, '--learner'], ep0);
  await step('add a second learner', ['member', 'add', 'v', `--peer-urls=http://127.0.0.1:${p2}`, '--learner'], ep0);
  for (const [i, e] of side.endpoints.entries()) {
    await step(`promote a learner that never started, via member ${i}`, ['member', 'promote', idOf(unixLearner.stdout)], e);
  }
  await step('remove the learner', ['member', 'remove', idOf(unixLearner.stdout)], ep0);

  // A running learner.
  const learnerUrl = `http://127.0.0.1:${p3}`;
  const added = await step('add a learner', ['member', 'add', 'l', `--peer-urls=${learnerUrl}`, '--learner'], ep0);
  const learner = `127.0.0.1:${c3}`;
  const proc = stopLater(
    side.spawn(
      'l',
      memberArgs({ name: 'l', dataDir: join(side.dir, 'l.data'), clientUrl: `http://${learner}`, peerUrl: learnerUrl, initialCluster: `${side.initialCluster},l=${learnerUrl}`, token: 'side-by-side', state: 'existing' }),
    ),
  );
  for (const deadline = Date.now() + 30000; ; await sleep(300)) {
    const r = await ctl(['get', 'k', '--consistency=s', '--print-value-only'], learner);
    if (r.code === 0 && r.stdout.trim() === 'v1') break;
    if (Date.now() > deadline) throw new Error(`${side.label}: the learner never served k: ${r.stderr}\n${proc.log().split('\n').slice(-30).join('\n')}`);
  }
  await step('serializable get on the learner', ['get', 'k', '--consistency=s', '--print-value-only'], learner, (o) => o.trim());
  await step('linearizable get on the learner', ['get', 'k'], learner);
  await step('put on the learner', ['put', 'k', 'v2'], learner);
  await step('member list on the learner', ['member', 'list'], learner);
  await step('endpoint status of the learner', ['endpoint', 'status', '-w', 'json'], learner, (o) => String(/"isLearner":(\w+)/.exec(o)?.[1]));
  await step('move leadership to the learner', ['move-leader', idOf(added.stdout)], await leaderEndpoint());
  let promoted: Answer | undefined;
  for (const deadline = Date.now() + 20000; !promoted || (promoted.code !== 0 && Date.now() < deadline); await sleep(300)) {
    const r = await ctl(['member', 'promote', idOf(added.stdout)], ep0);
    promoted = { step: 'promote the learner once caught up', code: r.code, text: r.code === 0 ? '' : errorLine(r.stderr) };
  }
  answers.push(promoted!);
  await step('linearizable get on the promoted member', ['get', 'k', '--print-value-only'], learner, (o) => o.trim());

  // A voting member down (four voters, three up): a learner changes no quorum.
  const leader = await leaderEndpoint();
  const follower = side.endpoints.findIndex((e) => e !== leader);
  await side.kill(follower);
  await sleep(1000);
  await step('add a learner while a voting member is down', ['member', 'add', 'w', `--peer-urls=http://127.0.0.1:${p2}`, '--learner'], leader);
  return answers;
}

describe('learners, side by side with the reference 3.5', function () {
  this.timeout(300000);
  const clusters = useSvcClusters();
  const stopLater = useCleanup({ closeAfter: 'each' });

  it('svc answers every step as etcd v3.5.21 does', async () => {
    const ref = stopLater(await startReferenceCluster({ size: 3, binary: ref35('etcd') }));
    const svc = await clusters.start({ size: 3, version: '3.5.21' });
    const refSide: Side = {
      label: 'etcd 3.5.21',
      dir: ref.dir,
      initialCluster: ref.members.map((m) => `${m.name}=${m.peerUrl}`).join(','),
      endpoints: ref.endpoints,
      spawn: (name, args) => spawnLogged(ref35('etcd'), args, { logFile: join(ref.dir, `${name}.log`), name }),
      kill: async (i) => void (await ref.members[i].process.stop('SIGKILL', 5000)),
    };
    const svcSide: Side = {
      label: 'svc',
      dir: svc.dir,
      initialCluster: svc.members.map((m) => `${m.name}=${m.peerURL}`).join(','),
      endpoints: svc.members.map((m) => m.endpoint),
      spawn: (name, args) => spawnSvc(args, { logFile: join(svc.dir, `${name}.log`), name, version: '3.5.21' }),
      kill: async (i) => void (await svc.kill(i)),
    };
    const want = await scenario(refSide, stopLater);
    const got = await scenario(svcSide, stopLater);
    for (let i = 0; i < want.length; i++) expect(got[i], `step ${i}: ${want[i].step}`).to.deep.equal(want[i]);
    expect(got).to.have.length(want.length);
  });

  it('without --strict-reconfig-check both add a learner while a voting member is down, and the learner changes no quorum', async () => {
    const flags = ['--strict-reconfig-check=false'];
    const ref = stopLater(await startReferenceCluster({ size: 3, binary: ref35('etcd'), extraArgs: flags }));
    const svc = await clusters.start({ size: 3, version: '3.5.21', extraArgs: flags });
    const run = async (endpoints: string[], kill: (i: number) => Promise<unknown>) => {
      const [p] = await freePorts(1);
      const leader = await leaderIndex(endpoints);
      await kill(endpoints.findIndex((_, i) => i !== leader));
      const add = await ctl(['member', 'add', 'l', `--peer-urls=http://127.0.0.1:${p}`, '--learner'], endpoints[leader]);
      // Two voters of three up, the learner never started: writes still commit.
      const put = await ctl(['put', 'k', 'v'], endpoints[leader]);
      const list = await ctl(['member', 'list'], endpoints[leader]);
      return { add: [add.code, errorLine(add.stderr)], put: [put.code, errorLine(put.stderr)], learners: list.stdout.split('\n').filter((l) => l.endsWith(', true')).length };
    };
    const want = await run(ref.endpoints, (i) => ref.members[i].process.stop('SIGKILL', 5000));
    const got = await run(svc.members.map((m) => m.endpoint), (i) => svc.kill(i));
    expect(want).to.deep.equal({ add: [0, ''], put: [0, ''], learners: 1 });
    expect(got).to.deep.equal(want);
  });
});
