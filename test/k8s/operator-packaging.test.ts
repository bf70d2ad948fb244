// Packaging of the operator: the Dockerfile's facts (parsed; test/k8s/images/build-images.sh builds it), the Helm chart (lint,
// render, least-privilege RBAC checked by the real apiserver's authorizer) and the example manifests
// (valid for operator/api and accepted by the apiserver).
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump, loadAll } from 'js-yaml';
import { parseSvcCluster } from '../../operator/api/validate.js';
import { svcClusterCrdYaml } from '../../operator/api/crd.js';
import { repoRoot } from './binaries.js';
import { sharedTestbed } from './fixture.js';
import type { Controller } from '../../operator/controller/controller.js';
import { createRestrictedNamespace } from './namespaces.js';
import { installCrd, removeNamespace, testController } from './operator/helpers.js';
import { useOperator } from './operator/fixture.js';
import { waitFor } from '../../harness/process.js';
import type { Testbed } from './testbed.js';

const ROOT = repoRoot();
const CHART = join(ROOT, 'charts', 'svc-operator');
const CHART_CRD = join('files', 'crds', 'svc.dev_svcclusters.yaml');
const CRD = 'crd/svcclusters.svc.dev';
const OPNS = 'svc-operator';
/** The testbed's Kubernetes release (`helm template` assumes 1.20 without it). */
const KUBE = '1.34.4';

type Doc = { kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; spec: Record<string, unknown> };
interface PodSpec { priorityClassName?: string; containers: Array<{ args: string[] }> }
interface Dep { metadata: { name: string }; spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { annotations?: Record<string, string> }; spec: PodSpec } } }

/**
 * Lets release `release` of namespace `ns` own the CRD that installCrd applied: what a user of a chart version that
 * shipped it in crds/ does once before upgrading (the chart README's migration step).
 */
async function adoptCrd(tb: Testbed, release: string, ns: string): Promise<void> {
  await tb.kubectl(['label', '--overwrite', CRD, 'app.kubernetes.io/managed-by=Helm']);
  await tb.kubectl(['annotate', '--overwrite', CRD, `meta.helm.sh/release-name=${release}`, `meta.helm.sh/release-namespace=${ns}`]);
}

/** Puts the generated CRD back as the other test files expect it (no Helm owner, no field a test added). */
async function restoreCrd(tb: Testbed): Promise<void> {
  await tb.kubectl(['replace', '-f', '-'], svcClusterCrdYaml());
  await installCrd(tb);
}

