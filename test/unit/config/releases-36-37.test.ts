// The 3.6 and 3.7 rows of the release table, through the flag parser that reads them: removed and renamed flags,
// 3.6's deprecation warnings and both-names errors, feature gates, --max-learners, --snapshot-count and
// --v2-deprecation; and the storage-version step over a real backend.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServerConfig, ConfigError } from '../../../server/config/flags.js';
import { releaseFor, type Release } from '../../../server/releases.js';
import { detectStorageVersion, setStorageVersion, updateStorageVersion } from '../../../server/core/storage-version.js';
import { NO_DOWNGRADE } from '../../../server/cluster/downgrade.js';
import { openBackend } from '../../../server/storage/backend.js';
import { nopLogger } from '../../../server/log/logger.js';
import { Membership } from '../../../server/cluster/membership.js';

const R35 = releaseFor('3.5.21');
const R36 = releaseFor('3.6.16');
const R37 = releaseFor('3.7.3');

function fails(argv: string[], release: Release): string {
  try {
    parseServerConfig(argv, {}, release);
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`expected ${argv.join(' ')} to fail on ${release.version}`);
}

describe('release table: 3.6 and 3.7', () => {
  it('the v2 and proxy flags are undefined from 3.6, the experimental and v2 discovery flags from 3.7', () => {
    for (const f of ['enable-v2', 'experimental-enable-v2v3', 'proxy']) {
      for (const r of [R36, R37]) expect(fails([`--${f}`], r)).to.match(new RegExp(`^flag provided but not defined: -${f} \\(not available in release ${r.version}`));
    }
    expect(fails(['--experimental-corrupt-check-time=1m'], R37)).to.include('use --corrupt-check-time');
    expect(fails(['--experimental-initial-corrupt-check'], R37)).to.include('use --feature-gates=InitialCorruptCheck=true');
    expect(fails(['--discovery=http://x'], R37)).to.match(/^flag provided but not defined: -discovery /);
    expect(parseServerConfig(['--discovery='], {}, R36).config.name).to.equal('default');
    expect(fails(['--feature-gates=CompactHashCheck=true'], R35)).to.match(/^flag provided but not defined: -feature-gates/);
  });

  it("an experimental name sets its 3.6 name's setting; 3.6 warns, and refuses both names at once", () => {
    const r = parseServerConfig(['--experimental-warning-apply-duration=250ms'], {}, R36);
    expect(r.config.warningApplyMs).to.equal(250);
    expect(r.warnings).to.deep.equal(["--experimental-warning-apply-duration is deprecated in v3.6 and will be decommissioned in v3.7. Use '--warning-apply-duration' instead."]);
    expect(parseServerConfig(['--experimental-warning-apply-duration=250ms'], {}, R35).warnings).to.deep.equal([]);
    expect(parseServerConfig(['--warning-apply-duration=300ms'], {}, R37).config.warningApplyMs).to.equal(300);
    expect(fails(['--experimental-compaction-batch-limit=5', '--compaction-batch-limit=6'], R36)).to.equal('cannot set --experimental-compaction-batch-limit and --compaction-batch-limit at the same time, please use --compaction-batch-limit only');
  });

  it('feature gates: defaults per release, AllAlpha, the experimental flag, and the errors', () => {
    expect(Object.fromEntries(parseServerConfig([], {}, R36).config.featureGates)).to.include({ TxnModeWriteWithSharedBuffer: true, InitialCorruptCheck: false });
    expect(parseServerConfig([], {}, R36).config.featureGates.has('FastLeaseKeepAlive')).to.equal(false);
    expect(parseServerConfig([], {}, R37).config.featureGates.get('FastLeaseKeepAlive')).to.equal(true);
    const all = parseServerConfig(['--feature-gates=AllAlpha=true,CompactHashCheck=false'], {}, R36).config;
    expect([all.experimentalInitialCorruptCheck, all.featureGates.get('CompactHashCheck'), all.featureGates.get('LeaseCheckpoint')]).to.deep.equal([true, false, true]);
    expect(parseServerConfig(['--experimental-initial-corrupt-check'], {}, R36).config.experimentalInitialCorruptCheck).to.equal(true);
    expect(parseServerConfig(['--experimental-initial-corrupt-check'], {}, R35).config.experimentalInitialCorruptCheck).to.equal(true);
    expect(fails(['--experimental-initial-corrupt-check', '--feature-gates=InitialCorruptCheck=true'], R36)).to.equal('cannot specify both flags: --experimental-initial-corrupt-check=true and --feature-gates=InitialCorruptCheck=true at the same time, please just use --feature-gates=InitialCorruptCheck=true');
    expect(fails(['--feature-gates=LeaseCheckpointPersist=true'], R36)).to.equal('enabling feature gate LeaseCheckpointPersist requires enabling feature gate LeaseCheckpoint');
    expect(fails(['--feature-gates=PriorityRequest=true'], R36)).to.equal('invalid value "PriorityRequest=true" for flag -feature-gates: unrecognized feature gate: PriorityRequest');
  });

  it('defaults: --snapshot-count 10000, --max-learners 1; --v2-deprecation forced to write-only (3.6: unless write-only-skip-check)', () => {
    expect([R35, R36, R37].map((r) => parseServerConfig([], {}, r).config.snapshotCount)).to.deep.equal([100000, 10000, 10000]);
    expect(parseServerConfig(['--max-learners=3'], {}, R36).config.maxLearners).to.equal(3);
    expect(parseServerConfig(['--v2-deprecation=gone'], {}, R36).config.v2Deprecation).to.equal('write-only');
    expect(parseServerConfig(['--v2-deprecation=write-only-skip-check'], {}, R36).config.v2Deprecation).to.equal('write-only-skip-check');
    expect(parseServerConfig(['--v2-deprecation=write-only-skip-check'], {}, R37).config.v2Deprecation).to.equal('write-only');
    expect(fails(['--v2-deprecation=not-yet'], R36)).to.match(/v2-deprecation/);
    expect(fails(['--discovery-fallback=proxy'], R36)).to.equal('v2 proxy is deprecated, and --discovery-fallback can\'t be configured as "proxy"');
  });

  it('--max-learners is the learner limit of a member add (1 by default)', () => {
    const ms = new Membership(1n);
    ms.members.set(2n, { id: 2n, name: 'l', peerURLs: ['http://127.0.0.1:2'], clientURLs: [], isLearner: true });
    expect(() => ms.validateAdd(3n, ['http://127.0.0.1:3'], true)).to.throw('etcdserver: too many learner members in cluster');
    expect(() => ms.validateAdd(3n, ['http://127.0.0.1:3'], true, 2)).to.not.throw();
  });

  it('storage version: unknown on an empty db, 3.5.0 with a term, brought to the cluster version by the monitor (never above the member\'s line), removed going back to 3.5', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-storage-version-'));
    const backend = openBackend(nopLogger, join(dir, 'db'), {});
    try {
      expect(detectStorageVersion(backend)).to.equal(undefined);
      backend.setConsistentIndex(5, 2);
      backend.forceCommit();
      expect(detectStorageVersion(backend)).to.equal('3.5.0');
      updateStorageVersion(backend, '3.5', NO_DOWNGRADE, '3.6.16', nopLogger);
      expect(detectStorageVersion(backend)).to.equal('3.5.0');
      updateStorageVersion(backend, '3.6', NO_DOWNGRADE, '3.5.21', nopLogger);
      expect(detectStorageVersion(backend), 'never above the member\'s own line').to.equal('3.5.0');
      updateStorageVersion(backend, '3.6', NO_DOWNGRADE, '3.6.16', nopLogger);
      expect(detectStorageVersion(backend)).to.equal('3.6.0');
      // the cluster version goes back to 3.5 only in a downgrade the leader lowers it for
      updateStorageVersion(backend, '3.5', NO_DOWNGRADE, '3.6.16', nopLogger);
      expect(detectStorageVersion(backend)).to.equal('3.5.0');
      expect(setStorageVersion(backend, '3.6', nopLogger)).to.equal(true);
      expect(setStorageVersion(backend, '3.6', nopLogger)).to.equal(false);
    } finally {
      backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
