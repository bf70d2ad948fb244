// Free TCP ports on 127.0.0.1 for tests. Ports come from below the kernel's ephemeral range
// (32768+ on Linux), so outgoing connections of the test itself cannot grab them between our check
// and the server's bind; each process starts at a random offset so concurrent test runs on one
// machine rarely meet, and a port is never handed out twice within one run.

import net from 'node:net';
import { HarnessError } from './errors.js';

// Under `mocha --parallel` each worker takes its own slice of the range, so two test files running at once never
// pick the same port between one's check and its bind.
const WORKER = Number(process.env.MOCHA_WORKER_ID ?? 0);
const WORKERS = 4;
const SLICE = Math.floor((32000 - 20000) / WORKERS);
const RANGE_START = 20000 + (WORKER % WORKERS) * SLICE;
const RANGE_END = RANGE_START + SLICE; // exclusive; the ephemeral range starts at 32768

const handedOut = new Set<number>();
let cursor = RANGE_START + Math.floor(Math.random() * (RANGE_END - RANGE_START));


/** True when a listener can bind host:port right now. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** `n` distinct ports that are free on 127.0.0.1 now and were not returned before in this process. */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out: number[] = [];
  for (let tried = 0; out.length < n; tried++) {
    if (tried >= RANGE_END - RANGE_START) throw new HarnessError('NO_FREE_PORT', `only ${out.length} of ${n} free ports found`);
    const port = cursor;
    cursor = cursor + 1 >= RANGE_END ? RANGE_START : cursor + 1;
    if (handedOut.has(port)) continue;
    if (await isPortFree(port, host)) {
      handedOut.add(port);
      out.push(port);
    }
  }
  return out;
}

/** One free port (see freePorts). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [port] = await freePorts(1, host);
  return port;
}
