import { expect } from 'chai';
import { parseServerConfig, ConfigError } from '../../../server/config/flags.js';
import { releaseFor, type Release } from '../../../server/releases.js';

const R33 = releaseFor('3.3.27');
const R34 = releaseFor('3.4.34');
const R35 = releaseFor('3.5.21');

function run(argv: string[], release: Release) {
  return parseServerConfig(argv, {}, release);
}
function fails(argv: string[], release: Release): string {
  try {
    run(argv, release);
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`expected ${argv.join(' ')} to fail on ${release.version}`);
}

describe('release differences in flags (from the release table)', () => {
  it('3.3 does not know --logger, --log-outputs or --log-level', () => {
    expect(fails(['--logger=zap'], R33)).to.match(/flag provided but not defined: -logger \(not available in release 3\.3\.27\)/);
    expect(fails(['--log-outputs=stderr'], R33)).to.match(/flag provided but not defined: -log-outputs/);
    expect(fails(['--log-level=debug'], R33)).to.match(/flag provided but not defined: -log-level/);
  });
  it('3.3 takes --log-output as its single output and --debug without warnings', () => {
    const r = run(['--log-output=stdout', '--debug', '--ca-file=ca.pem'], R33);
    expect(r.config.logOutputs).to.deep.equal(['stdout']);
    expect(r.config.logLevel).to.equal('debug');
    expect(r.config.logger).to.equal('capnslog');
    expect(r.warnings).to.deep.equal([]);
  });
  it('3.4 warns on --debug, --ca-file, --peer-ca-file and --log-output, and still honours them', () => {
    const r = run(['--debug', '--ca-file=ca.pem', '--peer-ca-file=pca.pem', '--log-output=stdout'], R34);
    expect(r.warnings).to.include(R34.deprecatedFlags.debug);
    expect(r.warnings).to.include(R34.deprecatedFlags['ca-file']);
    expect(r.warnings).to.include(R34.deprecatedFlags['peer-ca-file']);
    expect(r.warnings).to.include(R34.deprecatedFlags['log-output']);
    expect(r.config.logLevel).to.equal('debug');
    expect(r.config.logOutputs).to.deep.equal(['stdout']);
  });
  it('--ca-file / --peer-ca-file force client certificate auth on and set the trusted CA', () => {
    for (const rel of [R33, R34, R35]) {
      const c = run(['--ca-file=ca.pem', '--client-cert-auth=false', '--peer-ca-file=pca.pem'], rel).config;
      expect(c.clientTls).to.include({ clientCertAuth: true, trustedCaFile: 'ca.pem' });
      expect(c.peerTls).to.include({ clientCertAuth: true, trustedCaFile: 'pca.pem' });
    }
    const both = run(['--ca-file=old.pem', '--trusted-ca-file=new.pem'], R34);
    expect(both.config.clientTls.trustedCaFile).to.equal('new.pem');
    expect(both.warnings.join('\n')).to.match(/both --ca-file and --trusted-ca-file/);
  });
  it('3.5 warns on --log-package-levels and --logger=capnslog; zap is the default', () => {
    const r = run(['--log-package-levels=etcdserver=DEBUG', '--logger=capnslog'], R35);
    expect(r.warnings).to.include(R35.deprecatedFlags['log-package-levels']);
    expect(r.warnings).to.include(R35.deprecatedFlags['logger=capnslog']);
    expect(r.config.logger).to.equal('capnslog');
    expect(r.config.logPackageLevels.get('etcdserver')).to.equal('debug');
    expect(run([], R35).config.logger).to.equal('zap');
    expect(run(['--logger=zap'], R35).warnings).to.deep.equal([]);
    expect(run(['--logger=capnslog'], R34).warnings).to.deep.equal([]);
  });
  it('several --log-outputs only with zap', () => {
    expect(fails(['--log-outputs=stderr,/tmp/x.log'], R34)).to.match(/--logger=capnslog supports only one log output.*need --logger=zap/);
    expect(run(['--logger=zap', '--log-outputs=stderr,/tmp/x.log'], R34).config.logOutputs).to.deep.equal(['stderr', '/tmp/x.log']);
    expect(run(['--log-outputs=stderr,/tmp/x.log'], R35).config.logOutputs).to.deep.equal(['stderr', '/tmp/x.log']);
    expect(fails(['--log-outputs=default,/tmp/x.log'], R35)).to.match(/"default" cannot be combined/);
  });
  it('--log-output and --log-outputs together must agree', () => {
    expect(fails(['--log-output=stdout', '--log-outputs=stderr'], R35)).to.match(/only set --log-outputs/);
    expect(run(['--log-output=stderr', '--log-outputs=stderr'], R35).config.logOutputs).to.deep.equal(['stderr']);
  });
  it('--debug sets the debug level; --log-level=panic maps to fatal', () => {
    expect(run(['--debug'], R35).config.logLevel).to.equal('debug');
    expect(run(['--log-level=warn'], R35).config.logLevel).to.equal('warn');
    expect(run(['--log-level=panic'], R34).config.logLevel).to.equal('fatal');
  });
  it('--log-package-levels entries must be <package>=<LEVEL>', () => {
    expect(fails(['--log-package-levels=etcdserver'], R34)).to.match(/<package>=<LEVEL>/);
    expect(fails(['--log-package-levels=etcdserver=LOUD'], R34)).to.match(/unknown log level "LOUD"/);
    const r = run(['--logger=zap', '--log-package-levels=raft=WARNING'], R34);
    expect(r.warnings.join('\n')).to.match(/only applies to --logger=capnslog/);
  });
});

describe('patch releases in the release table', () => {
  it('a behaviour a patch changed holds from that patch on, and the version is reported as given', () => {
    expect(releaseFor('3.5.21').addMemberConnected).to.equal('all-voters');
    expect(releaseFor('3.5.30').addMemberConnected).to.equal('all-voters');
    expect(releaseFor('3.5.31').addMemberConnected).to.equal('quorum-with-new');
    expect(releaseFor('3.5.35')).to.include({ addMemberConnected: 'quorum-with-new', version: '3.5.35', minor: '3.5' });
    expect(releaseFor('3.4.34').addMemberConnected).to.equal('all-voters');
  });
});
