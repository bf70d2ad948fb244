// The controller's work queue: deduplication, one worker per key, re-queue after a delay, backoff on errors.
import { expect } from 'chai';
import { WorkQueue } from '../../../operator/controller/queue.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('operator controller: work queue', () => {
  it('handles a key queued several times once, and again when it was added while being handled', async () => {
    const q = new WorkQueue();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const done = q.run(async (key) => {
      seen.push(key);
      if (seen.length === 1) await gate;
      return undefined;
    }, 2);
    q.add('a');
    q.add('a');
    await sleep(20);
    q.add('a'); // while a is handled: handled again afterwards, never concurrently
    q.add('b');
    await sleep(20);
    expect(seen).to.deep.equal(['a', 'b']);
    release();
    await sleep(20);
    expect(seen).to.deep.equal(['a', 'b', 'a']);
    q.stop();
    await done;
  });

  it('re-queues after the returned delay and backs off after failures', async () => {
    const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 40 });
    let calls = 0;
    const done = q.run(async () => {
      calls++;
      if (calls <= 3) throw new Error('boom');
      return calls < 5 ? 5 : undefined;
    }, 1, () => undefined);
    q.add('k');
    for (let i = 0; i < 250 && calls < 5; i++) await sleep(20);
    await sleep(50); // nothing more is queued after the handler said "done"
    expect(calls).to.equal(5);
    expect(q.backoff('k')).to.equal(10); // failures forgotten after a success
    q.stop();
    await done;
  });
});
