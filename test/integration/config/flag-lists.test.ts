// Every flag of the reference's `etcd --help` is either accepted by svc's parser with the reference's meaning,
// or refused with "flag --X is not supported by svc" (exit status 2 from the binary); none is silently
// ignored. 3.4: the help of the installed reference (/usr/bin/etcd, 3.4.23). 3.5: the flag names of
// release-3.5's server/etcdmain/help.go. The unsupported ones are listed in docs/upgrading.md.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, parseServerConfig } from '../../../server/config/flags.js';
import { defaultText, enumValues, flagsOf, type FlagSpec } from '../../../server/config/flag-table.js';
import { releaseFor, type Release } from '../../../server/releases.js';
import { runSvc } from '../../../harness/svc-cluster.js';

const FLAGS_35 = `name data-dir wal-dir snapshot-count heartbeat-interval election-timeout initial-election-tick-advance
listen-peer-urls listen-client-urls listen-client-http-urls max-snapshots max-wals quota-backend-bytes backend-bbolt-freelist-type
backend-batch-interval backend-batch-limit max-txn-ops max-request-bytes max-concurrent-streams enable-grpc-gateway
grpc-keepalive-min-time grpc-keepalive-interval grpc-keepalive-timeout socket-reuse-port socket-reuse-address raft-read-timeout
raft-write-timeout initial-advertise-peer-urls initial-cluster initial-cluster-state initial-cluster-token advertise-client-urls
discovery discovery-fallback discovery-proxy discovery-srv discovery-srv-name strict-reconfig-check pre-vote
auto-compaction-retention auto-compaction-mode enable-v2 v2-deprecation cert-file key-file client-cert-auth client-cert-file
client-key-file client-crl-file client-cert-allowed-hostname trusted-ca-file auto-tls peer-cert-file peer-key-file
peer-client-cert-auth peer-trusted-ca-file peer-cert-allowed-cn peer-cert-allowed-hostname peer-auto-tls peer-client-cert-file
peer-client-key-file self-signed-cert-validity peer-crl-file cipher-suites cors host-whitelist tls-min-version tls-max-version
auth-token bcrypt-cost auth-token-ttl enable-pprof metrics listen-metrics-urls logger log-outputs log-level enable-log-rotation
log-rotation-config-json experimental-enable-distributed-tracing experimental-distributed-tracing-address
experimental-distributed-tracing-service-name experimental-distributed-tracing-instance-id
experimental-distributed-tracing-sampling-rate proxy proxy-failure-wait proxy-refresh-interval proxy-dial-timeout
proxy-write-timeout proxy-read-timeout experimental-initial-corrupt-check experimental-corrupt-check-time
experimental-compact-hash-check-enabled experimental-compact-hash-check-time experimental-enable-v2v3
experimental-enable-lease-checkpoint experimental-enable-lease-checkpoint-persist experimental-compaction-batch-limit
experimental-compaction-sleep-interval experimental-peer-skip-client-san-verification experimental-watch-progress-notify-interval
experimental-downgrade-check-time experimental-memory-mlock experimental-warning-apply-duration
experimental-txn-mode-write-with-shared-buffer experimental-bootstrap-defrag-threshold-megabytes
experimental-stop-grpc-service-on-defrag force-new-cluster unsafe-no-fsync`.split(/\s+/);

/** The flags `etcd --help` of the installed reference lists. */
function referenceHelpFlags(): string[] {
  const text = execFileSync('/usr/bin/etcd', ['--help'], { encoding: 'utf8' });
  return [...new Set([...text.matchAll(/^\s+--([a-z0-9-]+)/gm)].map((m) => m[1]))];
}

