// One member configuration (operator/api/member-config.ts) for both runtimes and the harness; the refusal of a
// combination a release cannot run; strict field validation against the CRD schema; the Kubernetes desired state
// (runtime/kubernetes/desired.ts) computed from the spec and the observation without editing the spec.
import { expect } from 'chai';
import { memberArgs, memberConfig, memberConfigProblems } from '../../../operator/api/member-config.js';
import { parseSvcCluster, specProblems, unknownFields, ValidationError, withDefaults } from '../../../operator/api/validate.js';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { desiredState, liveStatefulSet, targetRevision } from '../../../operator/runtime/kubernetes/desired.js';
import { CONFIG_HASH_ANNOTATION, RELEASE_LABEL, releaseOf, statefulSetBuilds, type ClusterRef } from '../../../operator/runtime/kubernetes/manifests.js';
import { memberArgs as harnessMemberArgs } from '../../../harness/member-args.js';
import { isAtLeast } from '../../../operator/runtime/kubernetes/kube-api.js';

const spec = (s: Partial<SvcClusterSpec> = {}): SvcClusterSpec => withDefaults({ version: '3.5.21', replicas: 3, ...s } as SvcClusterSpec);

describe('unit: memberConfig(spec, release)', () => {
  it('each release gets the flags the spec sets that it knows, its SVC_VERSION, and nothing else', () => {
    const s = spec({ enableV2: true, logging: { logger: 'zap', level: 'debug' } });
    // the quota always: half the volume (spec.storage.size, default 1Gi)
    const quota = '--quota-backend-bytes=536870912';
    expect(memberConfig(s, '3.5.21').flags).to.deep.equal(['--enable-v2=true', '--logger=zap', '--log-outputs=stderr', '--log-level=debug', quota]);
    expect(memberConfig(s, '3.4.34').flags).to.deep.equal(['--enable-v2=true', '--logger=zap', '--log-outputs=stderr', '--log-level=debug', quota]);
    // 3.3 has no logger flags: a 3.3 member of a cluster upgrading to such a spec keeps running without them
    expect(memberConfig(s, '3.3.27').flags).to.deep.equal(['--enable-v2=true', quota]);
    expect(memberConfig(spec(), '3.4.34').flags).to.deep.equal([quota]);
    expect(memberConfig(spec({ storage: { size: '64Gi' } }), '3.4.34').flags, 'at most 8 GiB').to.deep.equal([`--quota-backend-bytes=${8 * 2 ** 30}`]);
    expect(memberConfig(spec({ storage: { size: '4Gi' }, maintenance: { quotaBackendBytes: '3Gi', autoCompaction: { mode: 'revision', retention: '1000' } } }), '3.3.27').flags)
      .to.deep.equal([`--quota-backend-bytes=${3 * 2 ** 30}`, '--auto-compaction-mode=revision', '--auto-compaction-retention=1000']);
    expect(memberConfig(spec(), '3.4.2').env).to.deep.equal({ SVC_VERSION: '3.4.2' });
    expect(memberConfig(spec(), '3.4.34').release).to.equal('3.4.34');
  });

  it('the revision is stable, changes with every input that reaches a member, and not with the release', () => {
    const base = memberConfig(spec(), '3.4.34').revision;
    expect(memberConfig(spec(), '3.4.34').revision).to.equal(base);
    expect(memberConfig(spec(), '3.5.21').revision, 'a release change is an upgrade, not a configuration change').to.equal(base);
    expect(memberConfig(spec({ replicas: 5, upgrade: { paused: true } }), '3.4.34').revision, 'nothing a member sees').to.equal(base);
    const variants = [
      spec({ enableV2: true }), spec({ enableV2: false }), spec({ logging: { logger: 'zap' } }), spec({ logging: { logger: 'capnslog' } }),
      spec({ logging: { level: 'warn' } }), spec({ logging: { logger: 'zap', level: 'warn' } }),
      spec({ storage: { size: '2Gi' } }), spec({ maintenance: { quotaBackendBytes: '100Mi' } }), spec({ maintenance: { autoCompaction: { mode: 'periodic', retention: '1h' } } }),
    ].map((s) => memberConfig(s, '3.4.34').revision);
    expect(new Set([base, ...variants]).size).to.equal(variants.length + 1);
  });

  it('refuses a spec its release cannot run, naming the field, the release and the way out', () => {
    const msg = 'spec.logging.logger: release 3.3.27 has no --logger flag; remove spec.logging.logger, or set spec.version to a release that has it (3.4, 3.5, 3.6, 3.7)';
    expect(memberConfigProblems(spec({ version: '3.3.27', logging: { logger: 'capnslog' } }))).to.deep.equal([msg]);
    expect(specProblems(spec({ version: '3.3.27', logging: { logger: 'capnslog' } }))).to.deep.equal([msg]);
    expect(specProblems(spec({ version: '3.3.27', logging: { level: 'info' } }))).to.deep.equal([
      'spec.logging.level: release 3.3.27 has no --log-level flag; remove spec.logging.level, or set spec.version to a release that has it (3.4, 3.5, 3.6, 3.7)',
    ]);
    expect(specProblems(spec({ version: '3.3.27', enableV2: false }))).to.deep.equal([]);
    expect(specProblems(spec({ version: '3.4.34', logging: { logger: 'zap', level: 'info' } }))).to.deep.equal([]);
    expect(memberConfigProblems(spec({ version: 'nope' }))).to.deep.equal([]);
  });

  it('memberArgs renders a placement and a configuration; the harness renders with the same function', () => {
    const place = { name: 'm0', dataDir: '/d', clientUrl: 'http://h:1', peerUrl: 'http://h:2', initialCluster: 'm0=http://h:2', token: 't', state: 'new' };
    const args = memberArgs(place, memberConfig(spec({ enableV2: true }), '3.4.34'));
    expect(args).to.deep.equal(['--name=m0', '--data-dir=/d', '--listen-client-urls=http://h:1', '--advertise-client-urls=http://h:1', '--listen-peer-urls=http://h:2',
      '--initial-advertise-peer-urls=http://h:2', '--initial-cluster=m0=http://h:2', '--initial-cluster-token=t', '--initial-cluster-state=new', '--enable-v2=true', '--quota-backend-bytes=536870912']);
    expect(harnessMemberArgs).to.equal(memberArgs);
    const tls = memberArgs({ ...place, tls: { clientDir: '/c', peerDir: '/p', metricsUrl: 'http://0.0.0.0:3' } });
    expect(tls).to.include.members(['--cert-file=/c/tls.crt', '--client-cert-auth=true', '--listen-metrics-urls=http://0.0.0.0:3', '--peer-trusted-ca-file=/p/ca.crt']);
  });
});

