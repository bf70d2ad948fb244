import { expect } from 'chai';
import { parseServerConfig, ConfigError, usage, defaultConfig } from '../../../server/config/flags.js';
import { releaseFor } from '../../../server/releases.js';

const R33 = releaseFor('3.3.27');
const R34 = releaseFor('3.4.34');
const R35 = releaseFor('3.5.21');

function parse(argv: string[], env: NodeJS.ProcessEnv = {}, release = R35) {
  return parseServerConfig(argv, env, release);
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    expect((e as ConfigError).code).to.equal('CONFIG');
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('parseServerConfig: flag forms', () => {
  it('accepts --flag=value, --flag value, -flag value and -flag=value', () => {
    for (const argv of [['--name=a'], ['--name', 'a'], ['-name', 'a'], ['-name=a']]) {
      expect(parse(argv).config.name).to.equal('a');
    }
  });
  it('takes the next argument as the value even when it starts with a dash', () => {
    expect(parse(['--wal-dir', '-odd']).config.walDir).to.equal('-odd');
  });
  it('accepts booleans as --flag, --flag=true|false and Go forms (1, t, F...)', () => {
    expect(parse(['--enable-v2']).config.enableV2).to.equal(true);
    expect(parse(['--enable-v2=true']).config.enableV2).to.equal(true);
    expect(parse(['-enable-v2=false'], {}, R33).config.enableV2).to.equal(false);
    expect(parse(['--strict-reconfig-check=F']).config.strictReconfigCheck).to.equal(false);
    expect(parse(['--force-new-cluster=1']).config.forceNewCluster).to.equal(true);
  });
  it('does not take a separate value for a boolean (like Go: the value becomes an argument)', () => {
    expect(errorOf(() => parse(['--enable-v2', 'false'])).message).to.match(/unexpected argument "false"/);
  });
  it('lets the last occurrence win', () => {
    expect(parse(['--name=a', '--name=b']).config.name).to.equal('b');
  });
  it('returns a usage marker for -h / --help / -help and a version marker for --version', () => {
    for (const h of ['-h', '--help', '-help', '--h']) expect(parse([h]).action).to.equal('help');
    expect(parse(['--version']).action).to.equal('version');
    expect(parse(['--version=false']).action).to.equal('run');
    expect(parse([]).action).to.equal('run');
  });
  it('rejects unknown flags, bad syntax, missing values and stray arguments', () => {
    expect(errorOf(() => parse(['--foo'])).message).to.match(/^flag provided but not defined: -foo/);
    expect(errorOf(() => parse(['---name=a'])).message).to.match(/bad flag syntax/);
    expect(errorOf(() => parse(['--name'])).message).to.match(/flag needs an argument: --name/);
    expect(errorOf(() => parse(['infra1'])).message).to.match(/unexpected argument "infra1"/);
    expect(errorOf(() => parse(['--', 'x'])).message).to.match(/unexpected argument "x"/);
    expect(parse(['--name=a', '--']).config.name).to.equal('a');
  });
  it('prints a usage text listing only the flags the release knows', () => {
    const u35 = usage(R35);
    expect(u35).to.include('--log-outputs').and.include('--logger').and.include('--initial-cluster-state');
    expect(u35).to.match(/--log-package-levels[\s\S]*DEPRECATED/);
    const u33 = usage(R33);
    expect(u33).to.not.include('--logger');
    expect(u33).to.not.include('--log-outputs');
    expect(u33).to.include('--log-output');
  });
});

describe('parseServerConfig: defaults', () => {
  it('uses the reference defaults', () => {
    const c = parse([]).config;
    expect(c.name).to.equal('default');
    expect(c.dataDir).to.equal('default.svc');
    expect(c.walDir).to.equal('');
    expect(c.tickMs).to.equal(100);
    expect(c.electionMs).to.equal(1000);
    expect(c.snapshotCount).to.equal(100000);
    expect(c.quotaBackendBytes).to.equal(2 * 1024 * 1024 * 1024);
    expect(c.maxRequestBytes).to.equal(1.5 * 1024 * 1024);
    expect(c.maxTxnOps).to.equal(128);
    expect(c.maxSnapshots).to.equal(5);
    expect(c.maxWals).to.equal(5);
    expect(c.listenClientUrls.map((u) => u.host)).to.deep.equal(['localhost:2379']);
    expect(c.listenPeerUrls.map((u) => u.host)).to.deep.equal(['localhost:2380']);
    expect([...c.initialCluster]).to.deep.equal([['default', ['http://localhost:2380']]]);
    expect(c.initialClusterToken).to.equal('svc-cluster');
    expect(c.initialClusterState).to.equal('new');
    expect(c.strictReconfigCheck).to.equal(true);
    expect(c.grpcKeepaliveMinTimeMs).to.equal(5000);
    expect(c.grpcKeepaliveIntervalMs).to.equal(2 * 3600 * 1000);
    expect(c.grpcKeepaliveTimeoutMs).to.equal(20000);
    expect(c.autoCompactionMode).to.equal('periodic');
    expect(c.metrics).to.equal('basic');
    expect(c.logOutputs).to.deep.equal(['default']);
    expect(c.logLevel).to.equal('info');
  });
  it('takes release-dependent defaults from the release table', () => {
    expect(defaultConfig(R33)).to.include({ enableV2: true, preVote: false, logger: 'capnslog' });
    expect(defaultConfig(R34)).to.include({ enableV2: false, preVote: false, logger: 'capnslog' });
    expect(defaultConfig(R35)).to.include({ enableV2: false, preVote: true, logger: 'zap' });
  });
  it('derives data-dir and initial-cluster from --name and the advertised peer URLs', () => {
    const c = parse(['--name=infra1', '--initial-advertise-peer-urls=http://127.0.0.1:12380', '--listen-peer-urls=http://127.0.0.1:12380']).config;
    expect(c.dataDir).to.equal('infra1.svc');
    expect([...c.initialCluster]).to.deep.equal([['infra1', ['http://127.0.0.1:12380']]]);
  });
  it('parses a full three-member command line like the seed shows', () => {
    const c = parse([
      '--name', 'm1', '--data-dir', '/var/lib/svc/m1',
      '--listen-client-urls', 'http://127.0.0.1:2379,http://127.0.0.2:2379', '--advertise-client-urls', 'http://10.0.0.1:2379',
      '--listen-peer-urls', 'http://127.0.0.1:2380', '--initial-advertise-peer-urls', 'http://localhost:2380',
      '--initial-cluster', 'm1=http://127.0.0.1:2380,m2=http://10.0.0.2:2380,m3=http://10.0.0.3:2380,m3=https://10.0.0.3:2390',
      '--initial-cluster-token', 'tok', '--initial-cluster-state', 'new',
    ]).config;
    expect(c.listenClientUrls.map(String)).to.deep.equal(['http://127.0.0.1:2379/', 'http://127.0.0.2:2379/']);
    expect(c.initialCluster.get('m3')).to.deep.equal(['http://10.0.0.3:2380', 'https://10.0.0.3:2390']);
    expect(c.initialCluster.size).to.equal(3);
    expect(c.initialClusterToken).to.equal('tok');
  });
  it('parses numbers, durations and enums', () => {
    const c = parse([
      '--snapshot-count=5000', '--quota-backend-bytes=0x100000', '--grpc-keepalive-min-time=1m30s', '--grpc-keepalive-timeout=250ms',
      '--auto-compaction-mode=revision', '--auto-compaction-retention=1000', '--metrics=extensive', '--initial-cluster-state=existing',
    ]).config;
    expect(c.snapshotCount).to.equal(5000);
    expect(c.quotaBackendBytes).to.equal(1048576);
    expect(c.grpcKeepaliveMinTimeMs).to.equal(90000);
    expect(c.grpcKeepaliveTimeoutMs).to.equal(250);
    expect(c.autoCompactionMode).to.equal('revision');
    expect(c.metrics).to.equal('extensive');
    expect(c.initialClusterState).to.equal('existing');
  });
});

describe('parseServerConfig: environment variables', () => {
  it('fills flags not given on the command line from SVC_* variables', () => {
    const c = parse(['--name=a'], { SVC_DATA_DIR: '/d', SVC_ENABLE_V2: 'true', SVC_SNAPSHOT_COUNT: '7', SVC_INITIAL_CLUSTER: 'a=http://localhost:2380' }).config;
    expect(c.name).to.equal('a');
    expect(c.dataDir).to.equal('/d');
    expect(c.enableV2).to.equal(true);
    expect(c.snapshotCount).to.equal(7);
  });
  it('does not treat SVC_VERSION as the --version flag', () => {
    expect(parse([], { SVC_VERSION: '3.5.21' }).action).to.equal('run');
  });
  it('warns about unrecognized SVC_* variables', () => {
    expect(parse([], { SVC_NOPE: 'x' }).warnings).to.include('unrecognized environment variable SVC_NOPE=x');
  });
  it('names the variable in value errors', () => {
    expect(errorOf(() => parse([], { SVC_HEARTBEAT_INTERVAL: 'fast' })).message).to.match(/environment variable SVC_HEARTBEAT_INTERVAL/);
  });
  it('a variable shadowed by its flag: a warning in 3.3, an error from 3.4 (release table)', () => {
    const r = parse(['--name=a'], { SVC_NAME: 'b' }, R33);
    expect(r.config.name).to.equal('a');
    expect(r.warnings.join('\n')).to.match(/SVC_NAME is shadowed/);
    expect(errorOf(() => parse(['--name=a'], { SVC_NAME: 'b' }, R34)).message).to.match(/conflicting environment variable SVC_NAME/);
  });
});

describe('parseServerConfig: validation', () => {
  it('rejects bad URLs with the flag and the reason', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--listen-peer-urls=ftp://127.0.0.1:1'], /--listen-peer-urls: URL scheme must be http, https, unix or unixs/],
      [['--listen-peer-urls=http://127.0.0.1'], /port is required/],
      [['--listen-peer-urls=http://127.0.0.1:2380/path'], /must not contain a path/],
      [['--listen-peer-urls=http://example.com:2380'], /IP address or localhost/],
      [['--listen-peer-urls=not a url'], /not a URL/],
      [['--listen-peer-urls=http://127.0.0.1:99999'], /not a URL|between 1 and 65535/],
      [['--advertise-client-urls=http://:2379', '--listen-client-urls=http://127.0.0.1:2379'], /empty host|not a URL/],
      [['--initial-cluster=default'], /must have the form <name>=<peer URL>/],
    ];
    for (const [argv, re] of cases) expect(errorOf(() => parse(argv)).message, argv.join(' ')).to.match(re);
  });
  it('requires --advertise-client-urls when --listen-client-urls is set explicitly (as the reference)', () => {
    const e = errorOf(() => parse(['--listen-client-urls=http://127.0.0.1:2379']));
    expect(e.message).to.equal('--advertise-client-urls is required when --listen-client-urls is set explicitly');
    expect(parse(['--listen-client-urls=http://127.0.0.1:2379', '--advertise-client-urls=http://127.0.0.1:2379']).action).to.equal('run');
  });
  it("requires the member's own name in --initial-cluster for a new cluster", () => {
    const e = errorOf(() => parse(['--name=x', '--initial-cluster=a=http://localhost:2380']));
    expect(e.message).to.match(/own name "x" is missing from --initial-cluster/);
    expect(e.flag).to.equal('initial-cluster');
    expect(parse(['--name=x', '--initial-cluster=a=http://10.0.0.1:2380', '--initial-cluster-state=existing']).action).to.equal('run');
  });
  it("requires the member's --initial-cluster entry to match its advertised peer URLs", () => {
    expect(errorOf(() => parse(['--initial-cluster=default=http://10.0.0.9:2380'])).message).to.match(/--initial-advertise-peer-urls/);
    // localhost and 127.0.0.1 name the same host.
    expect(parse(['--initial-cluster=default=http://127.0.0.1:2380']).action).to.equal('run');
  });
  it('enforces the heartbeat/election rules', () => {
    expect(errorOf(() => parse(['--heartbeat-interval=300'])).message).to.match(/at least 5 times --heartbeat-interval/);
    expect(errorOf(() => parse(['--heartbeat-interval=0'])).message).to.match(/--heartbeat-interval must be > 0/);
    expect(errorOf(() => parse(['--election-timeout=60000'])).message).to.match(/too long/);
    expect(parse(['--heartbeat-interval=200', '--election-timeout=1000']).config.tickMs).to.equal(200);
  });
  it('rejects bad numbers, durations and enum values, naming what is allowed', () => {
    expect(errorOf(() => parse(['--snapshot-count=-1'])).message).to.match(/--snapshot-count: expected a non-negative integer/);
    expect(errorOf(() => parse(['--max-txn-ops=1.5'])).message).to.match(/--max-txn-ops/);
    expect(errorOf(() => parse(['--grpc-keepalive-interval=5 parsecs'])).message).to.match(/duration/);
    expect(errorOf(() => parse(['--initial-cluster-state=old'])).message).to.match(/allowed values are "new", "existing"/);
    expect(errorOf(() => parse(['--auto-compaction-mode=never'])).message).to.match(/"periodic", "revision"/);
    expect(errorOf(() => parse(['--auto-compaction-mode=revision', '--auto-compaction-retention=1h'])).message).to.match(/revision count/);
    expect(parse(['--auto-compaction-retention=30m']).config.autoCompactionRetention).to.equal('30m');
    expect(errorOf(() => parse(['--enable-v2=maybe'])).message).to.match(/expected a boolean/);
    expect(errorOf(() => parse(['--log-level=verbose'])).message).to.match(/--log-level/);
  });
  it('checks TLS flag pairs and https URLs', () => {
    expect(errorOf(() => parse(['--cert-file=a.pem'])).message).to.match(/--cert-file and --key-file must be given together/);
    expect(
      errorOf(() => parse(['--listen-client-urls=https://127.0.0.1:2379', '--advertise-client-urls=https://127.0.0.1:2379'])).message,
    ).to.match(/needs TLS/);
    const c = parse(['--listen-client-urls=https://127.0.0.1:2379', '--advertise-client-urls=https://127.0.0.1:2379', '--cert-file=c', '--key-file=k', '--client-cert-auth', '--trusted-ca-file=ca']).config;
    expect(c.clientTls).to.include({ certFile: 'c', keyFile: 'k', clientCertAuth: true, trustedCaFile: 'ca' });
    expect(parse(['--peer-auto-tls', '--listen-peer-urls=https://127.0.0.1:2380', '--initial-advertise-peer-urls=https://127.0.0.1:2380']).config.peerTls.autoTls).to.equal(true);
  });
});
