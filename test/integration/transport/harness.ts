// Test harness: a member's transport plus its peer server on 127.0.0.1, with everything it reports recorded.

import type { LogFields, Logger } from '../../../server/log/logger.js';
import { EntryType, MessageType } from '../../../server/raft/types.js';
import type { Message, NodeId } from '../../../server/raft/types.js';
import { startPeerServer } from '../../../server/transport/peer-server.js';
import type { PeerServer } from '../../../server/transport/peer-server.js';
import { Transport } from '../../../server/transport/transport.js';
import type { TransportOptions } from '../../../server/transport/transport.js';

export interface LogRecord {
  level: string;
  msg: string;
  fields: LogFields;
}

/** A Logger that keeps every record (set TRANSPORT_TEST_LOG=1 to also print them). */
export function recordingLogger(records: LogRecord[], base: LogFields = {}): Logger {
  const rec =
    (level: string) =>
    (msg: string, fields: LogFields = {}): void => {
      const r = { level, msg, fields: { ...base, ...fields } };
      records.push(r);
      if (process.env.TRANSPORT_TEST_LOG) console.log(JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString(16) : v)));
    };
  return {
    debug: rec('debug'),
    info: rec('info'),
    warn: rec('warn'),
    error: rec('error'),
    child: (fields) => recordingLogger(records, { ...base, ...fields }),
  };
}

export class Member {
  readonly received: Message[] = [];
  readonly unreachable: NodeId[] = [];
  readonly snapStatus: Array<{ id: NodeId; ok: boolean }> = [];
  readonly removedBy: NodeId[] = [];
  readonly logs: LogRecord[] = [];
  transport!: Transport;
  server!: PeerServer;
  port = 0;

  constructor(
    readonly id: NodeId,
    readonly clusterId = 0xc1a5n,
    private readonly extra: Partial<TransportOptions> = {},
  ) {}

  get url(): string {
    return `${this.extra.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  /** Starts (or restarts, on the same port) the transport and the peer server. */
  async start(serverTls?: Parameters<typeof startPeerServer>[0]['tls']): Promise<this> {
    this.transport = new Transport({
      localId: this.id,
      clusterId: this.clusterId,
      logger: recordingLogger(this.logs, { member: this.id.toString(16) }),
      onMessage: (m) => this.received.push(m),
      onUnreachable: (id) => this.unreachable.push(id),
      onSnapshotStatus: (id, ok) => this.snapStatus.push({ id, ok }),
      onRemoved: (by) => this.removedBy.push(by),
      ...this.extra,
    });
    this.server = await startPeerServer({
      urls: [`${this.extra.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`],
      transport: this.transport,
      logger: recordingLogger(this.logs),
      tls: serverTls,
      routes: {
        version: () => ({ etcdserver: '3.5.21', etcdcluster: '3.5.0' }),
        members: () => [{ id: this.id.toString(16), peerURLs: [this.url] }],
      },
    });
    this.port = this.server.addresses[0].port;
    return this;
  }

  async stop(): Promise<void> {
    await this.transport.stop();
    await this.server.close();
  }

  /** Log records whose message is `msg`. */
  logged(msg: string): LogRecord[] {
    return this.logs.filter((r) => r.msg === msg);
  }
}

/** Connects every member to every other. */
export function mesh(members: Member[]): void {
  for (const a of members) for (const b of members) if (a !== b) a.transport.addPeer(b.id, [b.url]);
}

/** A MsgApp from `from` to `to` whose index carries a sequence number. */
export function app(from: NodeId, to: NodeId, seq: number, payload = 16): Message {
  return {
    type: MessageType.App,
    to,
    from,
    term: 1,
    logTerm: 1,
    index: seq,
    entries: [{ term: 1, index: seq + 1, type: EntryType.Normal, data: Buffer.alloc(payload, seq & 0xff) }],
    commit: seq,
    reject: false,
    rejectHint: 0,
    context: new Uint8Array(0),
  };
}

/** Polls `cond` every 10 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
