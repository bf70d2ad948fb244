// Strict reconfiguration (--strict-reconfig-check, on by default) for voters and learners, side by side with
// the reference 3.4.23 through the real etcdctl: the same refusals, with the same messages.
import { expect } from 'chai';
import { startSvcCluster, printLogsOnFailure, type SvcCluster } from '../../../harness/svc-cluster.js';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { etcdctl, type EtcdctlResult } from '../../../harness/etcdctl.js';
import { sleep } from '../../../harness/process.js';

/** The error line etcdctl ends with (its client logs warnings before it). */
const errorLine = (r: EtcdctlResult) => r.stderr.trim().split('\n').pop();

/** member add, repeated while the cluster answers "unhealthy cluster" (a member counts only after 5 s connected). */
async function addOnceHealthy(endpoint: string, args: string[]): Promise<EtcdctlResult> {
  const deadline = Date.now() + 20000;
  const earlier: string[] = [];
  for (;;) {
    const r = await etcdctl(['member', 'add', ...args], { endpoints: [endpoint] });
    // Seen once in CI: a retry found the member already added by an earlier attempt whose etcdctl had failed.
    // Take the member the cluster lists (so the refusals below are still checked) and print what happened.
    if (earlier.length && errorLine(r) === 'Error: etcdserver: Peer URLs already exists') {
      const list = await etcdctl(['member', 'list'], { endpoints: [endpoint] });
      const url = args.find((a) => a.startsWith('--peer-urls='))!.slice('--peer-urls='.length);
      const line = list.stdout.split('\n').find((l) => l.includes(url));
      process.stderr.write(`\nmember add retry found ${url} already added; earlier attempts:\n${earlier.join('\n')}\n`);
      if (line) return { code: 0, stdout: `Member ${line.split(',')[0]} added\n`, stderr: r.stderr };
    }
    if (r.code === 0 || errorLine(r) !== 'Error: etcdserver: unhealthy cluster' || Date.now() > deadline) return r;
    earlier.push(`code ${r.code}: ${r.stdout}${r.stderr}`);
    await sleep(500);
  }
}

const addedId = (r: EtcdctlResult) => /^Member +([0-9a-f]+) added/.exec(r.stdout)?.[1]; // %16x: padded with spaces

describe('strict reconfiguration: svc and the reference 3.4 refuse the same member adds', function () {
  this.timeout(180000);
  let svc: SvcCluster | undefined;
  let ref: ReferenceCluster | undefined;
  afterEach(async () => {
    await Promise.all([svc?.close(), ref?.stop()]);
    svc = ref = undefined;
  });
  printLogsOnFailure(() => [svc]);

  it('3 members, one stopped: a learner and a voter are both refused with "unhealthy cluster"', async function () {
    [svc, ref] = await Promise.all([startSvcCluster({ size: 3 }), startReferenceCluster({ size: 3 })]);
    const targets = [
      { name: 'svc', endpoint: svc.members[0].endpoint, stop: () => svc!.stop(2), waitInactive: () => svc!.waitForLog(0, /became inactive/) },
      { name: 'reference', endpoint: ref.endpoints[0], stop: () => ref!.members[2].process.stop(), waitInactive: () => ref!.members[0].process.waitForLog(/became inactive/, 30000) },
    ];
    for (const [i, t] of targets.entries()) {
      // With every member up, a learner may be added (once connected long enough), and removed again.
      const ok = await addOnceHealthy(t.endpoint, [`learner-ok-${i}`, `--peer-urls=http://127.0.0.1:${29810 + i}`, '--learner']);
      expect(ok.code, `${t.name}: ${ok.stderr}`).to.equal(0);
      const rm = await etcdctl(['member', 'remove', addedId(ok)!], { endpoints: [t.endpoint] });
      expect(rm.code, `${t.name}: ${rm.stderr}`).to.equal(0);

      await t.stop();
      await t.waitInactive();
      const learner = await etcdctl(['member', 'add', `learner-${i}`, `--peer-urls=http://127.0.0.1:${29820 + i}`, '--learner'], { endpoints: [t.endpoint] });
      expect(learner.code, t.name).to.equal(1);
      expect(errorLine(learner), t.name).to.equal('Error: etcdserver: unhealthy cluster');
      const voter = await etcdctl(['member', 'add', `voter-${i}`, `--peer-urls=http://127.0.0.1:${29830 + i}`], { endpoints: [t.endpoint] });
      expect(voter.code, t.name).to.equal(1);
      expect(errorLine(voter), t.name).to.equal('Error: etcdserver: unhealthy cluster');
      const list = await etcdctl(['member', 'list'], { endpoints: [t.endpoint] });
      expect(list.stdout.trim().split('\n'), `${t.name}: nothing was added`).to.have.length(3);
    }
  });

  it('1 member plus an unstarted voter: a third voter lacks started members, a learner the connection', async function () {
    [svc, ref] = await Promise.all([startSvcCluster({ size: 1 }), startReferenceCluster({ size: 1 })]);
    for (const [i, endpoint] of [svc.members[0].endpoint, ref.endpoints[0]].entries()) {
      const name = i === 0 ? 'svc' : 'reference';
      // The reference's exception: a second voter may join a 1-member cluster before it starts.
      const second = await etcdctl(['member', 'add', `second-${i}`, `--peer-urls=http://127.0.0.1:${29840 + i}`], { endpoints: [endpoint] });
      expect(second.code, `${name}: ${second.stderr}`).to.equal(0);
      const third = await etcdctl(['member', 'add', `third-${i}`, `--peer-urls=http://127.0.0.1:${29850 + i}`], { endpoints: [endpoint] });
      expect(third.code, name).to.equal(1);
      expect(errorLine(third), name).to.equal('Error: etcdserver: re-configuration failed due to not enough started members');
      const learner = await etcdctl(['member', 'add', `learner-${i}`, `--peer-urls=http://127.0.0.1:${29860 + i}`, '--learner'], { endpoints: [endpoint] });
      expect(learner.code, name).to.equal(1);
      expect(errorLine(learner), name).to.equal('Error: etcdserver: unhealthy cluster');
    }
  });
});
