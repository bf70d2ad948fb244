// The pure rules of continuous backup (operator/backup/restore-points.ts): delta segments' keys, the chain of
// segments a full snapshot continues with, the restorable range, which full snapshot and segments a revision or a
// time picks (or why none, with the covered revisions), which segments retention removes, and spec.backup.continuous.
import { expect } from 'chai';
import {
  chainFrom, deltaKey, describeCoverage, fullManifest, fullSnapshotKey, manifestKeyOf, parseDeltaKey, planRestore, restorableRange, seenThrough, segmentsToRemove,
  type RestorePoint, type SegmentRef,
} from '../../../operator/backup/restore-points.js';
import { parseSvcCluster, ValidationError } from '../../../operator/api/validate.js';
import { namedMembers, type DestinationListing } from '../../../operator/cli/backups-view.js';

function point(revision: number, time: string): RestorePoint {
  const key = fullSnapshotKey('p', 'kv', revision, time);
  const m = fullManifest({ cluster: 'kv', member: 'kv-0', revision, time, sha256: 'ab'.repeat(32), size: 4096, release: '3.5.21', backupKind: 'continuous' }, key);
  return { ...m, key, manifestKey: manifestKeyOf(key) };
}
const seg = (from: number, to: number, lastTime?: string): SegmentRef => ({ ...parseDeltaKey(deltaKey('p', 'kv', { fromRevision: from, toRevision: to }))!, ...(lastTime ? { lastTime } : {}) });

// fulls at 10 and 50; segments 11..60 (overlapping after a restart at 30) then a hole 61..79, a full at 80, 81..90
const A = point(10, '2026-11-27T10:00:00.000Z');
const B = point(50, '2026-11-27T10:05:00.000Z');
const C = point(80, '2026-11-27T10:20:00.000Z');
const S = [seg(11, 20, '2026-11-27T10:01:00.000Z'), seg(21, 30, '2026-11-27T10:02:00.000Z'), seg(25, 45, '2026-11-27T10:04:00.000Z'), seg(46, 60, '2026-11-27T10:06:00.000Z'), seg(81, 90, '2026-11-27T10:21:00.000Z')];

