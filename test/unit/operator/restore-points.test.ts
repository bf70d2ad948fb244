// The pure rules of backups in destinations (operator/backup/restore-points.ts) and of their spec: the object
// layout, manifests (ours, corrupt, foreign), which restore point a revision or a time picks or why none, retention
// by count and age, durations, and the validation of spec.backup.destinations and spec.restore.
import { expect } from 'chai';
import {
  clustersIn, coveredRange, fullManifest, fullSnapshotKey, manifestKeyOf, parseManifest, pickRestorePoint, retainFull, type RestorePoint,
} from '../../../operator/backup/restore-points.js';
import { durationMs } from '../../../operator/api/duration.js';
import { parseSvcCluster, ValidationError } from '../../../operator/api/validate.js';
import { unsupportedOnKubernetes } from '../../../operator/runtime/kubernetes/backup-job.js';

function point(revision: number, time: string): RestorePoint {
  const key = fullSnapshotKey('prod/kv', 'kv', revision, time);
  const m = fullManifest({ cluster: 'kv', member: 'kv-0', revision, time, sha256: 'ab'.repeat(32), size: 4096, release: '3.5.21', backupKind: 'scheduled', hashKV: 7 }, key);
  return { ...m, key, manifestKey: manifestKeyOf(key) };
}

const P = [point(10, '2026-11-20T00:00:00.000Z'), point(50, '2026-11-21T00:00:00.000Z'), point(90, '2026-11-22T00:00:00.000Z')];
const problemsOf = (spec: Record<string, unknown>): string[] => {
  try {
    parseSvcCluster({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'kv' }, spec: { version: '3.5.21', replicas: 1, ...spec } });
    return [];
  } catch (e) {
    if (e instanceof ValidationError) return e.problems;
    throw e;
  }
};
const S3 = { bucket: 'kv-backups', endpoint: 'https://s3.example.test', prefix: 'prod/kv', credentialsSecret: 'kv-s3' };

describe('backups in destinations: layout, restore points, retention', () => {
  it('keys: <prefix>/<cluster>/full/<revision, 20 digits>-<time>.db with the manifest beside it; key order is revision order', () => {
    expect(fullSnapshotKey('prod/kv', 'kv', 123, '2026-11-26T10:00:00.000Z')).to.equal('prod/kv/kv/full/00000000000000000123-2026-11-26T10-00-00-000Z.db');
    expect(fullSnapshotKey(undefined, 'kv', 1, '2026-11-26T10:00:00.000Z')).to.equal('kv/full/00000000000000000001-2026-11-26T10-00-00-000Z.db');
    expect(manifestKeyOf('a/kv/full/1-x.db')).to.equal('a/kv/full/1-x.json');
    expect([fullSnapshotKey('', 'c', 9, 't'), fullSnapshotKey('', 'c', 10, 't')].sort()[0]).to.include('00009');
    expect(clustersIn(['prod/kv/kv/full/1.db', 'prod/kv/other/full/2.json', 'prod/kv/kv/delta/3', 'prod/x/full/4.db', 'else/a/full/5.db'], 'prod/kv')).to.deep.equal(['kv', 'other']);
  });

  it('a manifest reads back as the point it describes; corrupt and foreign ones say why they are not restore points', () => {
    const p = P[1];
    const text = JSON.stringify(fullManifest({ cluster: 'kv', member: 'kv-0', revision: 50, time: p.time, sha256: p.sha256, size: 4096, release: '3.5.21', backupKind: 'on-demand' }, p.key));
    const back = parseManifest(text, p.manifestKey);
    expect(back).to.include({ key: p.key, manifestKey: p.manifestKey, revision: 50, snapshot: p.key.slice('prod/kv/kv/'.length) });
    expect(parseManifest('{"rev', 'a/kv/full/x.json')).to.have.property('problem').that.matches(/^a\/kv\/full\/x\.json is not JSON .*: corrupt, or not written by svc-operator$/);
    expect(parseManifest('{"hello": 1}', 'k.json')).to.deep.equal({ problem: 'k.json is not an svc-operator manifest (no format "svc.dev/backup/v1")' });
    expect(parseManifest(JSON.stringify({ ...JSON.parse(text), revision: 'x', member: undefined }), 'k.json')).to.deep.equal({ problem: 'k.json is a damaged manifest (missing or wrong: member, revision)' });
  });

  it('a revision or a time picks the newest full snapshot at or before it; none: the newest', () => {
    const pick = (t: { revision?: number; time?: string }) => {
      const r = pickRestorePoint([P[2], P[0], P[1]], t, 'dest');
      return 'point' in r ? r.point.revision : r.refused;
    };
    expect(pick({})).to.equal(90);
    expect(pick({ revision: 10 })).to.equal(10);
    expect(pick({ revision: 89 })).to.equal(50);
    expect(pick({ revision: 10_000 })).to.equal(90);
    expect(pick({ time: '2026-11-21T00:00:00.000Z' })).to.equal(50);
    expect(pick({ time: '2026-11-21T23:59:59Z' })).to.equal(50);
    expect(coveredRange(P)).to.deep.include({ oldest: P[0], newest: P[2] });
  });

  it('a point before every restore point, or none at all, is refused naming the covered range', () => {
    expect(pickRestorePoint(P, { revision: 9 }, 'dest "x"')).to.deep.equal({
      refused: 'dest "x" does not cover revision 9: it has restore points from revision 10 (2026-11-20T00:00:00.000Z) to revision 90 (2026-11-22T00:00:00.000Z), 3 in all; ask for a point in that range',
    });
    expect(pickRestorePoint(P, { time: '2026-11-19T00:00:00Z' }, 'd')).to.have.property('refused').that.includes('does not cover time 2026-11-19T00:00:00Z');
    expect(pickRestorePoint([], {}, 'd')).to.have.property('refused').that.matches(/^d holds no restore points .*take a backup first/);
  });

  it('retention keeps the newest `keep`, drops those older than maxAge, never the newest one', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const revs = (r: { kept: RestorePoint[]; removed: RestorePoint[] }) => [r.kept.map((p) => p.revision), r.removed.map((p) => p.revision)];
    expect(revs(retainFull(P, 2, undefined, now))).to.deep.equal([[50, 90], [10]]);
    expect(revs(retainFull(P, 5, undefined, now))).to.deep.equal([[10, 50, 90], []]);
    expect(revs(retainFull(P, 5, durationMs('36h'), now))).to.deep.equal([[50, 90], [10]]);
    // all too old: the newest stays (a destination keeps its last restore point)
    expect(revs(retainFull(P, 5, durationMs('1h'), now))).to.deep.equal([[90], [10, 50]]);
    expect(revs(retainFull(P, 1, undefined, now))).to.deep.equal([[90], [10, 50]]);
  });

  it('durations: 168h, 7d, 1h30m; anything else is none', () => {
    expect(durationMs('168h')).to.equal(durationMs('7d'));
    expect(durationMs('1h30m')).to.equal(5_400_000);
    expect(durationMs('10s')).to.equal(10_000);
    for (const bad of ['', '7', '1w', '1.5h', 'h']) expect(durationMs(bad), bad).to.equal(undefined);
  });
});

