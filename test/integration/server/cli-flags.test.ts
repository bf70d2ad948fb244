// The svc binary's answers to bad usage: an unknown flag or an unknown SVC_VERSION exits with status 2 and a
// clear message, before anything is created.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runSvc } from '../../../harness/svc-cluster.js';
import { useTempDir } from '../../../harness/temp-dir.js';

describe('svc command line: bad usage', function () {
  this.timeout(60000);
  const tmp = useTempDir('svc-flags-');

  it('an unknown flag exits 2 naming the flag, and creates no data dir', async () => {
    const dataDir = join(tmp.path, 'unknown-flag.data');
    const r = await runSvc(['--name=x', `--data-dir=${dataDir}`, '--no-such-flag=1'], { version: '3.4.34' });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include('no-such-flag');
    expect(existsSync(dataDir)).to.equal(false);
  });

  it('a flag of a later release is unknown to an earlier one', async () => {
    // --log-outputs arrived in 3.4; 3.3 knows only --log-output.
    const r = await runSvc(['--name=x', `--data-dir=${join(tmp.path, 'x.data')}`, '--log-outputs=stderr'], { version: '3.3.27' });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include('log-outputs');
  });

  it('an unknown SVC_VERSION exits 2 naming the version', async () => {
    const dataDir = join(tmp.path, 'bad-version.data');
    const r = await runSvc(['--name=x', `--data-dir=${dataDir}`], { version: '3.9.99' });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include('3.9.99');
    expect(existsSync(dataDir)).to.equal(false);
  });

  it('--version prints the release', async () => {
    const r = await runSvc(['--version'], { version: '3.5.21' });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^svc Version: 3\.5\.21$/m);
  });
});
