// The pure parts of backups into spec.backup.pvc and restores: status while a backup Job fails (its object-store
// destination too), the Secrets a Job's destinations need, the snapshot path spec.restore names, the file name of a
// pre-upgrade snapshot.
import { expect } from 'chai';
import { computeStatus, type StatusInput } from '../../../operator/controller/status.js';
import { backupFileName, JobFailure, restoreSource } from '../../../operator/runtime/kubernetes/backup-job.js';
import type { ObservedMember } from '../../../operator/planner/types.js';
import { destinationSecrets, JOB_SECRETS_MOUNT, jobDestinationAccess, secretEnvName } from '../../../operator/backup/destinations/index.js';

function member(name: string, leader = false): ObservedMember {
  return { name, configuredVersion: '3.4.34', running: true, release: '3.4.34', clusterVersion: '3.4.0', healthy: true, leader, appliedIndex: 10, id: '1' };
}

function input(over: Partial<StatusInput> = {}): StatusInput {
  const members = [member('kv-0'), member('kv-1', true), member('kv-2')];
  return {
    generation: 2, spec: { version: '3.5.21', replicas: 3, backup: { pvc: 'snaps' } }, observed: { now: 0, members },
    pods: new Map(members.map((m) => [m.name, { image: 'svc:v3.4.34', ready: true }])),
    step: { kind: 'snapshot', member: 'kv-1', from: '3.4.34', to: '3.5.21' }, now: new Date('2026-01-01T00:00:00Z'), ...over,
  };
}

describe('operator controller: backup and restore Jobs', () => {
  it('a failing backup Job blocks the upgrade: Blocked, BackupReady False and UpgradeBlocked True with its reason', () => {
    const s = computeStatus(input({ jobFailure: new JobFailure('BackupJobFailed', 'Job ns/kv-backup-x failed: no space left on device') }));
    expect(s.phase).to.equal('Blocked');
    expect(s.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'False', reason: 'BackupJobFailed', message: 'Job ns/kv-backup-x failed: no space left on device' });
    expect(s.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'True', reason: 'BackupJobFailed' });
    const ok = computeStatus(input());
    expect(ok.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'False' });
    expect(ok.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'False', reason: 'NoSnapshot' });
  });

  it('a pre-upgrade backup whose object-store destination fails blocks the upgrade with the classified cause', () => {
    const message = 'Job ns/kv-backup-x failed: destination "offsite" (s3://kv-backups/prod/kv at https://s3.example): the credentials were refused (SignatureDoesNotMatch)';
    const s = computeStatus(input({ jobFailure: new JobFailure('DestinationCredentialsRefused', message) }));
    expect(s.phase).to.equal('Blocked');
    expect(s.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'False', reason: 'DestinationCredentialsRefused', message });
    expect(s.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'True', reason: 'DestinationCredentialsRefused' });
    expect(s.conditions!.find((c) => c.type === 'Stalled')).to.include({ status: 'True', reason: 'DestinationCredentialsRefused' });
  });

  it('a Job\'s destination Secrets: credentials as env variables named by Secret and key, a CA bundle as a mounted file', () => {
    expect(secretEnvName('kv-backup.s3', 'accessKeyId')).to.equal('SVC_SECRET_KV_BACKUP_S3_ACCESSKEYID');
    const need = destinationSecrets({ bucket: 'kvb', credentialsSecret: 'creds', caSecret: 'ca' });
    expect(need.env.map((e) => `${e.secret}/${e.key}${e.optional ? '?' : ''}`)).to.deep.equal(['creds/accessKeyId', 'creds/secretAccessKey', 'creds/sessionToken?']);
    expect(need.mounts).to.deep.equal(['ca']);
    expect(destinationSecrets({ bucket: 'kvb' })).to.deep.equal({ env: [], mounts: [] });
    const read: string[] = [];
    const access = jobDestinationAccess({ [secretEnvName('creds', 'accessKeyId')]: 'AK' }, (f) => {
      read.push(f);
      return f.endsWith('/ca/ca.crt') ? 'PEM' : undefined;
    });
    expect(access.secrets('creds', 'accessKeyId')).to.equal('AK');
    expect(access.secrets('ca', 'ca.crt')).to.equal('PEM');
    expect(access.secrets('creds', 'secretAccessKey')).to.equal(undefined);
    expect(read).to.deep.equal([`${JOB_SECRETS_MOUNT}/ca/ca.crt`, `${JOB_SECRETS_MOUNT}/creds/secretAccessKey`]);
  });

  it('a failed restore shows in BackupReady but blocks no upgrade', () => {
    const s = computeStatus(input({ observed: { now: 0, members: [] }, pods: new Map(), step: { kind: 'createCluster', version: '3.5.21', replicas: 3 }, jobFailure: new JobFailure('RestoreJobFailed', 'corrupt') }));
    expect(s.phase).to.equal('Creating');
    expect(s.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'False', reason: 'RestoreJobFailed' });
    expect(s.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'False' });
  });

  it('spec.restore.snapshot is a location as status shows it (pvc://<claim>/..., any claim) or a path inside the own claim', () => {
    expect(restoreSource('ns/kv/a.db', 'snaps')).to.deep.equal({ claim: 'snaps', path: 'ns/kv/a.db' });
    expect(restoreSource('pvc://snaps/ns/kv/a.db', 'snaps')).to.deep.equal({ claim: 'snaps', path: 'ns/kv/a.db' });
    expect(restoreSource('pvc://kv-backups/ns/kv/a.db', 'kv2-backups')).to.deep.equal({ claim: 'kv-backups', path: 'ns/kv/a.db' });
    for (const bad of ['/etc/passwd', '../x.db', 'ns/../../x.db', 'pvc://Bad_Claim/a.db', 'pvc://snaps', 'pvc://snaps/../x.db', 'a//b.db', '']) {
      expect(() => restoreSource(bad, 'snaps'), bad).to.throw(JobFailure).with.property('reason', 'RestoreSnapshotInvalid');
    }
  });

  it('names a pre-upgrade snapshot after the upgrade, so a re-run Job writes the same file', () => {
    const t = Date.parse('2026-03-04T05:06:07.089Z');
    expect(backupFileName('kv-1', '3.4.34', '3.5.21', t)).to.equal('kv-1-3.4.34-to-3.5.21-2026-03-04T05-06-07-089Z.db');
  });
});
