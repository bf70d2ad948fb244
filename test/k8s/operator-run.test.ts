// `svc-operator run` as a process: it takes the Lease, reports ready once its informers synced, serves
// /metrics, and on SIGTERM stops, releases the Lease and exits 0.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { sharedTestbed } from './fixture.js';
import { installCrd } from './operator/helpers.js';
import { spawnLogged, waitForHttp } from '../../harness/process.js';
import { freePort } from '../../harness/ports.js';
import type { Testbed } from './testbed.js';

const MAIN = fileURLToPath(new URL('../../operator/cli/main.js', import.meta.url));

describe('k8s: svc-operator run', function () {
  this.timeout(90_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    await installCrd(tb);
  });

  it('leads through its Lease, is ready, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const operator = spawnLogged(process.execPath, ['--input-type=module', '-e',
      `import(${JSON.stringify(MAIN)}).then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })`,
      'run', `--kubeconfig=${tb.kubeconfigPath}`, `--probe-port=${port}`, '--leader-elect=true'],
    { name: 'svc-operator', logFile: join(tb.controlPlane.logDir, 'operator-run.log'), env: { POD_NAMESPACE: 'default', POD_NAME: 'op-test' } });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, { timeoutMs: 60_000, process: operator });
      const holder = await tb.kubectl(['-n', 'default', 'get', 'lease', 'svc-operator', '-o', 'jsonpath={.spec.holderIdentity}']);
      expect(holder).to.match(/^op-test-[0-9a-f]{8}$/);
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).to.contain('svc_operator_reconcile_duration_seconds');
      expect(operator.log()).to.contain('"msg":"informers synced"');
    } finally {
      await operator.stop('SIGTERM', 30_000);
    }
    expect(operator.exitStatus(), operator.log()).to.deep.equal({ code: 0, signal: null });
    expect(await tb.kubectl(['-n', 'default', 'get', 'lease', 'svc-operator', '-o', 'jsonpath={.spec.holderIdentity}'])).to.equal('');
  });
});
