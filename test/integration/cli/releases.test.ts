import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { releaseFor, currentRelease, compareMinor, UnknownReleaseError } from '../../../server/releases.js';

const run = promisify(execFile);

describe('release table', () => {
  it('knows the three supported release lines and keeps the patch given', () => {
    expect(releaseFor('3.3.27').minor).to.equal('3.3');
    expect(releaseFor('3.4.34').enableV2Default).to.equal(false);
    expect(releaseFor('3.3.27').enableV2Default).to.equal(true);
    expect(releaseFor('3.5.0').version).to.equal('3.5.0');
    expect(releaseFor('3.5.21').loggerDefault).to.equal('zap');
  });
  it('refuses unknown or malformed versions', () => {
    for (const v of ['3.8.0', '3.2.1', '3.4', 'latest', 'v3.4.1', '']) {
      expect(() => releaseFor(v)).to.throw(UnknownReleaseError);
    }
  });
  it('defaults to the newest release when SVC_VERSION is unset', () => {
    expect(currentRelease({}).minor).to.equal('3.5');
  });
  it('compares minor versions numerically', () => {
    expect(compareMinor('3.10', '3.4')).to.be.greaterThan(0);
    expect(compareMinor('3.4.1', '3.4.9')).to.equal(0);
  });
});

describe('bin/svc --version', () => {
  for (const v of ['3.3.27', '3.4.34', '3.5.21']) {
    it(`prints "svc Version: ${v}" under SVC_VERSION=${v}`, async () => {
      const { stdout } = await run('bin/svc', ['--version'], { env: { ...process.env, SVC_VERSION: v } });
      expect(stdout.split('\n')[0]).to.equal(`svc Version: ${v}`);
    });
  }
  it('exits 2 with a clear message for an unknown SVC_VERSION', async () => {
    const err = await run('bin/svc', ['--version'], { env: { ...process.env, SVC_VERSION: '4.0.0' } }).then(() => null, (e) => e);
    expect(err).to.not.equal(null);
    expect(err.code).to.equal(2);
    expect(err.stderr).to.match(/unknown release "4\.0\.0"/);
  });
});
