// Pod lifecycle on the node agent: exec and liveness probes, restarts, graceful deletion with SIGKILL after the
// grace period, and restartPolicy Never.
import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { sharedTestbed } from './fixture.js';
import { waitFor } from './proc.js';
import type { Testbed } from './testbed.js';

const NS = 'pod-check';

async function pod(tb: Testbed, name: string): Promise<V1Pod | undefined> {
  const out = await tb.kubectl(['-n', NS, 'get', 'pods', '--field-selector', `metadata.name=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: V1Pod[] }).items[0];
}

function processAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

describe('k8s testbed: pod lifecycle on the node agent', function () {
  this.timeout(180_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    await tb.kubectl(['create', 'namespace', NS]);
    await waitFor('the default service account', async () =>
      (await tb.kubectl(['-n', NS, 'get', 'serviceaccount', 'default', '-o', 'name'])).trim() ? true : undefined, 60_000);
  });

  it('runs exec readiness probes and restarts a container whose liveness probe fails', async () => {
    // the first life falls sick after 1.5 s (liveness fails; it cleans up on SIGTERM), the second stays healthy
    const script = [
      "const fs = require('fs'), d = process.env.DIR;",
      "fs.appendFileSync(d + '/lives', 'x\\n');",
      "process.on('SIGTERM', () => { fs.rmSync(d + '/sick', { force: true }); process.exit(0); });",
      "if (fs.readFileSync(d + '/lives', 'utf8').trim().split('\\n').length === 1) setTimeout(() => fs.writeFileSync(d + '/sick', ''), 1500);",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probed' },
      spec: {
        terminationGracePeriodSeconds: 2,
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{
          name: 'main', image: 'node:20', command: ['node', '-e', script],
          env: [{ name: 'DIR', value: '/scratch' }],
          volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
          readinessProbe: { exec: { command: ['test', '-f', '/scratch/lives'] }, periodSeconds: 1 },
          livenessProbe: { exec: { command: ['sh', '-c', 'test ! -f /scratch/sick'] }, periodSeconds: 1, failureThreshold: 1 },
        }],
      },
    }));
    const p = await waitFor('the liveness probe to restart the container, and the second life to be ready', async () => {
      const x = await pod(tb, 'probed');
      const cs = x?.status?.containerStatuses?.[0];
      return cs && cs.restartCount >= 1 && cs.ready ? x : undefined;
    }, 90_000);
    const cs = p.status?.containerStatuses?.[0];
    expect(cs?.restartCount).to.equal(1);
    expect(cs?.lastState?.terminated).to.be.an('object');
    expect(cs?.state?.running).to.be.an('object');
    await tb.kubectl(['-n', NS, 'delete', 'pod', 'probed', '--wait=true']);
  });

  it('deletes a pod that ignores SIGTERM: SIGKILL after the grace period, then the object is gone', async () => {
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stubborn' },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'main', image: 'node:20', command: ['node', '-e', "process.on('SIGTERM',()=>{});setInterval(()=>{},1000)"] }],
      },
    }));
    const running = await waitFor('stubborn to run', async () => {
      const x = await pod(tb, 'stubborn');
      return x?.status?.containerStatuses?.[0].ready ? x : undefined;
    }, 60_000);
    const pid = Number(running.status?.containerStatuses?.[0].containerID?.replace('svc-test://', ''));
    expect(pid).to.be.greaterThan(0);
    expect(processAlive(pid)).to.equal(true);
    await tb.kubectl(['-n', NS, 'delete', 'pod', 'stubborn', '--wait=true', '--timeout=60s']);
    expect(await pod(tb, 'stubborn')).to.equal(undefined);
    expect(processAlive(pid)).to.equal(false);
  });

  it('reports Succeeded for a pod with restartPolicy Never whose command exits 0', async () => {
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'once' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['true'] }] },
    }));
    const done = await waitFor('once to succeed', async () => {
      const x = await pod(tb, 'once');
      return x?.status?.phase === 'Succeeded' ? x : undefined;
    }, 60_000);
    expect(done.status?.containerStatuses?.[0].state?.terminated?.exitCode).to.equal(0);
  });

  it('reports termination messages as the kubelet does: the file (at most 4096 bytes), a custom path, logs on error', async () => {
    const write = "require('fs').writeFileSync(process.argv[1], process.argv[2].repeat(Number(process.argv[3])))";
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'messages' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'big', image: 'node:20', command: ['node', '-e', write, '/dev/termination-log', 'x', '5000'] },
          { name: 'custom', image: 'node:20', command: ['node', '-e', write, '$(MSG)', 'hello', '1'], env: [{ name: 'MSG', value: '/tmp/msg' }], terminationMessagePath: '/tmp/msg' },
          { name: 'fallback', image: 'node:20', command: ['node', '-e', "console.error('boom'); process.exit(3)"], terminationMessagePolicy: 'FallbackToLogsOnError' },
        ],
      },
    }));
    const done = await waitFor('messages to finish', async () => {
      const x = await pod(tb, 'messages');
      return x?.status?.phase === 'Failed' ? x : undefined;
    }, 60_000);
    const term = (name: string) => done.status!.containerStatuses!.find((c) => c.name === name)!.state!.terminated!;
    expect(term('big').message).to.equal('x'.repeat(4096));
    expect(term('custom').message).to.equal('hello');
    expect(term('fallback')).to.include({ exitCode: 3 });
    expect(term('fallback').message).to.contain('boom');
  });
});