describe('continuous backup: segments, coverage, restore plans, retention', () => {
  it('segment keys: <prefix>/<cluster>/delta/delta-<from>-<to>.jsonl, read back; anything else is not a segment', () => {
    expect(deltaKey('p', 'kv', { fromRevision: 11, toRevision: 20 })).to.equal('p/kv/delta/delta-0000000000000011-0000000000000020.jsonl');
    expect(parseDeltaKey('p/kv/delta/delta-0000000000000011-0000000000000020.jsonl')).to.deep.include({ fromRevision: 11, toRevision: 20 });
    expect(parseDeltaKey('p/kv/delta/notes.txt')).to.equal(undefined);
    expect(parseDeltaKey('p/kv/delta/delta-0000000000000020-0000000000000011.jsonl'), 'to before from').to.equal(undefined);
  });

  it('a full snapshot continues through overlapping segments up to the first hole', () => {
    expect(chainFrom(10, S).end).to.equal(60);
    expect(chainFrom(10, S).used.map((s) => s.fromRevision)).to.deep.equal([11, 21, 25, 46]);
    expect(chainFrom(50, S).end, 'a snapshot inside a segment uses it').to.equal(60);
    expect(chainFrom(80, S).end).to.equal(90);
    expect(chainFrom(5, S).end, 'a hole right after the snapshot').to.equal(5);
    expect(restorableRange([A, B, C], S)).to.deep.equal({ oldest: { revision: 10, time: A.time }, newest: { revision: 90, time: '2026-11-27T10:21:00.000Z' } });
    expect(restorableRange([A], [])).to.deep.equal({ oldest: { revision: 10, time: A.time }, newest: { revision: 10, time: A.time } });
    expect(describeCoverage([A, B, C], S)).to.equal('restorable revisions 10..60, 80..90');
  });

  it('a revision is restored exactly from the newest full snapshot whose segments reach it; a hole or a point before every full is refused with the coverage', () => {
    const plan = planRestore([A, B, C], S, { revision: 40 }, 'dest');
    expect(plan).to.deep.include({ point: A, revision: 40 });
    expect((plan as { segments: SegmentRef[] }).segments.map((s) => s.fromRevision)).to.deep.equal([11, 21, 25]);
    expect(planRestore([A, B, C], S, { revision: 55 }, 'dest')).to.deep.include({ point: B, revision: 55 });
    expect(planRestore([A, B, C], S, { revision: 80 }, 'dest')).to.deep.include({ point: C, revision: 80, segments: [] });
    expect(planRestore([A, B, C], S, { revision: 70 }, 'dest')).to.deep.equal({ refused: 'dest does not cover revision 70: it has restorable revisions 10..60, 80..90; ask for a revision in one of those ranges' });
    expect(planRestore([A, B, C], S, { revision: 95 }, 'dest')).to.have.property('refused').that.includes('does not cover revision 95');
    expect(planRestore([A, B, C], S, { revision: 5 }, 'dest')).to.have.property('refused').that.matches(/^dest does not cover revision 5: it has restore points from revision 10/);
    // without segments a full snapshot is the finest point (the newest at or before the revision)
    expect(planRestore([A, B], [], { revision: 40 }, 'dest')).to.deep.equal({ point: A, revision: 10, segments: [] });
  });

  it('a time gives the newest state the agent had seen by then; no target, the newest restorable revision', () => {
    expect(planRestore([A, B, C], S, { time: '2026-11-27T10:03:00.000Z' }, 'd')).to.deep.include({ point: A, revision: 30 });
    expect(planRestore([A, B, C], S, { time: '2026-11-27T10:30:00.000Z' }, 'd')).to.deep.include({ point: C, revision: 90 });
    expect(planRestore([A, B, C], S, { time: '2026-11-27T10:05:30.000Z' }, 'd'), 'a full snapshot taken before the next segment ended').to.deep.include({ point: B, revision: 50 });
    expect(planRestore([A, B, C], S, {}, 'd')).to.deep.include({ point: C, revision: 90 });
  });

  it('a time gives every revision the agent saw committed by then, inside a segment too (its times read), up to the first seen later', () => {
    const at = (s: string) => Date.parse(`2026-11-27T10:0${s}Z`);
    // 11..20 seen a second apart from 10:00:51; 21..30 from 10:01:51
    const timed = (from: number, start: number): SegmentRef => ({ ...seg(from, from + 9, new Date(start + 9000).toISOString()), seen: Array.from({ length: 10 }, (_, i) => start + i * 1000) });
    const T = [timed(11, at('0:51.000')), timed(21, at('1:51.000'))];
    expect(seenThrough(T[0], at('0:55.500')), 'revisions 11..15 seen by then').to.equal(15);
    expect(seenThrough(T[0], at('0:50.999')), 'none').to.equal(10);
    expect(seenThrough(T[0], at('0:55.000')), 'at T counts').to.equal(15);
    expect(planRestore([A], T, { time: '2026-11-27T10:01:55.500Z' }, 'd')).to.deep.include({ point: A, revision: 25, segments: T });
    expect(planRestore([A], T, { time: '2026-11-27T10:01:30.000Z' }, 'd')).to.deep.include({ point: A, revision: 20, segments: [T[0]] });
    // an older agent's segment (no times): all of it by its lastTime, or none
    expect(seenThrough(seg(11, 20, '2026-11-27T10:01:00.000Z'), at('0:59.000'))).to.equal(10);
    expect(seenThrough(seg(11, 20, '2026-11-27T10:01:00.000Z'), at('1:00.000'))).to.equal(20);
    expect(seenThrough(seg(11, 20), at('9:00.000')), 'not read: none').to.equal(10);
  });

  it('retention removes the segments that end at or before the oldest kept full snapshot, and no other', () => {
    expect(segmentsToRemove([B, C], S).map((s) => s.fromRevision)).to.deep.equal([11, 21, 25]);
    expect(segmentsToRemove([C], S).map((s) => s.fromRevision)).to.deep.equal([11, 21, 25, 46]);
    expect(segmentsToRemove([A, B, C], S)).to.deep.equal([]);
    expect(segmentsToRemove([], S)).to.deep.equal([]);
  });

  it('spec.backup.continuous is a boolean and needs an s3 destination', () => {
    const problems = (backup: Record<string, unknown>) => {
      try {
        parseSvcCluster({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'kv' }, spec: { version: '3.5.21', replicas: 1, backup } });
        return [];
      } catch (e) {
        if (e instanceof ValidationError) return e.problems;
        throw e;
      }
    };
    const s3 = { name: 'off', s3: { bucket: 'kv-backups', endpoint: 'https://s3.example.test' } };
    expect(problems({ continuous: true, destinations: [s3] })).to.deep.equal([]);
    expect(problems({ continuous: true })).to.deep.equal(['spec.backup.continuous needs an s3 destination in spec.backup.destinations (delta segments are written to object storage)']);
    expect(problems({ continuous: 'yes', destinations: [s3] })).to.deep.equal(['spec.backup.continuous must be true or false']);
  });

  it('the Kubernetes runtime carries spec.backup.continuous out (the agent\'s Deployment): no refusal', async () => {
    const { unsupportedOnKubernetes } = await import('../../../operator/runtime/kubernetes/backup-job.js');
    expect(unsupportedOnKubernetes('kv', { version: '3.5.21', replicas: 1, backup: { continuous: true } })).to.deep.equal([]);
  });
});

