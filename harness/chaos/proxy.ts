// A TCP proxy in front of one member's peer port. Members advertise the proxy's address as their peer
// URL (--initial-advertise-peer-urls and --initial-cluster name it) while listening on the real port
// (--listen-peer-urls), so every byte other members send to this member passes through here and can
// be blackholed, delayed or dropped. It is the member's inbound link: blackholing it cuts the member
// off from heartbeats, votes and appends; its own outbound messages still reach the others (as an
// asymmetric partition would).

import net from 'node:net';
import { HarnessError } from '../errors.js';

/** What the proxy does with traffic. */
export type LinkMode =
  | { kind: 'pass' }
  /** Accept connections but forward nothing (and hold what arrives): a partition where TCP hangs. */
  | { kind: 'blackhole' }
  /** Forward every chunk `ms` late (order kept). */
  | { kind: 'delay'; ms: number }
  /** Reset each connection with probability `p` per chunk, and refuse new ones with the same probability. */
  | { kind: 'drop'; p: number };


/** A controllable TCP proxy 127.0.0.1:listenPort -> 127.0.0.1:targetPort. */
export class PeerProxy {
  private mode: LinkMode = { kind: 'pass' };
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private rand: () => number;
  /** Bytes forwarded, for the run summary. */
  bytes = 0;

  constructor(
    readonly listenPort: number,
    readonly targetPort: number,
    rand: () => number = Math.random,
  ) {
    this.rand = rand;
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Starts listening. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', (e) => reject(new HarnessError('PROXY_LISTEN', `proxy :${this.listenPort}: ${e.message}`)));
      this.server.listen({ port: this.listenPort, host: '127.0.0.1' }, () => resolve());
    });
  }

  /** Changes the mode; switching to blackhole or drop also cuts the connections that exist now. */
  setMode(mode: LinkMode): void {
    this.mode = mode;
    if (mode.kind !== 'pass' && mode.kind !== 'delay') for (const s of this.sockets) s.destroy();
  }

  /** The current mode. */
  currentMode(): LinkMode {
    return this.mode;
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
  }

  private accept(client: net.Socket): void {
    this.track(client);
    if (this.mode.kind === 'drop' && this.rand() < this.mode.p) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ port: this.targetPort, host: '127.0.0.1' });
    this.track(upstream);
    const pair = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', pair);
    upstream.on('close', pair);
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  private pipe(from: net.Socket, to: net.Socket): void {
    from.on('data', (chunk: Buffer) => {
      const m = this.mode;
      switch (m.kind) {
        case 'pass':
          this.bytes += chunk.length;
          to.write(chunk);
          return;
        case 'blackhole':
          return; // swallowed: the sender sees a live connection that never answers
        case 'delay':
          // equal delays fire in arrival order, so the stream stays intact
          setTimeout(() => {
            if (!to.destroyed) {
              this.bytes += chunk.length;
              to.write(chunk);
            }
          }, m.ms);
          return;
        case 'drop':
          if (this.rand() < m.p) {
            from.destroy();
            to.destroy();
            return;
          }
          this.bytes += chunk.length;
          to.write(chunk);
      }
    });
  }
}
