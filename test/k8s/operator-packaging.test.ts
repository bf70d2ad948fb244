// Packaging of the operator: the Dockerfile's facts (parsed; test/k8s/images/build-images.sh builds it), the Helm chart (lint,
// render, least-privilege RBAC checked by the real apiserver's authorizer) and the example manifests
// (valid for operator/api and accepted by the apiserver).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import { parseSvcCluster } from '../../operator/api/validate.js';
import { svcClusterCrdYaml } from '../../operator/controller/crd.js';
import { repoRoot } from './binaries.js';
import { sharedTestbed } from './fixture.js';
import { createNamespace, installCrd } from './operator/helpers.js';
import type { Testbed } from './testbed.js';

const ROOT = repoRoot();
const CHART = join(ROOT, 'charts', 'svc-operator');

interface Instruction { op: string; args: string }

/** Dockerfile instructions (continuation lines joined, comments dropped), split into stages at FROM. */
function dockerStages(text: string): Instruction[][] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const stages: Instruction[][] = [[]];
  for (const l of lines) {
    const m = /^(\S+)\s+(.*)$/.exec(l)!;
    const ins = { op: m[1].toUpperCase(), args: m[2] };
    if (ins.op === 'FROM') stages.push([]);
    stages.at(-1)!.push(ins);
  }
  return stages;
}

