// runCommand and waitFor of harness/process.ts, which the k8s testbed runs every command and every wait through.
import { expect } from 'chai';
import { HarnessError } from '../../../harness/errors.js';
import { runCommand, waitFor } from '../../../harness/process.js';

async function rejection(p: Promise<unknown>): Promise<HarnessError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(HarnessError);
    return e as HarnessError;
  }
  throw new Error('expected a rejection');
}

describe('harness: runCommand and waitFor', () => {
  it('runCommand gives the output, feeds stdin and adds env to the environment', async () => {
    const r = await runCommand(['sh', '-c', 'read line; echo "$line $EXTRA $HOME"; echo warn >&2'], { input: 'hello\n', env: { EXTRA: 'x' } });
    expect(r.stdout).to.equal(`hello x ${process.env.HOME}\n`);
    expect(r.stderr).to.equal('warn\n');
  });

  it('runCommand refuses a non-zero exit naming the command, its exit and its stderr', async () => {
    const e = await rejection(runCommand(['sh', '-c', 'echo out; echo broken >&2; exit 3']));
    expect(e.code).to.equal('COMMAND_FAILED');
    expect(e.message).to.equal('sh -c echo out; echo broken >&2; exit 3 exited 3: broken');
  });

  it('runCommand kills a command past its time and says so', async () => {
    const e = await rejection(runCommand(['sleep', '5'], { timeoutMs: 200 }));
    expect(e.message).to.equal('sleep 5 was killed after 200 ms');
  });

  it('waitFor resolves the first value a check gives, through its throws', async () => {
    let n = 0;
    const v = await waitFor('the third try', async () => {
      n++;
      if (n === 1) throw new Error('not yet');
      return n === 3 ? 'done' : undefined;
    }, 5000, 10);
    expect([v, n]).to.deep.equal(['done', 3]);
  });

  it('waitFor gives up after its time, naming what it waited for and the last error', async () => {
    const e = await rejection(waitFor('a thing', async () => { throw new Error('still broken'); }, 50, 10));
    expect(e.code).to.equal('WAIT_TIMEOUT');
    expect(e.message).to.equal('timed out after 50 ms waiting for a thing: Error: still broken');
  });
});
