import { expect } from 'chai';
import net from 'node:net';
import { freePorts } from '../../../harness/ports.js';
import { sleep } from '../../../harness/process.js';
import { PeerProxy } from '../../../harness/chaos/proxy.js';
import { rng } from '../../../harness/chaos/rng.js';

/** Sends `msg` through the proxy and collects what the echo server sends back within `waitMs`. */
async function roundTrip(port: number, msg: string, waitMs = 300): Promise<{ got: string; closed: boolean }> {
  const s = net.connect({ port, host: '127.0.0.1' });
  let got = '';
  let closed = false;
  s.on('data', (d: Buffer) => (got += d.toString()));
  s.on('close', () => (closed = true));
  s.on('error', () => undefined);
  await new Promise<void>((r) => {
    s.once('connect', () => r());
    s.once('close', () => r());
  });
  if (!closed) s.write(msg);
  await sleep(waitMs);
  s.destroy();
  return { got, closed };
}

describe('chaos: peer proxy', () => {
  let echo: net.Server;
  let proxy: PeerProxy;
  before(async () => {
    const [target, listen] = await freePorts(2);
    echo = net.createServer((s) => {
      s.on('error', () => undefined);
      s.pipe(s);
    });
    await new Promise<void>((r) => echo.listen(target, '127.0.0.1', () => r()));
    proxy = new PeerProxy(listen, target, rng(1).next);
    await proxy.listen();
  });
  after(async () => {
    await proxy.close();
    await new Promise<void>((r) => echo.close(() => r()));
  });

  it('passes traffic through, and blackholes it on demand', async () => {
    expect((await roundTrip(proxy.listenPort, 'hello')).got).to.equal('hello');
    proxy.setMode({ kind: 'blackhole' });
    const b = await roundTrip(proxy.listenPort, 'lost');
    expect(b.got).to.equal('');
    expect(b.closed).to.equal(false); // the connection hangs, as in a partition
    proxy.setMode({ kind: 'pass' });
    expect((await roundTrip(proxy.listenPort, 'back')).got).to.equal('back');
  });

  it('delays traffic and keeps its order', async () => {
    proxy.setMode({ kind: 'delay', ms: 150 });
    const early = await roundTrip(proxy.listenPort, 'abc', 100);
    expect(early.got).to.equal('');
    const late = await roundTrip(proxy.listenPort, 'abcdef', 700);
    expect(late.got).to.equal('abcdef');
    proxy.setMode({ kind: 'pass' });
  });

  it('drops connections with the given probability', async () => {
    proxy.setMode({ kind: 'drop', p: 1 });
    const d = await roundTrip(proxy.listenPort, 'x');
    expect(d.got).to.equal('');
    expect(d.closed).to.equal(true);
    proxy.setMode({ kind: 'pass' });
  });
});
