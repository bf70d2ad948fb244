import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseServerConfig, ConfigError } from '../../../server/config/flags.js';
import { releaseFor } from '../../../server/releases.js';
import { useTempDir } from '../../../harness/temp-dir.js';

const R33 = releaseFor('3.3.27');
const R34 = releaseFor('3.4.34');
const R35 = releaseFor('3.5.21');

describe('--config-file', () => {
  const tmp = useTempDir('svc-config-');

  let n = 0;
  function file(text: string): string {
    const p = join(tmp.path, `c${n++}.yaml`);
    writeFileSync(p, text);
    return p;
  }
  function fails(fn: () => unknown): ConfigError {
    try {
      fn();
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      return e as ConfigError;
    }
    throw new Error('expected a ConfigError');
  }

  const FULL = `
name: infra1
data-dir: /var/lib/svc/infra1
wal-dir: /wal
snapshot-count: 5000
heartbeat-interval: 200
election-timeout: 2000
quota-backend-bytes: 4294967296
listen-peer-urls: http://127.0.0.1:2380
listen-client-urls: http://127.0.0.1:2379,http://127.0.0.2:2379
initial-advertise-peer-urls: http://127.0.0.1:2380
advertise-client-urls: http://127.0.0.1:2379
initial-cluster: infra1=http://127.0.0.1:2380,infra2=http://127.0.0.2:2380
initial-cluster-token: tok
initial-cluster-state: new
enable-v2: true
grpc-keepalive-min-time: 3000000000
grpc-keepalive-interval: 1h
client-transport-security:
  cert-file: /c.pem
  key-file: /k.pem
  client-cert-auth: true
  trusted-ca-file: /ca.pem
  auto-tls: false
peer-transport-security:
  auto-tls: true
log-outputs: [stderr]
logger: zap
log-level: debug
`;

  it('reads the same keys as the flags, with TLS in the transport-security sections', () => {
    const { config, warnings, action } = parseServerConfig(['--config-file', file(FULL)], {}, R35);
    expect(action).to.equal('run');
    expect(warnings).to.deep.equal([]);
    expect(config).to.include({ name: 'infra1', dataDir: '/var/lib/svc/infra1', walDir: '/wal', snapshotCount: 5000, tickMs: 200, electionMs: 2000, enableV2: true });
    expect(config.quotaBackendBytes).to.equal(4294967296);
    expect(config.listenClientUrls.map((u) => u.host)).to.deep.equal(['127.0.0.1:2379', '127.0.0.2:2379']);
    expect([...config.initialCluster.keys()]).to.deep.equal(['infra1', 'infra2']);
    expect(config.clientTls).to.include({ certFile: '/c.pem', keyFile: '/k.pem', clientCertAuth: true, trustedCaFile: '/ca.pem', autoTls: false });
    expect(config.peerTls.autoTls).to.equal(true);
    expect(config.grpcKeepaliveMinTimeMs).to.equal(3000);
    expect(config.grpcKeepaliveIntervalMs).to.equal(3600000);
    expect(config).to.include({ logger: 'zap', logLevel: 'debug' });
    expect(config.logOutputs).to.deep.equal(['stderr']);
    expect(config.configFile).to.match(/c\d+\.yaml$/);
  });

  it('ignores other flags and SVC_* variables, with a warning', () => {
    const p = file('name: fromfile\n');
    const { config, warnings } = parseServerConfig([`--config-file=${p}`, '--name=fromflag'], { SVC_DATA_DIR: '/x', SVC_CONFIG_FILE: 'other' }, R34);
    expect(config.name).to.equal('fromfile');
    expect(config.dataDir).to.equal('fromfile.svc');
    expect(warnings.join('\n')).to.match(/ignoring the command-line flags --name/).and.match(/ignoring the environment variables SVC_DATA_DIR/);
  });

  it('takes the file from SVC_CONFIG_FILE when the flag is absent', () => {
    const p = file('name: viaenv\n');
    expect(parseServerConfig([], { SVC_CONFIG_FILE: p }, R35).config.name).to.equal('viaenv');
  });

  it('does not require advertise-client-urls in a file (as the reference)', () => {
    const p = file('listen-client-urls: http://127.0.0.1:2379\n');
    expect(parseServerConfig(['--config-file', p], {}, R35).config.advertiseClientUrls.map((u) => u.host)).to.deep.equal(['localhost:2379']);
  });

  it('an empty file means all defaults', () => {
    expect(parseServerConfig(['--config-file', file('')], {}, R35).config.name).to.equal('default');
    expect(parseServerConfig(['--config-file', file('# nothing here\n\n')], {}, R35).config.name).to.equal('default');
  });

  it('rejects an unknown key, naming it (with a hint when it is close)', () => {
    expect(fails(() => parseServerConfig(['--config-file', file('name: a\nfoo: 1\n')], {}, R35)).message).to.match(/unknown key "foo"/);
    expect(fails(() => parseServerConfig(['--config-file', file('dataDir: /x\n')], {}, R35)).message).to.match(/unknown key "dataDir" \(did you mean "data-dir"\?\)/);
    expect(fails(() => parseServerConfig(['--config-file', file('cert-file: /c\n')], {}, R35)).message).to.match(/client-transport-security/);
    expect(fails(() => parseServerConfig(['--config-file', file('client-transport-security:\n  pem: x\n')], {}, R35)).message).to.match(
      /unknown key "client-transport-security.pem"/,
    );
    expect(fails(() => parseServerConfig(['--config-file', file('logger: zap\n')], {}, R33)).message).to.match(/unknown key "logger" \(not available in release 3\.3/);
  });

  it('reports malformed YAML with its line', () => {
    const e = fails(() => parseServerConfig(['--config-file', file('name: a\ndata-dir: [unclosed\nwal-dir: b\n')], {}, R35));
    expect(e.message).to.match(/malformed YAML at line \d+, column \d+/);
    const dup = fails(() => parseServerConfig(['--config-file', file('name: a\nsnapshot-count: 1\nname: b\n')], {}, R35));
    expect(dup.message).to.match(/malformed YAML at line 3, column 1: duplicated mapping key/);
  });

  it('reports a missing file and a non-mapping document', () => {
    expect(fails(() => parseServerConfig(['--config-file', join(tmp.path, 'nope.yaml')], {}, R35)).message).to.match(/cannot read config file/);
    expect(fails(() => parseServerConfig(['--config-file', file('- a\n- b\n')], {}, R35)).message).to.match(/mapping/);
  });

  it('names the key in value errors', () => {
    expect(fails(() => parseServerConfig(['--config-file', file('heartbeat-interval: soon\n')], {}, R35)).message).to.match(/config file key "heartbeat-interval"/);
    expect(fails(() => parseServerConfig(['--config-file', file('enable-v2: [1]\n')], {}, R35)).message).to.match(/config file key "enable-v2"/);
  });

  it('log-outputs is a list (3.4+); log-output is the old string field of 3.3', () => {
    expect(parseServerConfig(['--config-file', file('logger: zap\nlog-outputs: [stderr, /tmp/a.log]\n')], {}, R34).config.logOutputs).to.deep.equal(['stderr', '/tmp/a.log']);
    expect(fails(() => parseServerConfig(['--config-file', file('log-outputs: stderr\n')], {}, R35)).message).to.match(/"log-outputs" must be a list, e\.g\. "log-outputs: \[default\]"/);
    expect(parseServerConfig(['--config-file', file('log-output: stdout\n')], {}, R33).config.logOutputs).to.deep.equal(['stdout']);
    expect(fails(() => parseServerConfig(['--config-file', file('log-outputs: [stdout]\n')], {}, R33)).message).to.match(/unknown key "log-outputs"/);
    expect(fails(() => parseServerConfig(['--config-file', file('log-output: [stdout]\n')], {}, R33)).message).to.match(/must be a string in release 3\.3/);
    const r34 = parseServerConfig(['--config-file', file('log-output: [stdout]\n')], {}, R34);
    expect(r34.config.logOutputs).to.deep.equal(['stdout']);
    expect(r34.warnings).to.include(R34.deprecatedFlags['log-output']);
  });

  it('deprecated keys warn like the flags, and ca-file in a section forces client-cert-auth where the release has it', () => {
    const r = parseServerConfig(['--config-file', file('logger: capnslog\ndebug: true\nclient-transport-security:\n  ca-file: /ca.pem\n')], {}, R35);
    expect(r.warnings).to.include(R35.deprecatedFlags['logger=capnslog']);
    expect(r.warnings).to.include(R35.deprecatedFlags.debug);
    expect(r.warnings).to.include(R35.deprecatedFlags['ca-file']);
    expect(r.config.clientTls).to.include({ clientCertAuth: true, trustedCaFile: '/ca.pem' });
    expect(r.config.logLevel).to.equal('debug');
  });

  it('several log outputs in a file need zap', () => {
    expect(fails(() => parseServerConfig(['--config-file', file('log-outputs: [stderr, /tmp/b.log]\n')], {}, R34)).message).to.match(/need --logger=zap/);
  });
});
