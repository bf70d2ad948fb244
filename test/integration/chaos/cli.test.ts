// `npm run chaos` refuses what it does not understand before it starts a cluster: a typo in a flag must not
// silently run the default (long) suite.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const entry = join(import.meta.dirname, '..', '..', '..', 'bench', 'chaos.js');
const run = (...args: string[]) => spawnSync(process.execPath, [entry, ...args], { encoding: 'utf8', timeout: 30_000 });

describe('chaos: command line', () => {
  it('prints its usage with --help and exits 0', () => {
    const r = run('--help');
    expect(r.status).to.equal(0);
    expect(r.stdout).to.contain('usage:').and.contain('nospace').and.contain('kill-leader').and.contain('replace');
  });

  for (const [args, message] of [
    [['--bogus'], "Unknown option '--bogus'"],
    [['--runs', 'x'], '--runs must be a whole number >= 1, got "x"'],
    [['--scenario', 'flood'], 'unknown scenario flood'],
    [['--kinds', 'kill-leader,meteor'], 'unknown fault kind meteor'],
  ] as const) {
    it(`refuses ${args.join(' ')} with exit status 2`, () => {
      const r = run(...args);
      expect(r.status).to.equal(2);
      expect(r.stderr).to.contain(message).and.contain('usage:');
    });
  }
});
