// What useOperator saves when a test fails, on a real operator pod whose container was restarted (as a failing
// liveness probe restarts it): the previous container's log, which `kubectl logs` alone no longer shows.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../harness/process.js';
import { repoRoot } from './binaries.js';
import { saveDiagnostics, useOperator } from './operator/fixture.js';

const NS = 'svc-diag';
const OPS = 'svc-diag-ops';
const CHART = join(repoRoot(), 'charts', 'svc-operator');

describe('k8s: diagnostics of a failed operator test', function () {
  this.timeout(240_000);
  const op = useOperator(NS, { controller: false, chartNamespace: OPS });

  it('saves the logs of the operator pod, the previous container\'s too, and the namespaces\' objects and Events', async () => {
    // watching only its own namespace, so it never meets the clusters of the other test files
    await op.tb.helm(['install', 'diag', CHART, '--namespace', OPS, '--set', 'crds.install=false', '--set', `watchNamespaces={${NS}}`,
      '--set', 'leaderElection.enabled=false', '--wait=false']);
    const pod = (): Promise<V1Pod | undefined> => op.tb.kubectl(['-n', OPS, 'get', 'pods', '-l', 'app.kubernetes.io/instance=diag', '-o', 'json'])
      .then((out) => (JSON.parse(out) as { items: V1Pod[] }).items[0]);
    const ready = (restarts: number) => async () => {
      const p = await pod();
      const c = p?.status?.containerStatuses?.[0];
      return c?.ready && c.restartCount === restarts ? p : undefined;
    };
    const first = await waitFor('the operator pod Ready', ready(0), 120_000, 500);
    await op.tb.node.killContainer(first.status!.containerStatuses![0].containerID!);
    const again = await waitFor('the operator container restarted and Ready', ready(1), 120_000, 500);

    const dir = join(op.tb.workDir, 'diagnostics-test');
    await saveDiagnostics(op.tb, dir, [NS, OPS], OPS, [{ msg: 'a controller log line' }]);
    const name = again.metadata!.name!;
    const previous = join(dir, `${name}.operator.previous.log`);
    expect(existsSync(previous), `${previous} saved`).to.equal(true);
    expect(readFileSync(previous, 'utf8')).to.contain('"msg":"informers synced"');
    expect(readFileSync(join(dir, `${name}.operator.log`), 'utf8')).to.contain('"msg":"informers synced"');
    expect(readFileSync(join(dir, `${name}.describe.txt`), 'utf8')).to.match(/Restart Count:\s+1/);
    expect(readFileSync(join(dir, `${OPS}.txt`), 'utf8')).to.contain(name).and.to.contain('--- events ---');
    expect(readFileSync(join(dir, 'controller.log'), 'utf8')).to.contain('a controller log line');
  });
});