const cluster = (ns: string, name: string, spec: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: ns }, spec: { version: '3.5.21', replicas: 3, ...spec } });

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
    const protoCopy = app.find((i) => i.op === 'COPY' && /server\/wire\/proto/.test(i.args));
    expect(protoCopy, 'COPY of server/wire/proto').to.not.equal(undefined);
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
      expect(readFileSync(join(CHART, CHART_CRD), 'utf8')).to.equal(svcClusterCrdYaml());
      // crds/ is never upgraded by Helm: the CRD is a template instead
      expect(readdirSync(CHART)).to.not.include('crds');
    });

    it('renders a non-root, read-only-root-filesystem operator; values.schema.json refuses bad values', async () => {
      const docs = loadAll(await tb.helm(['template', 'ops', CHART, '--namespace', 'svc-operator', '--kube-version', KUBE])) as Array<{ kind: string; spec: Record<string, unknown> }>;
      const dep = docs.find((d) => d?.kind === 'Deployment') as unknown as { spec: { template: { spec: { securityContext: Record<string, unknown>; containers: Array<{ securityContext: Record<string, unknown>; args: string[]; livenessProbe: { timeoutSeconds?: number }; readinessProbe: unknown }> } } } };
      expect(dep.spec.template.spec.securityContext).to.include({ runAsNonRoot: true, runAsUser: 65532 });
      const c = dep.spec.template.spec.containers[0];
      expect(c.securityContext).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(c.args[0]).to.equal('run');
      // a liveness answer slower than 1 s (the default timeout) on a loaded node must not restart the operator
      expect(c.livenessProbe.timeoutSeconds, 'the liveness probe\'s timeout').to.be.above(1);
      expect(c.readinessProbe).to.not.equal(undefined);
      expect(c.args).to.include('--leader-elect=true');
      // the chart's default image is the operator image our Dockerfile's convention produces (and the node runs)
      const appVersion = /^appVersion:\s*"?([^"\s]+)"?/m.exec(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))![1];
      expect((c as unknown as { image: string }).image).to.equal(`svc-operator:v${appVersion}`).and.to.equal(tb.images.operator);
      expect((c as unknown as { env: Array<{ name: string; value?: string }> }).env.find((e) => e.name === 'SVC_OPERATOR_IMAGE')?.value, 'the image the backup Jobs run').to.equal(tb.images.operator);
      const refused = async (...set: string[]): Promise<string> => {
        let err = '';
        await tb.helm(['template', 'ops', CHART, '--kube-version', KUBE, ...set.flatMap((x) => ['--set', x])]).catch((e: Error) => { err = e.message; });
        return err;
      };
      expect(await refused('replicaCount=3')).to.match(/replicaCount/);
      expect(await refused('image.pullPolicy=Sometimes')).to.match(/pullPolicy/);
      expect(await refused('replicaCount=2', 'leaderElection.enabled=false')).to.contain('replicaCount above 1 needs leaderElection.enabled');
      expect(await refused('watchNamespaces={Bad_Name}')).to.match(/watchNamespaces/);
      expect(await refused('tests.version=latest')).to.match(/tests/);
    });

    it('kubeVersion, global, name overrides, podAnnotations, priorityClassName, extraArgs; the namespace-scoped mode renders Roles only; monitoring behind flags', async () => {
      const render = async (...set: string[]) => loadAll(await tb.helm(['template', 'ops', CHART, '--namespace', OPNS, '--kube-version', KUBE, ...set.flatMap((x) => ['--set', x])])).filter(Boolean) as Doc[];
      let err = '';
      await tb.helm(['template', 'ops', CHART, '--kube-version', '1.27.9']).catch((e: Error) => { err = e.message; });
      expect(err).to.contain('kubeVersion');
      const docs = await render('global.imageRegistry=example.org', 'global.anything.nested=1', 'fullnameOverride=my-op', 'podAnnotations.team=kv',
        'priorityClassName=system-cluster-critical', 'extraArgs={--probe-address=0.0.0.0}');
      const dep = docs.find((d) => d.kind === 'Deployment') as unknown as Dep;
      expect(dep.metadata.name).to.equal('my-op');
      expect(dep.spec.template.metadata.annotations).to.deep.equal({ team: 'kv' });
      expect(dep.spec.template.spec.priorityClassName).to.equal('system-cluster-critical');
      expect(dep.spec.template.spec.containers[0].args.at(-1)).to.equal('--probe-address=0.0.0.0');
      expect(docs.find((d) => d.kind === 'ClusterRole')!.metadata.name).to.equal('my-op');
      const named = (await render('nameOverride=kv-op')).find((d) => d.kind === 'Deployment') as unknown as Dep;
      expect(named.metadata.name).to.equal('ops-kv-op');
      expect(named.spec.selector.matchLabels).to.include({ 'app.kubernetes.io/name': 'kv-op' });
      // namespace-scoped: a Role and RoleBinding per watched namespace (plus the Lease's), nothing cluster-wide but the CRD
      const scoped = await render('watchNamespaces={team-a,team-b}', 'clusterSelector=svc.dev/shard in (a)', 'leaderElection.leaseName=svc-operator-a');
      expect(scoped.filter((d) => /^Cluster/.test(d.kind)).map((d) => d.kind)).to.deep.equal([]);
      expect(scoped.filter((d) => d.kind === 'Role' && !d.metadata.annotations?.['helm.sh/hook']).map((d) => d.metadata.namespace).sort()).to.deep.equal([OPNS, 'team-a', 'team-b']);
      const args = (scoped.find((d) => d.kind === 'Deployment') as unknown as Dep).spec.template.spec.containers[0].args;
      expect(args).to.include.members(['--namespaces=team-a,team-b', '--cluster-selector=svc.dev/shard in (a)', '--lease-name=svc-operator-a']);
      // monitoring, off by default: the rule file and the dashboard as they are in files/monitoring/
      expect(docs.map((d) => d.kind)).to.not.include.members(['PrometheusRule', 'PodMonitor', 'ServiceMonitor']);
      const mon = await render('prometheusRule.enabled=true', 'podMonitor.enabled=true', 'serviceMonitor.enabled=true', 'grafanaDashboard.enabled=true');
      const rule = mon.find((d) => d.kind === 'PrometheusRule')!;
      expect(rule.spec).to.deep.equal(loadAll(readFileSync(join(CHART, 'files', 'monitoring', 'prometheus-rules.yaml'), 'utf8'))[0]);
      const board = mon.find((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-dashboard')) as unknown as { data: Record<string, string> };
      expect(JSON.parse(board.data['svc.json'])).to.deep.equal(JSON.parse(readFileSync(join(CHART, 'files', 'monitoring', 'grafana-dashboard.json'), 'utf8')));
      expect(mon.find((d) => d.kind === 'PodMonitor')).to.not.equal(undefined);
      expect((mon.find((d) => d.kind === 'ServiceMonitor')!.spec as { endpoints: Array<{ honorLabels: boolean }> }).endpoints[0].honorLabels).to.equal(true);
      // the helm test's cluster goes to the first watched namespace
      const hookRole = scoped.find((d) => d.kind === 'Role' && d.metadata.annotations?.['helm.sh/hook'] === 'test');
      expect(hookRole!.metadata.namespace).to.equal('team-a');
    });

    it('installs; its RBAC grants what the controller uses and nothing more', async () => {
      await installCrd(tb);
      await createRestrictedNamespace(tb, OPNS);
      await adoptCrd(tb, 'ops', OPNS);
      // replicaCount 0: the RBAC is what is checked here (e2e-upgrade.test.ts runs the operator's pod)
      await tb.helm(['upgrade', '--install', 'ops', CHART, '--namespace', OPNS, '--set', 'replicaCount=0', '--wait=false']);
      const sa = 'system:serviceaccount:svc-operator:ops-svc-operator';
      const can = async (verb: string, resource: string, ns = 'default'): Promise<boolean> => {
        // `res/sub` is a subresource here (kubectl would read it as a resource name)
        const [res, sub] = resource.split('/');
        const out = await tb.kubectl(['auth', 'can-i', verb, res, ...(sub ? [`--subresource=${sub}`] : []), '-n', ns, '--as', sa]).catch((e: Error) => e.message);
        return /^yes/m.test(out);
      };
      for (const [verb, res] of [['watch', 'svcclusters.svc.dev'], ['patch', 'svcclusters.svc.dev/status'], ['delete', 'pods'], ['patch', 'statefulsets.apps'],
        ['create', 'services'], ['patch', 'configmaps'], ['create', 'poddisruptionbudgets.policy'], ['create', 'events'], ['list', 'events'], ['get', 'secrets'],
        ['create', 'jobs.batch'], ['get', 'jobs.batch'], ['delete', 'jobs.batch'], ['get', 'persistentvolumeclaims'], ['create', 'persistentvolumeclaims'],
        ['delete', 'persistentvolumeclaims'], ['update', 'svcclusters.svc.dev/finalizers'],
        // maintenance: a member labelled out of the client Service and its EndpointSlices read; volumes grown (the
        // claim resized, the StatefulSet recreated with its pods orphaned, the class read)
        ['patch', 'pods'], ['list', 'endpointslices.discovery.k8s.io'], ['patch', 'persistentvolumeclaims'], ['delete', 'statefulsets.apps'], ['get', 'storageclasses.storage.k8s.io']]) {
        expect(await can(verb, res), `${verb} ${res}`).to.equal(true);
      }
      expect(await can('update', 'leases.coordination.k8s.io', 'svc-operator'), 'its own Lease').to.equal(true);
      expect(await can('update', 'leases.coordination.k8s.io', 'kube-system'), 'leases elsewhere').to.equal(false);
      for (const [verb, res] of [['list', 'secrets'], ['watch', 'secrets'], ['delete', 'services'], ['delete', 'svcclusters.svc.dev'], ['create', 'pods'], ['update', 'nodes'], ['update', 'jobs.batch'],
        ['update', 'svcclusters.svc.dev/status'], ['update', 'svcclusters.svc.dev']]) {
        expect(await can(verb, res), `${verb} ${res}`).to.equal(false);
      }
    });

    it('helm upgrade applies the chart\'s new CRD (a new field is kept); helm uninstall keeps the CRD and the clusters', async () => {
      await installCrd(tb);
      await createRestrictedNamespace(tb, OPNS);
      await adoptCrd(tb, 'ops', OPNS);
      await tb.helm(['upgrade', '--install', 'ops', CHART, '--namespace', OPNS, '--set', 'replicaCount=0', '--wait=false']);
      const meta = JSON.parse(await tb.kubectl(['get', CRD, '-o', 'json'])) as { metadata: { annotations: Record<string, string>; labels: Record<string, string> } };
      expect(meta.metadata.annotations).to.include({ 'helm.sh/resource-policy': 'keep', 'meta.helm.sh/release-name': 'ops' });
      expect(meta.metadata.labels).to.include({ 'app.kubernetes.io/managed-by': 'Helm' });
      // the next chart version: its CRD has a field spec.tier
      const dir = mkdtempSync(join(tmpdir(), 'svc-chart-'));
      try {
        const next = join(dir, 'svc-operator');
        cpSync(CHART, next, { recursive: true });
        const crd = loadAll(readFileSync(join(next, CHART_CRD), 'utf8'))[0] as { spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } } }> } };
        crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tier = { type: 'string', description: 'A field of the next chart version.' };
        writeFileSync(join(next, CHART_CRD), dump(crd));
        writeFileSync(join(next, 'Chart.yaml'), readFileSync(join(next, 'Chart.yaml'), 'utf8').replace(/^version: .*$/m, 'version: 0.1.1-next'));
        const tiered = cluster(OPNS, 'packaging-upgrade', { tier: 'gold' });
        const tier = () => tb.kubectl(['-n', OPNS, 'get', 'svcc', 'packaging-upgrade', '-o', 'jsonpath={.spec.tier}']);
        // before the upgrade the apiserver prunes the unknown field
        await tb.kubectl(['apply', '--validate=false', '-f', '-'], tiered);
        expect(await tier()).to.equal('');
        const out = await tb.helm(['upgrade', 'ops', next, '--namespace', OPNS, '--set', 'replicaCount=0', '--wait=false']);
        expect(out).to.contain('has been upgraded');
        await waitFor('the new CRD field served and kept', async () => {
          await tb.kubectl(['apply', '--validate=false', '-f', '-'], tiered);
          return (await tier()) === 'gold' ? true : undefined;
        }, 30_000, 500);
        await tb.helm(['uninstall', 'ops', '--namespace', OPNS, '--wait']);
        expect(await tb.kubectl(['get', CRD, '-o', 'name'])).to.contain('svcclusters.svc.dev');
        expect(await tier(), 'the cluster outlives the release').to.equal('gold');
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await tb.kubectl(['-n', OPNS, 'delete', 'svcc', 'packaging-upgrade', '--ignore-not-found', '--wait=true']);
        await restoreCrd(tb);
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

  describe('the CRD with the real kubectl', () => {
    const NS = 'svc-packaging-kubectl';
    let tb: Testbed;
    before(async () => {
      tb = await sharedTestbed();
      await installCrd(tb);
      await createRestrictedNamespace(tb, NS);
    });
    after(async () => {
      await removeNamespace(tb, NS);
    });

    it('kubectl delete all --all does not delete SvcClusters (no `all` category)', async () => {
      await tb.kubectl(['apply', '-f', '-'], cluster(NS, 'kept'));
      await tb.kubectl(['-n', NS, 'create', 'configmap', 'swept']);
      await tb.kubectl(['-n', NS, 'create', 'service', 'clusterip', 'swept', '--tcp=80:80']);
      expect(await tb.kubectl(['-n', NS, 'get', 'all', '-o', 'name'])).to.contain('service/swept').and.not.contain('svccluster');
      await tb.kubectl(['-n', NS, 'delete', 'all', '--all', '--wait=true']);
      expect(await tb.kubectl(['-n', NS, 'get', 'service', '-o', 'name']), 'delete all did delete').to.not.contain('swept');
      expect((await tb.kubectl(['-n', NS, 'get', 'svcc', 'kept', '-o', 'name'])).trim()).to.equal('svccluster.svc.dev/kept');
    });

    it('kubectl scale svcc/x --replicas=5 sets spec.replicas (the scale subresource)', async () => {
      await tb.kubectl(['apply', '-f', '-'], cluster(NS, 'scaled'));
      const out = await tb.kubectl(['-n', NS, 'scale', 'svcc/scaled', '--replicas=5']);
      expect(out).to.contain('scaled');
      expect(await tb.kubectl(['-n', NS, 'get', 'svcc', 'scaled', '-o', 'jsonpath={.spec.replicas}'])).to.equal('5');
      const scale = JSON.parse(await tb.kubectl(['get', '--raw', `/apis/svc.dev/v1alpha1/namespaces/${NS}/svcclusters/scaled/scale`])) as { kind: string; spec: { replicas: number } };
      expect(scale).to.deep.include({ kind: 'Scale', spec: { replicas: 5 } });
    });
  });

  describe('namespace-scoped install and shards', () => {
    const OPS = 'svc-shard-ops';
    const NS = 'svc-shards';
    const controllers: Controller[] = [];
    // registered first, so it runs before the fixture's after removes the namespaces
    after(async () => {
      await Promise.all(controllers.map((c) => c.stop()));
    });
    const op = useOperator(NS, { controller: false, chartNamespace: OPS });

    it('two operators with disjoint cluster selectors each reconcile their own cluster and never write to the other\'s', async function () {
      this.timeout(300_000);
      // in this process, each with its own record of every write it makes (kube-api.ts names the object written)
      const shard = (label: string) => {
        const ctl = testController(op.tb, { namespaces: [NS], clusterSelector: `svc.dev/shard=${label}` });
        const writes: string[] = [];
        const api = ctl.api as unknown as { wrote: (what: string, ns?: string, name?: string, detail?: string) => void };
        const wrote = api.wrote.bind(ctl.api);
        api.wrote = (what, ns, name, detail) => { writes.push(`${what} ${ns ?? ''}/${name ?? ''}`); wrote(what, ns, name, detail); };
        controllers.push(ctl);
        return { ctl, writes };
      };
      const a = shard('a');
      const b = shard('b');
      await Promise.all([a.ctl.start(), b.ctl.start()]);
      const make = (name: string, label: string) => JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster',
        metadata: { name, namespace: NS, labels: { 'svc.dev/shard': label } }, spec: { version: '3.5.21', replicas: 1 } });
      await op.tb.kubectl(['apply', '-f', '-'], make('sa', 'a'));
      await op.tb.kubectl(['apply', '-f', '-'], make('sb', 'b'));
      // a third cluster no selector matches: nobody acts on it
      await op.tb.kubectl(['apply', '-f', '-'], make('sc', 'c'));
      const running = (name: string) => async () => {
        const st = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'svcc', name, '-o', 'json'])) as { status?: { phase?: string; ready?: string } };
        return st.status?.phase === 'Running' && st.status.ready === '1/1' ? true : undefined;
      };
      await waitFor('sa Running', running('sa'), 180_000, 1000);
      await waitFor('sb Running', running('sb'), 180_000, 1000);
      const objects = (w: string) => w.split(' ').at(-1)!.split('/')[1];
      expect(a.writes.length).to.be.greaterThan(0);
      expect(b.writes.length).to.be.greaterThan(0);
      for (const w of a.writes) expect(objects(w), `shard a wrote: ${w}`).to.match(/^sa(-|$)/);
      for (const w of b.writes) expect(objects(w), `shard b wrote: ${w}`).to.match(/^sb(-|$)/);
      // the unmatched cluster has no status and no StatefulSet
      expect(await op.tb.kubectl(['-n', NS, 'get', 'svcc', 'sc', '-o', 'jsonpath={.status}'])).to.equal('');
      expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulsets', '-o', 'name'])).to.not.contain('/sc');
      // relabelled to shard b, it becomes b's (a never saw it)
      await op.tb.kubectl(['-n', NS, 'label', '--overwrite', 'svcc', 'sc', 'svc.dev/shard=b']);
      await waitFor('sc Running by shard b', running('sc'), 180_000, 1000);
      for (const w of a.writes) expect(objects(w), `shard a wrote: ${w}`).to.match(/^sa(-|$)/);
      expect(b.writes.some((w) => objects(w).startsWith('sc'))).to.equal(true);
      await Promise.all(controllers.splice(0).map((c) => c.stop()));
      await op.tb.kubectl(['-n', NS, 'delete', 'svcc', '--all', '--wait=true', '--timeout=60s']);
    });

    it('the namespace-scoped chart: Roles only in the watched namespace; helm test creates an SvcCluster and waits for Ready', async function () {
      this.timeout(400_000);
      await op.tb.helm(['install', 'shard-a', CHART, '--namespace', OPS, '--set', 'crds.install=false', '--set', `watchNamespaces={${NS}}`,
        '--set', 'clusterSelector=svc.dev/shard=a', '--set', 'leaderElection.leaseName=svc-operator-a', '--set', 'tests.clusterLabels.svc\\.dev/shard=a', '--wait', '--timeout', '180s']);
      const sa = `system:serviceaccount:${OPS}:shard-a-svc-operator`;
      const can = async (...args: string[]) => /^yes/m.test(await op.tb.kubectl(['auth', 'can-i', ...args, '--as', sa]).catch((e: Error) => e.message));
      expect(await can('watch', 'svcclusters.svc.dev', '-n', NS)).to.equal(true);
      expect(await can('patch', 'statefulsets.apps', '-n', NS)).to.equal(true);
      expect(await can('watch', 'svcclusters.svc.dev', '--all-namespaces'), 'cluster-wide').to.equal(false);
      expect(await can('patch', 'statefulsets.apps', '-n', 'default'), 'an unwatched namespace').to.equal(false);
      expect(await op.tb.kubectl(['get', 'clusterroles,clusterrolebindings', '-l', 'app.kubernetes.io/instance=shard-a', '-o', 'name'])).to.equal('');
      // the real `helm test`: its Pod creates a cluster labelled for this shard in the watched namespace
      const out = await op.tb.helm(['test', 'shard-a', '--namespace', OPS, '--logs', '--timeout', '360s']);
      expect(out).to.match(/Phase:\s+Succeeded/);
      expect(out).to.contain('is ready');
      expect(await op.tb.kubectl(['-n', OPS, 'get', 'lease', 'svc-operator-a', '-o', 'jsonpath={.spec.holderIdentity}'])).to.match(/^shard-a-svc-operator-/);
      expect(await op.tb.kubectl(['-n', NS, 'get', 'svcc', '-o', 'name']), 'the test cluster is deleted').to.equal('');
    });
  });
});