describe('backup agent on Kubernetes: its Deployment', () => {
  const S3 = { endpoint: 'http://10.0.0.1:7070', bucket: 'b', prefix: 'p', region: 'us-east-1', forcePathStyle: true, credentialsSecret: 'creds', caSecret: 'ca' };
  const ref = (spec: Record<string, unknown> = {}) => ({
    name: 'kv', namespace: 'ns', uid: 'u-1',
    spec: { version: '3.5.21', replicas: 3, backup: { continuous: true, keep: 4, maxAge: '24h', destinations: [{ name: 'offsite', s3: S3 }, { name: 'claim', pvc: 'kv-backups' }] }, ...spec },
  });
  interface Dep {
    kind: string; metadata: { name: string; labels: Record<string, string>; ownerReferences: Array<{ kind: string; name: string; uid: string; controller: boolean }>; annotations: Record<string, string> };
    spec: { replicas: number; strategy: { type: string }; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: {
      containers: Array<{ image: string; command: string[]; args: string[]; env: Array<{ name: string; value: string }>; volumeMounts: Array<{ name: string; mountPath: string }> }>;
      volumes: Array<{ name: string; secret?: { secretName: string }; emptyDir?: object }>;
    } } };
  }

  it('runs while continuous is on: 1 replica; 0 while hibernated or at spec.replicas 0; none once it is off', async () => {
    const { agentReplicas } = await import('../../../operator/runtime/kubernetes/backup-agent.js');
    expect(agentReplicas({ replicas: 3, backup: { continuous: true } }, false)).to.equal(1);
    expect(agentReplicas({ replicas: 3, backup: { continuous: true } }, true)).to.equal(0);
    expect(agentReplicas({ replicas: 0, backup: { continuous: true } }, false)).to.equal(0);
    expect(agentReplicas({ replicas: 3, backup: { continuous: false } }, false)).to.equal(undefined);
    expect(agentReplicas({ replicas: 3 }, false)).to.equal(undefined);
  });

  it('svc-operator backup-agent of the operator image against every member, the s3 destinations as JSON, their Secrets mounted where the agent reads them, owned by the SvcCluster', async () => {
    const { agentDeployment, agentName } = await import('../../../operator/runtime/kubernetes/backup-agent.js');
    const { JOB_SECRETS_MOUNT } = await import('../../../operator/backup/destinations/index.js');
    const d = agentDeployment(ref(), 'svc-operator:dev', 1) as unknown as Dep;
    expect(d.kind).to.equal('Deployment');
    expect(d.metadata.name).to.equal('kv-backup-agent').and.to.equal(agentName('kv'));
    expect(d.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', name: 'kv', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
    expect(d.metadata.labels['svc.dev/cluster']).to.equal('kv');
    expect(d.spec.replicas).to.equal(1);
    expect(d.spec.strategy.type, 'never two agents at once').to.equal('Recreate');
    // the pods are not the members: the Services do not select them
    expect(d.spec.template.metadata.labels['app.kubernetes.io/name']).to.equal('svc-backup-agent');
    expect(d.spec.selector.matchLabels).to.deep.include({ 'app.kubernetes.io/name': 'svc-backup-agent', 'app.kubernetes.io/instance': 'kv' });
    const c = d.spec.template.spec.containers[0];
    expect(c.image).to.equal('svc-operator:dev');
    expect(c.command).to.deep.equal(['svc-operator']);
    expect(c.args).to.deep.equal([
      'backup-agent', '--cluster=kv',
      '--endpoints=http://kv-0.kv.ns.svc:2379,http://kv-1.kv.ns.svc:2379,http://kv-2.kv.ns.svc:2379',
      `--destinations=${JSON.stringify([{ name: 'offsite', s3: S3 }])}`,
      '--release=3.5.21', '--work-dir=/work/agent', '--keep=4', '--max-age=24h',
    ]);
    expect(c.env).to.deep.equal([{ name: 'SVC_OPERATOR_SECRETS_DIR', value: JOB_SECRETS_MOUNT }]);
    const vols = d.spec.template.spec.volumes;
    const mountOf = (secret: string) => c.volumeMounts.find((m) => m.name === vols.find((v) => v.secret?.secretName === secret)?.name)?.mountPath;
    expect(mountOf('creds')).to.equal(`${JOB_SECRETS_MOUNT}/creds`);
    expect(mountOf('ca')).to.equal(`${JOB_SECRETS_MOUNT}/ca`);
    expect(vols.find((v) => v.name === 'work')?.emptyDir).to.deep.equal({});
  });

  it('a TLS cluster: https members and the client certificate mounted as the backup Jobs do; a changed spec changes its hash (re-applied)', async () => {
    const { agentDeployment } = await import('../../../operator/runtime/kubernetes/backup-agent.js');
    const d = agentDeployment(ref({ replicas: 1, tls: { peerSecret: 'peer', clientSecret: 'cli' } }), 'img', 1) as unknown as Dep;
    const c = d.spec.template.spec.containers[0];
    expect(c.args).to.include('--endpoints=https://kv-0.kv.ns.svc:2379');
    expect(c.args).to.include.members(['--cacert=/etc/svc/client-tls/ca.crt', '--cert=/etc/svc/client-tls/tls.crt', '--key=/etc/svc/client-tls/tls.key']);
    expect(d.spec.template.spec.volumes.find((v) => v.secret?.secretName === 'cli')).to.not.equal(undefined);
    const h = (x: Dep) => x.metadata.annotations['svc.dev/applied-hash'];
    expect(h(agentDeployment(ref(), 'img', 1) as unknown as Dep)).to.equal(h(agentDeployment(ref(), 'img', 1) as unknown as Dep));
    expect(h(agentDeployment(ref(), 'img', 0) as unknown as Dep)).to.not.equal(h(agentDeployment(ref(), 'img', 1) as unknown as Dep));
    expect(h(agentDeployment(ref({ replicas: 5 }), 'img', 1) as unknown as Dep)).to.not.equal(h(agentDeployment(ref(), 'img', 1) as unknown as Dep));
  });
});

