// Every command line program ends quietly when the reader of its output goes away (`svc-operator local backups |
// head -2`): exit status 141 (server/cli/closed-pipe.ts), nothing on stderr (no `Error: write EPIPE`, no stack).
// The launchers in bin/ run as a user runs them; `local backups` on a real cluster is in local-s3-backup.test.ts.
import { expect } from 'chai';
import { closedPipeCli } from './operator-cli.js';

describe('command line programs on a closed output pipe (bin/ launchers, real processes)', function () {
  this.timeout(60_000);
  const cases: Array<[Parameters<typeof closedPipeCli>[0], string[]]> = [
    ['svc', ['--help']],
    ['svcctl', ['--help']],
    ['svc-operator', ['crd']],
    ['kubectl-svc', ['--help']],
  ];
  for (const [program, args] of cases) {
    it(`${program} ${args.join(' ')} ends with status 141 and says nothing`, async () => {
      const r = await closedPipeCli(program, args);
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(141);
    });
  }
});