describe('spec.backup.destinations and spec.restore: validation', () => {
  it('accepts the shape of the docs (and spec.restore.snapshot alone, as before)', () => {
    expect(problemsOf({ backup: { keep: 24, maxAge: '168h', destinations: [{ name: 'offsite', s3: S3 }, { name: 'claim', pvc: 'kv-backups' }] } })).to.deep.equal([]);
    expect(problemsOf({ restore: { source: { s3: S3 }, revision: 123456 } })).to.deep.equal([]);
    expect(problemsOf({ backup: { destinations: [{ name: 'offsite', s3: S3 }] }, restore: { source: { destination: 'offsite', cluster: 'kv' }, time: '2026-11-26T10:00:00Z' } })).to.deep.equal([]);
    expect(problemsOf({ restore: { snapshot: 'pvc://kv-backups/a.db' } })).to.deep.equal([]);
  });

  it('says what is wrong with a destination', () => {
    expect(problemsOf({ backup: { maxAge: '1 week', destinations: [{ name: 'Off', s3: { ...S3, bucket: 'x', endpoint: 's3.example.test', prefix: '/p/' } }, { name: 'two', s3: S3, pvc: 'c' }, { name: 'two', pvc: 'c' }, { name: 'ca', s3: { ...S3, caBundle: 'nope', caSecret: 's' } }] } })).to.deep.equal([
      'spec.backup.maxAge "1 week" is not a duration (e.g. 168h, 7d, 90m)',
      'spec.backup.destinations[0].name must be a DNS label (lower-case letters, digits, "-")',
      'spec.backup.destinations[0].s3.bucket must be a bucket name (3 to 63 lower-case letters, digits, "." and "-")',
      'spec.backup.destinations[0].s3.endpoint must be an http(s):// URL, not "s3.example.test"',
      'spec.backup.destinations[0].s3.prefix must not start or end with "/"',
      'spec.backup.destinations[1] has exactly one of pvc and s3',
      'spec.backup.destinations[2].name "two" is used twice',
      'spec.backup.destinations[3].s3 takes caBundle or caSecret, not both',
      'spec.backup.destinations[3].s3.caBundle must be PEM certificates (-----BEGIN CERTIFICATE-----)',
    ]);
  });

  it('says what is wrong with spec.restore', () => {
    expect(problemsOf({ restore: {} })).to.deep.equal(['spec.restore needs exactly one of snapshot (a file) and source (a destination\'s restore points)']);
    expect(problemsOf({ restore: { snapshot: 'a.db', revision: 5 } })).to.deep.equal(['spec.restore.revision and spec.restore.time go with spec.restore.source']);
    expect(problemsOf({ restore: { source: { s3: S3 }, revision: 5, time: 'yesterday' } })).to.deep.equal([
      'spec.restore takes a revision or a time, not both',
      'spec.restore.time must be an RFC 3339 time (e.g. 2026-11-26T10:00:00Z), not "yesterday"',
    ]);
    expect(problemsOf({ restore: { source: { destination: 'offsite' }, revision: 0 } })).to.deep.equal([
      'spec.restore.revision must be a positive integer',
      'spec.restore.source.destination "offsite" is not one of spec.backup.destinations (none)',
    ]);
    expect(problemsOf({ restore: { source: { s3: S3, destination: 'x' } } })[0]).to.equal('spec.restore.source names exactly one of destination (of spec.backup.destinations) and s3 (a bucket)');
  });

  it('the Kubernetes runtime carries out s3 destinations and restores from them; it refuses a second claim, with the way out (no silent skip)', () => {
    expect(unsupportedOnKubernetes('kv', { version: '3.5.21', replicas: 3, backup: { destinations: [{ name: 'claim', pvc: 'kv-backups' }] } })).to.deep.equal([]);
    const p = unsupportedOnKubernetes('kv', { version: '3.5.21', replicas: 3, backup: { destinations: [{ name: 'offsite', s3: S3 }, { name: 'other', pvc: 'elsewhere' }] }, restore: { source: { s3: S3 } } });
    expect(p).to.deep.equal(['spec.backup.destinations[other].pvc: backups go to one claim (kv-backups) in this release; name elsewhere in spec.backup.pvc instead']);
  });
});