/** A valid value for a flag (its default, or a sample of its kind), plus flags it needs next to it. */
function sample(spec: FlagSpec, release: Release): string[] {
  const companions: Record<string, string[]> = {
    'listen-client-urls': ['--advertise-client-urls=http://127.0.0.1:2379'],
    'cert-file': ['--key-file=k.pem'],
    'key-file': ['--cert-file=c.pem'],
    'peer-cert-file': ['--peer-key-file=k.pem'],
    'peer-key-file': ['--peer-cert-file=c.pem'],
    'client-cert-file': ['--client-key-file=k.pem'],
    'client-key-file': ['--client-cert-file=c.pem'],
    'peer-client-cert-file': ['--peer-client-key-file=k.pem'],
    'peer-client-key-file': ['--peer-client-cert-file=c.pem'],
  };
  let v = defaultText(spec, release);
  if (spec.name === 'log-package-levels') v = 'etcdserver=INFO';
  else if (spec.name === 'backend-batch-interval') v = '50ms'; // a duration whose default is empty
  else if (v === '' && spec.kind === 'enum') v = enumValues(spec, release).find((x) => x !== '') ?? '';
  else if (v === '' && !spec.defaultOnly) v = spec.kind === 'urls' ? 'http://127.0.0.1:12381' : spec.kind === 'cluster' ? 'default=http://localhost:2380' : 'x';
  if (spec.name === 'listen-client-urls' || spec.name === 'listen-peer-urls') v = 'http://127.0.0.1:2390';
  return [`--${spec.name}=${v}`, ...(companions[spec.name] ?? [])];
}

function errorOf(f: () => unknown): Error | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return e as Error;
  }
}

const upgradingDoc = readFileSync(fileURLToPath(new URL('../../../../docs/upgrading.md', import.meta.url)), 'utf8');

for (const [version, list] of [
  ['3.4.34', referenceHelpFlags],
  ['3.5.21', () => FLAGS_35],
] as const) {
  describe(`every flag of the reference ${version.slice(0, 3)} help: accepted or refused as not supported`, function () {
    const release = releaseFor(version);
    const flags = list().filter((f) => !['help', 'version', 'config-file'].includes(f));
    const known = flagsOf(release);

    it(`the list is the reference's (${flags.length} flags)`, () => {
      assert.ok(flags.length > 70, `only ${flags.length} flags`);
    });

    it('accepted flags parse with a valid value; unsupported ones are refused with a clear message', () => {
      const problems: string[] = [];
      for (const flag of flags) {
        const spec = known.get(flag);
        if (release.unsupportedFlags.includes(flag)) {
          const e = errorOf(() => parseServerConfig([`--${flag}=1`], {}, release));
          if (!(e instanceof ConfigError) || e.message !== `flag --${flag} is not supported by svc`) problems.push(`${flag}: refused with ${e?.message ?? 'nothing'}`);
          continue;
        }
        if (!spec) {
          problems.push(`${flag}: neither known nor listed as unsupported`);
          continue;
        }
        const e = errorOf(() => {
          const r = parseServerConfig(sample(spec, release), {}, release);
          if (r.unsupported && r.unsupported.length > 0) throw new Error(r.unsupported.join('; '));
        });
        if (e) problems.push(`${flag}: ${e.message}`);
      }
      assert.deepEqual(problems, []);
    });

    it('a flag svc only parses is refused when set to anything but its default', () => {
      for (const spec of [...known.values()].filter((s) => s.defaultOnly && flags.includes(s.name))) {
        const other = spec.kind === 'bool' ? String(defaultText(spec, release) !== 'true') : spec.kind === 'duration' ? '7s' : spec.kind === 'enum' ? undefined : '3';
        if (other === undefined) continue;
        const r = parseServerConfig([`--${spec.name}=${other}`], {}, release);
        assert.match((r.unsupported ?? []).join('\n'), new RegExp(`flag --${spec.name} is not supported by svc`), spec.name);
      }
    });

    it('docs/upgrading.md lists every unsupported flag', () => {
      const missing = release.unsupportedFlags.filter((f) => !upgradingDoc.includes(`--${f}`));
      assert.deepEqual(missing, []);
    });
  });
}

describe('the svc binary refuses an unsupported flag with exit status 2', function () {
  this.timeout(30000);
  it('--discovery-srv', async () => {
    const r = await runSvc(['--discovery-srv=example.com'], { version: '3.5.21' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /flag --discovery-srv is not supported by svc/);
  });
  it('--cors=http://example.com (parsed, not implemented: only the default is accepted)', async () => {
    const r = await runSvc(['--cors=http://example.com', '--data-dir=/nonexistent/x'], { version: '3.5.21' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /flag --cors is not supported by svc/);
  });
});