describe('unit: strict field validation against the CRD schema', () => {
  const doc = (specExtra: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
    apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'kv', labels: { a: 'b' }, annotations: { x: 'y' } }, spec: { version: '3.5.21', ...specExtra }, ...top,
  });

  it('names every unknown field by its path', () => {
    expect(unknownFields(doc({}))).to.deep.equal([]);
    expect(unknownFields(doc({ maintenence: { window: 'x' } }))).to.deep.equal(['spec.maintenence: unknown field']);
    expect(unknownFields(doc({ logging: { levl: 'info' }, podTemplate: { env: [{ name: 'A', vlue: '1' }] } }))).to.deep.equal([
      'spec.logging.levl: unknown field', 'spec.podTemplate.env[0].vlue: unknown field',
    ]);
    expect(unknownFields(doc({}, { specs: {} }))).to.deep.equal(['specs: unknown field']);
  });

  it('free-form fields (affinity, maps, metadata) take anything', () => {
    const free = doc({ podTemplate: { affinity: { nodeAffinity: { anything: 1 } }, labels: { k: 'v' }, tolerations: [{ key: 'k', whatever: true }] }, resources: { limits: { cpu: '1' } } });
    expect(unknownFields(free)).to.deep.equal([]);
  });

  it('parseSvcCluster (local apply) refuses unknown fields with the other problems', () => {
    try {
      parseSvcCluster(doc({ maintenence: {}, replicas: 2 }));
      expect.fail('accepted');
    } catch (e) {
      expect(e).to.be.instanceOf(ValidationError);
      expect((e as ValidationError).problems).to.deep.equal(['spec.maintenence: unknown field', 'spec.replicas must be an odd integer from 1 to 7, or 0 to hibernate (members stopped, data kept)']);
    }
  });
});

