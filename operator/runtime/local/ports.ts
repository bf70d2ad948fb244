// Free TCP ports on 127.0.0.1 for local members. Ports come from below the kernel's ephemeral range so
// outgoing connections cannot take them between the check and the member's bind.
import net from 'node:net';

const START = 20000;
const END = 32000;

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** `n` distinct ports free on 127.0.0.1 now, none of `avoid`. */
export async function freePorts(n: number, avoid: readonly number[] = []): Promise<number[]> {
  const out: number[] = [];
  let p = START + Math.floor(Math.random() * (END - START));
  for (let tried = 0; out.length < n; tried++) {
    if (tried > END - START) throw new Error(`only ${out.length} of ${n} free ports found on 127.0.0.1`);
    p = p + 1 >= END ? START : p + 1;
    if (avoid.includes(p) || out.includes(p)) continue;
    if (await isFree(p)) out.push(p);
  }
  return out;
}