describe('k8s: packaging of the operator', function () {
  this.timeout(120_000);

  it('the Dockerfile: multi-stage, non-root member and operator targets, ARG/ENV SVC_VERSION, the .proto files copied', () => {
    const stages = dockerStages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    const built = stages.slice(1);
    expect(built.length, 'FROM stages').to.be.at.least(2);
    const named = (name: string) => built.find((s) => new RegExp(`\\sAS\\s+${name}$`, 'i').test(s[0].args));
    // the default target (last stage) is the member image; `--target operator` the operator's; both FROM app
    const final = built.at(-1)!;
    expect(final[0].args, 'the last stage').to.match(/\sAS\s+svc$/i);
    const operator = named('operator');
    expect(operator, 'an operator stage').to.not.equal(undefined);
    expect(operator!.some((i) => i.op === 'ENTRYPOINT' && /svc-operator/.test(i.args))).to.equal(true);
    const app = named('app')!;
    expect(final[0].args.split(/\s+/)[0]).to.equal('app');
    const users = final.filter((i) => i.op === 'USER').map((i) => i.args.split(':')[0]);
    expect(users.length).to.be.at.least(1);
    expect(users.at(-1)).to.not.match(/^(root|0)$/);
    expect(final.some((i) => i.op === 'ARG' && /^SVC_VERSION(=\d+\.\d+\.\d+)?$/.test(i.args))).to.equal(true);
    expect(final.some((i) => i.op === 'ENV' && /SVC_VERSION=\$\{?SVC_VERSION\}?/.test(i.args))).to.equal(true);
    const protoCopy = app.find((i) => i.op === 'COPY' && /server\/api\/proto/.test(i.args));
    expect(protoCopy, 'COPY of server/api/proto').to.not.equal(undefined);
    const src = protoCopy!.args.split(/\s+/).filter((w) => !w.startsWith('--'))[0];
    const protos = (readdirSync(join(ROOT, src), { recursive: true }) as string[]).filter((f) => f.endsWith('.proto'));
    expect(protos.length, 'proto files in the copied folder').to.be.greaterThan(0);
    expect(app.some((i) => i.op === 'COPY' && /dist\/operator/.test(i.args)), 'the operator is in the image').to.equal(true);
    expect(app.some((i) => i.op === 'RUN' && /svc-operator/.test(i.args)), 'svc-operator on PATH').to.equal(true);
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).to.include.members(['node_modules', '.git']);
  });

  describe('the Helm chart', () => {
    let tb: Testbed;
    before(async () => {
      tb = await sharedTestbed();
    });

    it('lints clean and carries the generated CRD', async () => {
      const out = await tb.helm(['lint', '--strict', CHART]);
      expect(out).to.contain('0 chart(s) failed');
      expect(out).to.not.match(/\[(WARNING|ERROR)\]/);
      expect(readFileSync(join(CHART, 'crds', 'svc.dev_svcclusters.yaml'), 'utf8')).to.equal(svcClusterCrdYaml());
    });

    it('renders a non-root, read-only-root-filesystem operator; values.schema.json refuses bad values', async () => {
      const docs = loadAll(await tb.helm(['template', 'ops', CHART, '--namespace', 'svc-operator'])) as Array<{ kind: string; spec: Record<string, unknown> }>;
      const dep = docs.find((d) => d?.kind === 'Deployment') as unknown as { spec: { template: { spec: { securityContext: Record<string, unknown>; containers: Array<{ securityContext: Record<string, unknown>; args: string[]; livenessProbe: unknown; readinessProbe: unknown }> } } } };
      expect(dep.spec.template.spec.securityContext).to.include({ runAsNonRoot: true, runAsUser: 65532 });
      const c = dep.spec.template.spec.containers[0];
      expect(c.securityContext).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(c.args[0]).to.equal('run');
      expect(c.livenessProbe).to.not.equal(undefined);
      expect(c.readinessProbe).to.not.equal(undefined);
      expect(c.args).to.include('--leader-elect=true');
      // the chart's default image is the operator image our Dockerfile's convention produces (and the node runs)
      const appVersion = /^appVersion:\s*"?([^"\s]+)"?/m.exec(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))![1];
      expect((c as unknown as { image: string }).image).to.equal(`svc-operator:v${appVersion}`).and.to.equal(tb.images.operator);
      expect((c as unknown as { env: Array<{ name: string; value?: string }> }).env.find((e) => e.name === 'SVC_OPERATOR_IMAGE')?.value, 'the image the backup Jobs run').to.equal(tb.images.operator);
      const refused = async (...set: string[]): Promise<string> => {
        let err = '';
        await tb.helm(['template', 'ops', CHART, ...set.flatMap((x) => ['--set', x])]).catch((e: Error) => { err = e.message; });
        return err;
      };
      expect(await refused('replicaCount=3')).to.match(/replicaCount/);
      expect(await refused('image.pullPolicy=Sometimes')).to.match(/pullPolicy/);
      expect(await refused('replicaCount=2', 'leaderElection.enabled=false')).to.contain('replicaCount above 1 needs leaderElection.enabled');
    });

    it('installs; its RBAC grants what the controller uses and nothing more', async () => {
      await installCrd(tb);
      await createNamespace(tb, 'svc-operator');
      // replicaCount 0: the RBAC is what is checked here (e2e-upgrade.test.ts runs the operator's pod)
      await tb.helm(['install', 'ops', CHART, '--namespace', 'svc-operator', '--set', 'replicaCount=0', '--wait=false']);
      const sa = 'system:serviceaccount:svc-operator:ops-svc-operator';
      const can = async (verb: string, resource: string, ns = 'default'): Promise<boolean> => {
        const out = await tb.kubectl(['auth', 'can-i', verb, resource, '-n', ns, '--as', sa]).catch((e: Error) => e.message);
        return /^yes/m.test(out);
      };
      for (const [verb, res] of [['watch', 'svcclusters.svc.dev'], ['patch', 'svcclusters.svc.dev/status'], ['delete', 'pods'], ['patch', 'statefulsets.apps'],
        ['create', 'services'], ['patch', 'configmaps'], ['create', 'poddisruptionbudgets.policy'], ['create', 'events'], ['list', 'events'], ['get', 'secrets'],
        ['create', 'jobs.batch'], ['get', 'jobs.batch'], ['delete', 'jobs.batch'], ['get', 'persistentvolumeclaims'], ['create', 'persistentvolumeclaims']]) {
        expect(await can(verb, res), `${verb} ${res}`).to.equal(true);
      }
      expect(await can('update', 'leases.coordination.k8s.io', 'svc-operator'), 'its own Lease').to.equal(true);
      expect(await can('update', 'leases.coordination.k8s.io', 'kube-system'), 'leases elsewhere').to.equal(false);
      for (const [verb, res] of [['list', 'secrets'], ['watch', 'secrets'], ['delete', 'statefulsets.apps'], ['delete', 'svcclusters.svc.dev'], ['create', 'pods'], ['delete', 'persistentvolumeclaims'], ['update', 'nodes'], ['update', 'jobs.batch']]) {
        expect(await can(verb, res), `${verb} ${res}`).to.equal(false);
      }
    });

    it('every example is a valid SvcCluster the apiserver accepts', async () => {
      const dir = join(ROOT, 'examples');
      const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
      expect(files.length).to.be.at.least(4);
      for (const f of files) {
        const text = readFileSync(join(dir, f), 'utf8');
        for (const doc of loadAll(text)) parseSvcCluster(doc);
        await tb.kubectl(['apply', '--dry-run=server', '-n', 'default', '-f', '-'], text);
      }
    });
  });
});