describe('unit: the desired state of a cluster on Kubernetes', () => {
  const ref = (s: SvcClusterSpec): ClusterRef => ({ name: 'kv', namespace: 'ns', uid: 'u', spec: s });
  type Sts = { spec: { replicas: number; template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { containers: Array<{ name: string; image: string; args: string[]; env: Array<{ name: string; value?: string }> }> } } } };
  const stsOf = (objs: Array<{ kind: string }>) => objs.find((o) => o.kind === 'StatefulSet') as unknown as Sts;

  it('builds the StatefulSet once; the target revision needs no build and equals the template\'s', () => {
    const s = spec({ enableV2: true });
    const before = statefulSetBuilds.count;
    const d = desiredState(ref(s), '3.5.21', { replicas: 3, tlsHash: 'abc' });
    expect(statefulSetBuilds.count - before).to.equal(1);
    const t = targetRevision(ref(s), { tlsHash: 'abc' });
    expect(statefulSetBuilds.count - before).to.equal(1);
    const sts = stsOf(d.objects);
    expect(t).to.deep.equal({ config: sts.spec.template.metadata.annotations[CONFIG_HASH_ANNOTATION], tls: 'abc' });
    expect(d.revision).to.deep.equal(t);
    expect(d.member).to.deep.equal(memberConfig(s, '3.5.21'));
  });

  it('live replicas are an observation: the StatefulSet and initial cluster follow it, the spec is not edited', () => {
    const s = spec({ replicas: 5 });
    const frozen = JSON.stringify(s);
    const d = desiredState(ref(s), '3.4.34', { replicas: 3 });
    expect(stsOf(d.objects).spec.replicas).to.equal(3);
    const cm = d.objects.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(cm.data.INITIAL_CLUSTER.split(',')).to.have.length(3);
    expect(JSON.stringify(s)).to.equal(frozen);
    expect(stsOf(desiredState(ref(s), '3.4.34', {}).objects).spec.replicas, 'a cluster being created: spec.replicas').to.equal(5);
  });

  it('the release is a label of the template, read back from it (the image tag only for pods of an older operator)', () => {
    const sts = stsOf(desiredState(ref(spec({ logging: { logger: 'zap' } })), '3.4.34', { replicas: 3 }).objects);
    const c = sts.spec.template.spec.containers[0];
    expect(sts.spec.template.metadata.labels[RELEASE_LABEL]).to.equal('3.4.34');
    expect(c.image).to.equal('svc:v3.4.34');
    expect(c.args).to.include.members(['--logger=zap', '--log-outputs=stderr', '--initial-cluster=$(INITIAL_CLUSTER)']);
    expect(c.env.find((e) => e.name === 'SVC_VERSION')?.value).to.equal('3.4.34');
    expect(liveStatefulSet(sts as never)).to.deep.equal({ release: '3.4.34', replicas: 3, storage: '1Gi' });
    expect(releaseOf({ metadata: { labels: { [RELEASE_LABEL]: '3.5.21' } }, spec: { containers: [{ name: 'svc', image: 'svc:v3.4.34' }] } })).to.equal('3.5.21');
    expect(releaseOf({ metadata: {}, spec: { containers: [{ name: 'svc', image: 'reg/svc:v3.3.27' }] } })).to.equal('3.3.27');
    // a 3.3 template of a cluster upgrading to a spec with a logger: the 3.3 members run without it
    expect(stsOf(desiredState(ref(spec({ logging: { logger: 'zap' } })), '3.3.27', { replicas: 3 }).objects).spec.template.spec.containers[0].args.some((a) => a.startsWith('--log'))).to.equal(false);
  });

  it('the configuration hash changes with what reaches a pod, not with the release or an empty block', () => {
    const hash = (s: SvcClusterSpec, release = '3.5.21') => stsOf(desiredState(ref(s), release, {}).objects).spec.template.metadata.annotations[CONFIG_HASH_ANNOTATION];
    const base = hash(spec());
    expect(hash(spec(), '3.4.34')).to.equal(base);
    expect(hash(spec({ podTemplate: {}, resources: {} }))).to.equal(base);
    for (const s of [spec({ enableV2: true }), spec({ resources: { limits: { cpu: '1' } } }), spec({ image: { repository: 'reg/svc' } }), spec({ tls: { clientSecret: 'c' } })]) {
      expect(hash(s)).to.not.equal(base);
    }
  });

  it('the volumes stay as they live until expandVolumes grows them, and a derived quota follows them, not the spec', () => {
    const grown = spec({ storage: { size: '4Gi' } });
    const sts = (live: Parameters<typeof desiredState>[2]) => stsOf(desiredState(ref(grown), '3.5.21', live).objects);
    const args = (live: Parameters<typeof desiredState>[2]) => (sts(live).spec.template.spec as { containers: Array<{ args: string[] }> }).containers[0].args.filter((a) => a.startsWith('--quota'));
    expect((sts({ storage: '1Gi' }).spec as unknown as { volumeClaimTemplates: Array<{ spec: { resources: { requests: { storage: string } } } }> }).volumeClaimTemplates[0].spec.resources.requests.storage).to.equal('1Gi');
    expect(args({ storage: '1Gi' })).to.deep.equal(['--quota-backend-bytes=536870912']);
    expect(args({ storage: '4Gi' })).to.deep.equal([`--quota-backend-bytes=${2 * 2 ** 30}`]);
    expect(targetRevision(ref(grown), { storage: '1Gi' })).to.deep.equal(targetRevision(ref(spec()), { storage: '1Gi' }));
  });
});

describe('unit: read-your-writes by resourceVersion (kube-api.ts)', () => {
  it('an informer copy counts as fresh only when its resourceVersion is known to be at least the write\'s', () => {
    expect(isAtLeast('120', '120')).to.equal(true);
    expect(isAtLeast('1000', '999')).to.equal(true);
    expect(isAtLeast('999', '1000'), 'numerically, not as text').to.equal(false);
    expect(isAtLeast(undefined, '5')).to.equal(false);
    expect(isAtLeast('abc', 'abd'), 'not comparable: ask the apiserver').to.equal(false);
  });
});