describe('backup agent: where it resumes', () => {
  it('from the end of its own record, not from a newer full snapshot taken while it was down', async () => {
    const { agentEnd } = await import('../../../operator/runtime/backup-agent.js');
    const own = point(10, '2026-11-27T10:00:00.000Z');
    const onDemand = { ...point(50, '2026-11-27T10:05:00.000Z'), backupKind: 'on-demand' as const };
    expect(agentEnd([own, onDemand], [seg(11, 20)])).to.deep.include({ point: own, end: 20 });
    expect(agentEnd([own, onDemand], []), 'its own full snapshot, no segment yet').to.deep.include({ point: own, end: 10 });
    expect(agentEnd([own, onDemand], [seg(11, 60)]), 'a chain through the newer snapshot').to.deep.include({ end: 60 });
    expect(agentEnd([onDemand], []), 'continuous backup just turned on').to.deep.include({ point: onDemand, end: 50 });
  });
});

describe('svc-operator backup-agent settings', () => {
  it('a flag wins over SVC_AGENT_<FLAG>, which wins over the --config file (camelCase keys)', async () => {
    const { agentSettings, agentEnvName } = await import('../../../operator/cli/backup-agent.js');
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'agent-conf-'));
    try {
      const file = join(dir, 'c.json');
      writeFileSync(file, JSON.stringify({ cluster: 'from-file', segmentSeconds: 5, endpoints: ['http://a:1'] }));
      const get = agentSettings(new Map([['config', file], ['cluster', 'from-flag']]), { [agentEnvName('segment-seconds')]: '0.5' });
      expect(agentEnvName('segment-seconds')).to.equal('SVC_AGENT_SEGMENT_SECONDS');
      expect(get('cluster')).to.equal('from-flag');
      expect(get('segment-seconds')).to.equal('0.5');
      expect(get('endpoints')).to.deep.equal(['http://a:1']);
      expect(get('keep')).to.equal(undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('listings name the member of an agent snapshot recorded by its host:port (older agents); others stay as they are', () => {
    const listing: DestinationListing = {
      name: 'offsite', cluster: 'kv', where: 'offsite', oldest: null, newest: null, deltas: null, problems: [], error: null,
      points: [{ ...point(10, '2026-01-01T00:00:00.000Z'), member: 'kv-1.kv-peer.ns.svc:2379' }, { ...point(20, '2026-01-01T00:01:00.000Z'), member: 'kv-0' }],
    };
    const named = namedMembers([listing], new Map([['kv-1.kv-peer.ns.svc:2379', 'kv-1']]));
    expect(named[0].points.map((p) => p.member)).to.deep.equal(['kv-1', 'kv-0']);
    expect(listing.points[0].member, 'the listing itself untouched').to.equal('kv-1.kv-peer.ns.svc:2379');
  });
});
