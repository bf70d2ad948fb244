// The Argo CD health check shipped in docs (docs/argocd/svc.dev_SvcCluster.lua) run by gopher-lua, the interpreter
// Argo CD embeds (scripts/build-argocd-lua.sh builds a tiny runner from the Go module proxy), against SvcCluster
// objects whose status the operator's own code computed: created, Ready, upgrading, refused, a pod problem, a member
// down, a spec not yet observed. docs/kubernetes.md must show the same script.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { computeStatus, stoppedStatus, type StatusInput } from '../../../operator/controller/status.js';
import type { SvcClusterStatus } from '../../../operator/api/types.js';
import type { ObservedMember } from '../../../operator/planner/types.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SCRIPT = join(ROOT, 'docs', 'argocd', 'svc.dev_SvcCluster.lua');

function member(name: string, release: string, leader = false, healthy = true): ObservedMember {
  return { name, configuredVersion: release, running: true, release, clusterVersion: '3.5.0', healthy, leader, appliedIndex: 10, id: '1' };
}
const ms = [member('kv-0', '3.5.21'), member('kv-1', '3.5.21', true), member('kv-2', '3.5.21')];
function input(over: Partial<StatusInput> = {}): StatusInput {
  const members = over.observed?.members ?? ms;
  return {
    generation: 2, spec: { version: '3.5.21', replicas: 3 }, observed: { now: 0, members },
    pods: new Map(members.map((m) => [m.name, { image: `svc:v${m.release}`, ready: m.healthy }])),
    step: { kind: 'steady', version: '3.5.21' }, now: new Date('2026-01-01T00:00:00Z'), ...over,
  };
}

describe('operator: the Argo CD health check (Lua) in docs', function () {
  this.timeout(300_000);
  let runner: string;
  let dir: string;

  before(function () {
    // built once from the Go module proxy (about a second when the module is cached, longer the first time)
    const r = spawnSync('bash', [join(ROOT, 'scripts', 'build-argocd-lua.sh')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`cannot build the gopher-lua runner (scripts/build-argocd-lua.sh, needs Go and the Go module proxy): ${r.stderr.trim().split('\n').at(-1)}`);
    runner = join(r.stdout.trim().split('\n').at(-1)!, 'lua-health');
    dir = mkdtempSync(join(tmpdir(), 'argocd-lua-'));
  });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  const health = (status: SvcClusterStatus | undefined, generation = 2): { status: string; message: string } => {
    const file = join(dir, 'obj.json');
    writeFileSync(file, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'kv', namespace: 'prod', generation }, spec: { version: '3.5.21', replicas: 3 }, ...(status ? { status: JSON.parse(JSON.stringify(status)) as unknown } : {}) }));
    const r = spawnSync(runner, [SCRIPT, file], { encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    return JSON.parse(r.stdout) as { status: string; message: string };
  };

  it('docs/kubernetes.md shows the script as shipped', () => {
    expect(readFileSync(join(ROOT, 'docs', 'kubernetes.md'), 'utf8')).to.contain(readFileSync(SCRIPT, 'utf8').trim());
  });

  it('no status yet, or a generation not observed yet: Progressing', () => {
    expect(health(undefined)).to.deep.equal({ status: 'Progressing', message: 'Waiting for svc-operator to report status' });
    expect(health(computeStatus(input()), 3)).to.deep.equal({ status: 'Progressing', message: 'Waiting for svc-operator to act on generation 3' });
  });

  it('a Ready cluster is Healthy', () => {
    expect(health(computeStatus(input()))).to.deep.equal({ status: 'Healthy', message: '3 of 3 members healthy on 3.5.21' });
  });

  it('creating and upgrading are Progressing with the step', () => {
    const creating = computeStatus(input({ observed: { now: 0, members: [member('kv-0', '3.5.21', true), { ...member('kv-1', '3.5.21', false, false), release: undefined }] }, step: { kind: 'wait', code: 'MemberStarting', reason: 'kv-1 is starting' } }));
    expect(health(creating)).to.deep.equal({ status: 'Progressing', message: 'MemberStarting: kv-1 is starting' });
    const progress = { from: '3.4.34', to: '3.5.21', step: 'restartMember' as const, startedAt: 0, restarts: {}, membersDone: ['kv-0'] };
    const up = computeStatus(input({ step: { kind: 'restartMember', member: 'kv-2', version: '3.5.21' }, progress, previous: computeStatus(input()) }));
    expect(health(up).status).to.equal('Progressing');
    expect(health(up).message).to.match(/^restartMember: /);
  });

  it('a refused upgrade, a pod problem and a refused spec are Degraded with the reason; a member down is Degraded', () => {
    const refused = computeStatus(input({ spec: { version: '3.3.27', replicas: 3 }, step: { kind: 'blocked', code: 'DowngradeAfterCompletion', reason: 'no downgrade after completion', condition: 'UpgradeBlocked' } }));
    expect(health(refused)).to.deep.equal({ status: 'Degraded', message: 'DowngradeAfterCompletion: no downgrade after completion' });
    const pull = computeStatus(input({ podProblems: [{ reason: 'ImagePullBackOff', object: 'kv-0', message: 'Back-off pulling image "svc:v9"' }] }));
    expect(health(pull)).to.deep.equal({ status: 'Degraded', message: 'ImagePullBackOff: kv-0: ImagePullBackOff: Back-off pulling image "svc:v9"' });
    const invalid = stoppedStatus(computeStatus(input()), 2, 'InvalidSpec', 'spec.replicas must be odd', new Date('2026-01-01T00:01:00Z'));
    expect(health(invalid)).to.deep.equal({ status: 'Degraded', message: 'InvalidSpec: spec.replicas must be odd' });
    const down = computeStatus(input({ observed: { now: 0, members: [member('kv-0', '3.5.21', false, false), ms[1], ms[2]] }, step: { kind: 'wait', code: 'MemberUnhealthy', reason: 'kv-0 is not healthy' }, previous: computeStatus(input()) }));
    expect(health(down).status).to.equal('Degraded');
  });
});
