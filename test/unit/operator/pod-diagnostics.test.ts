// Pod-level failures from pod, claim and Event objects as the apiserver returns them, and the on-call view's text.
import { expect } from 'chai';
import type { CoreV1Event, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { describePod, podProblems, PENDING_GRACE_MS } from '../../../operator/controller/pod-diagnostics.js';
import { alarmMember, renderView, type ClusterView } from '../../../operator/cli/status-view.js';

const now = new Date('2026-01-01T00:10:00Z');
const long = new Date(now.getTime() - PENDING_GRACE_MS - 1000);

function pod(name: string, status: V1Pod['status'], spec: Partial<V1Pod['spec']> = {}): V1Pod {
  return { metadata: { name }, spec: { containers: [{ name: 'svc', image: 'svc:v3.5.21' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-${name}` } }], ...spec }, status };
}
const waiting = (reason: string, message = '', last?: object) => ({ phase: 'Pending', containerStatuses: [{ name: 'svc', image: 'x', imageID: '', ready: false, restartCount: 3, state: { waiting: { reason, message } }, ...(last ? { lastState: { terminated: last } } : {}) }] }) as V1Pod['status'];
const unscheduled = (message: string, since = long) => ({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: since }] }) as V1Pod['status'];
const claim = (name: string, phase: string, cls?: string): V1PersistentVolumeClaim => ({ metadata: { name, creationTimestamp: long }, spec: { storageClassName: cls }, status: { phase } });
const event = (kind: string, name: string, reason: string, message: string, type = 'Warning'): CoreV1Event => ({ metadata: {}, involvedObject: { kind, name }, reason, message, type, lastTimestamp: now });

const diagnose = (pods: V1Pod[], o: { claims?: V1PersistentVolumeClaim[]; events?: CoreV1Event[]; replicas?: number } = {}) =>
  podProblems({ statefulSet: 'kv', pods, claims: o.claims ?? [], events: o.events ?? [], replicas: o.replicas ?? pods.length, now });

describe('operator: pod diagnostics', () => {
  it('image pulls (ErrImagePull and ImagePullBackOff as one reason), crash loops and OOM kills', () => {
    expect(diagnose([pod('kv-0', waiting('ErrImagePull', 'pull failed'))])).to.deep.equal([{ reason: 'ImagePullBackOff', object: 'kv-0', message: 'cannot pull image svc:v3.5.21' }]);
    expect(diagnose([pod('kv-0', waiting('ImagePullBackOff', 'Back-off pulling image'))])).to.deep.equal(diagnose([pod('kv-0', waiting('ErrImagePull', 'pull failed'))]));
    const crash = diagnose([pod('kv-0', waiting('CrashLoopBackOff', 'back-off 40s', { exitCode: 2, reason: 'Error', message: 'svc: unknown flag: --logger' }))]);
    expect(crash).to.deep.equal([{ reason: 'CrashLoopBackOff', object: 'kv-0', message: 'the member keeps exiting (status 2): svc: unknown flag: --logger' }]);
    const oomPod = pod('kv-0', waiting('CrashLoopBackOff', '', { exitCode: 137, reason: 'OOMKilled' }), { containers: [{ name: 'svc', resources: { limits: { memory: '24Mi' } } }] });
    expect(diagnose([oomPod])[0]).to.include({ reason: 'OOMKilled', object: 'kv-0' });
    expect(diagnose([oomPod])[0].message).to.contain('(24Mi)');
  });

  it('Unschedulable after a grace period; a Pending claim with a Warning is ClaimPending; waiting for the first consumer is not', () => {
    expect(diagnose([pod('kv-0', unscheduled('0/1 nodes are available', now))])).to.deep.equal([]);
    expect(diagnose([pod('kv-0', unscheduled('0/1 nodes are available: node(s) didn\'t match Pod\'s node affinity/selector'))])[0]).to.include({ reason: 'Unschedulable', object: 'kv-0' });
    const wffc = diagnose([pod('kv-0', unscheduled('0/1 nodes are available: selector'))], { claims: [claim('data-kv-0', 'Pending', 'local-path')], events: [event('PersistentVolumeClaim', 'data-kv-0', 'WaitForFirstConsumer', 'waiting', 'Normal')] });
    expect(wffc[0].reason).to.equal('Unschedulable');
    const missing = diagnose([pod('kv-0', unscheduled('0/1 nodes are available'))], { claims: [claim('data-kv-0', 'Pending', 'nope')], events: [event('PersistentVolumeClaim', 'data-kv-0', 'ProvisioningFailed', 'storageclass.storage.k8s.io "nope" not found')] });
    expect(missing).to.deep.equal([{ reason: 'ClaimPending', object: 'kv-0', message: 'claim data-kv-0 is Pending (storage class nope): storageclass.storage.k8s.io "nope" not found' }]);
  });

  it('FailedCreate from the StatefulSet\'s Warning Event when a pod is missing', () => {
    const refused = event('StatefulSet', 'kv', 'FailedCreate', 'create Pod kv-0 in StatefulSet kv failed error: pods "kv-0" is forbidden: violates PodSecurity "restricted:latest"');
    expect(diagnose([], { replicas: 1, events: [refused] })).to.deep.equal([{ reason: 'FailedCreate', object: 'kv', message: refused.message }]);
    expect(diagnose([pod('kv-0', { phase: 'Running' })], { replicas: 1, events: [refused] }), 'every pod there').to.deep.equal([]);
  });

  it('a running pod is no problem; describePod names what keeps a pod from running', () => {
    const ok = pod('kv-0', { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'svc', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] });
    expect(diagnose([ok])).to.deep.equal([]);
    expect(describePod(ok)).to.equal('Running,ready');
    expect(describePod(pod('kv-0', waiting('ImagePullBackOff')))).to.equal('ImagePullBackOff');
    expect(describePod(pod('kv-0', unscheduled('x')))).to.equal('Unschedulable');
  });
});

describe('operator: the on-call view (text)', () => {
  const base: ClusterView = {
    namespace: 'prod', name: 'kv', generation: 4, spec: { version: '3.5.21', replicas: 3, tls: { clientSecret: 'kv-client' } },
    status: {
      phase: 'Upgrading', ready: '3/3', currentVersion: '3.4.34', clusterVersion: '3.4.0', observedGeneration: 4, leader: 'kv-1',
      conditions: [{ type: 'Ready', status: 'False', reason: 'Upgrading', message: 'phase Upgrading: restartMember', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      upgrade: { from: '3.4.34', to: '3.5.21', step: 'restartMember', membersDone: ['kv-0'], startedAt: '2026-01-01T00:05:00Z',
        snapshot: { location: 'pvc://backups/prod/kv/kv-1.db', member: 'kv-1', revision: 42, size: 24576, sha256: 'ab'.repeat(32), time: '2026-01-01T00:05:10Z' } },
    },
    members: [
      { name: 'kv-0', role: 'follower', release: '3.5.21', healthy: true, reachable: true, raftIndex: 120, appliedIndex: 118, lag: 2, dbSize: 24576, pod: 'Running,ready', image: 'svc:v3.5.21' },
      { name: 'kv-1', role: 'leader', release: '3.4.34', healthy: true, reachable: true, raftIndex: 120, appliedIndex: 120, lag: 0, dbSize: 3 * 1024 * 1024, pod: 'Running,ready', image: 'svc:v3.4.34' },
      { name: 'kv-2', role: 'unknown', healthy: false, reachable: false, pod: 'CrashLoopBackOff', podIP: '10.244.0.9', error: 'connect ECONNREFUSED', image: 'svc:v3.4.34' },
    ],
    alarms: [{ member: 'kv-0', alarm: 'NOSPACE' }],
    certificates: [{ secret: 'kv-client', use: 'client', notAfter: '2026-01-31T00:00:00.000Z', daysLeft: 29 }],
    events: [{ time: '2026-01-01T00:09:00Z', type: 'Normal', reason: 'RestartMember', object: 'SvcCluster/kv', message: 'restart kv-0 on 3.5.21', count: 1 }],
    at: now,
  };

  it('shows the upgrade with its step and members done, the backup, certificate expiry, members, alarms and Events', () => {
    const text = renderView(base);
    expect(text).to.match(/^Upgrade:\s+3\.4\.34 -> 3\.5\.21 in progress, step restartMember, 1\/3 members done \(kv-0\), started 5m ago$/m);
    expect(text).to.match(/^Last backup:\s+pvc:\/\/backups\/prod\/kv\/kv-1\.db from kv-1, revision 42, 24 KiB, sha256 abababababab\.\.\., 5m ago$/m);
    expect(text).to.match(/^Certificate:\s+client Secret kv-client: expires 2026-01-31T00:00:00\.000Z \(in 29 days\)$/m);
    expect(text).to.match(/^kv-1\s+leader\s+3\.4\.34\s+healthy\s+120\s+120\s+0\s+3\.0 MiB\s+Running,ready\s+svc:v3\.4\.34$/m);
    expect(text).to.match(/^kv-2\s+unknown\s+-\s+UNREACHABLE\s+-\s+-\s+-\s+-\s+CrashLoopBackOff\s+svc:v3\.4\.34$/m);
    expect(text).to.contain('kv-2 10.244.0.9: connect ECONNREFUSED');
    expect(text).to.match(/^Alarms:\s+NOSPACE on kv-0$/m);
    const names = new Map([['8e9e05c52164694d', 'kv-0']]);
    const alarms = [{ member: alarmMember('8e9e05c52164694d', names), alarm: 'NOSPACE' }, { member: alarmMember('0', names), alarm: 'CORRUPT' }];
    expect(renderView({ ...base, alarms })).to.match(/^Alarms:\s+NOSPACE on kv-0, CORRUPT on the cluster \(member 0\)$/m);
    expect(text).to.match(/^\s+60s\s+Normal\s+RestartMember\s+SvcCluster\/kv\s+restart kv-0 on 3\.5\.21$/m);
    expect(text).to.not.contain('Last drill:');
  });

  it('shows the last restore drill, or that none ran yet under spec.backup.verify', () => {
    const drill = { time: '2026-01-01T00:08:00Z', location: 'pvc://kv-backups/prod/kv/kv-0.db', revision: 42, result: 'Failed' as const, message: 'sha256 mismatch' };
    expect(renderView({ ...base, status: { ...base.status, backups: { claim: 'kv-backups', lastVerified: drill } } }))
      .to.match(/^Last drill:\s+FAILED 2m ago, revision 42 of pvc:\/\/kv-backups\/prod\/kv\/kv-0\.db: sha256 mismatch$/m);
    const scheduled = { ...base, spec: { ...base.spec, backup: { verify: { schedule: '30 3 * * *' } } }, status: { ...base.status, backups: { claim: 'kv-backups', nextVerifyTime: '2026-01-02T03:30:00.000Z' } } };
    expect(renderView(scheduled)).to.match(/^Last drill:\s+none yet \(spec\.backup\.verify "30 3 \* \* \*", next 2026-01-02T03:30:00\.000Z\)$/m);
  });
  it('shows writes refused by an alarm and a failing continuous-backup destination from their conditions; nothing of either while they hold', () => {
    const t0 = '2026-01-01T00:00:00Z';
    const conditions = [
      { type: 'WritesRefused' as const, status: 'True' as const, reason: 'NoSpaceAlarm', message: 'writes are refused, reads go on: the NOSPACE alarm is raised for member 8e9e05c52164694d (kv-0): ...', lastTransitionTime: t0 },
      { type: 'ContinuousBackup' as const, status: 'False' as const, reason: 'DestinationUnreachable', message: 'the backup agent cannot write its segments: destination "offsite" (...): the endpoint cannot be reached', lastTransitionTime: t0 },
    ];
    const text = renderView({ ...base, status: { ...base.status, conditions } });
    expect(text).to.match(/^Writes:\s+REFUSED \(NoSpaceAlarm\): writes are refused, reads go on: the NOSPACE alarm is raised for member 8e9e05c52164694d \(kv-0\): \.\.\.$/m);
    expect(text).to.match(/^Continuous:\s+FAILING \(DestinationUnreachable\): the backup agent cannot write its segments: destination "offsite" \(\.\.\.\): the endpoint cannot be reached$/m);
    const fine = renderView({ ...base, status: { ...base.status, conditions: [{ ...conditions[0], status: 'False', reason: 'NoAlarm' }, { ...conditions[1], status: 'True', reason: 'DestinationsWritable' }] } });
    expect(fine).to.not.match(/^(Writes|Continuous):/m);
  });
});
