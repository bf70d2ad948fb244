// The peer transport: carries raft messages between members. Outgoing traffic per remote member lives
// in peer.ts; this file owns the set of peers, the receiving side (/raft/... requests), fault injection,
// and the callbacks to the server.
//
// Wire design (simpler than the reference's two stream types plus pipeline):
// - Each member dials one long-lived `POST /raft/stream/<localIdHex>` to every peer and writes its
//   messages to it as a chunked body of length-prefixed frames. So between two members there are two
//   TCP connections, one per direction, each with a single writer: per-peer order is the write order.
// - The receiver answers 200 at once and then trickles a byte every keepalive interval; both sides
//   treat silence longer than the read timeout as a dead connection (a paused or vanished peer).
// - MsgSnap, which may be large, goes as its own `POST /raft/snapshot`; 204 means delivered.
// - Every request carries the cluster id, the sender id and the intended receiver id in headers; the
//   receiver refuses another cluster (412 "cluster ID mismatch") and removed members (410).

import type * as http from 'node:http';

import type { Logger } from '../log/logger.js';
import type { Message, NodeId } from '../raft/types.js';
import { MessageType } from '../raft/types.js';
import { CodecError, FrameDecoder, decodeMessage } from './codec.js';
import { DEFAULT_TIMINGS, Peer } from './peer.js';
import type { PeerTlsOptions, StreamTimings } from './peer.js';
import { HEADER_CLUSTER_ID, HEADER_FROM, HEADER_TO, PATH_SNAPSHOT, PATH_STREAM_PREFIX, STREAM_TYPE, idHex, parseIdHex } from './wire.js';

export type { PeerTlsOptions, StreamTimings } from './peer.js';

export interface TransportOptions {
  localId: NodeId;
  clusterId: bigint;
  logger: Logger;
  /** Raft messages received from peers (the server steps them into raft). */
  onMessage(m: Message): void;
  /** A send to this peer failed or was dropped (the server calls raft.reportUnreachable). */
  onUnreachable?(id: NodeId): void;
  /** A MsgSnap send finished (the server calls raft.reportSnapshot). */
  onSnapshotStatus?(id: NodeId, ok: boolean): void;
  /** A peer answered that this member was removed from the cluster (the server should stop). */
  onRemoved?(by: NodeId): void;
  /** Client-side TLS for https peer URLs. */
  tls?: PeerTlsOptions;
  /** Bounds of each peer's send queue (defaults 4096 messages, 64 MiB). */
  maxQueueMessages?: number;
  maxQueueBytes?: number;
  /** Stream timing overrides (tests). */
  timings?: Partial<StreamTimings>;
}

/**
 * Fault injection for chaos tests, applied to OUTGOING traffic to one peer (set it on both ends for a
 * symmetric partition). Messages are affected as `send()` accepts them:
 * - `blackhole`: every message vanishes silently (a MsgSnap is reported failed, as a timed-out send
 *   would be eventually, so raft does not wait forever);
 * - `drop`: each message vanishes with this probability (0..1);
 * - `delayMs`: each message is handed to the stream this much later (order kept for a fixed delay).
 * `setPeerFault(id, undefined)` clears it.
 */
export interface PeerFault {
  drop?: number;
  delayMs?: number;
  blackhole?: boolean;
}

/** An inbound stream from a peer, so it can be replaced by a newer one or closed on stop. */
interface InboundStream {
  from: NodeId;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  timer: NodeJS.Timeout;
  /** Closed on purpose (replaced by a newer stream, peer removed): not worth a warning. */
  closing: boolean;
}

/** Carries raft messages to and from the other members of one cluster. */
export class Transport {
  private readonly peers = new Map<NodeId, Peer>();
  private readonly removed = new Set<NodeId>();
  private readonly faults = new Map<NodeId, PeerFault>();
  private readonly inbound = new Map<NodeId, InboundStream>();
  private readonly timings: StreamTimings;
  private readonly logger: Logger;
  private stopped = false;

  constructor(private readonly opts: TransportOptions) {
    const t = { ...DEFAULT_TIMINGS, ...opts.timings };
    // unless told, a stream sends a keepalive at least three times per read timeout (the reference's heartbeat)
    this.timings = opts.timings?.keepaliveMs !== undefined ? t : { ...t, keepaliveMs: Math.min(t.keepaliveMs, Math.floor(t.readTimeoutMs / 3)) };
    this.logger = opts.logger;
  }

  private get localHex(): string {
    return idHex(this.opts.localId);
  }

  /** Starts talking to a remote member (no-op if already known). */
  addPeer(id: NodeId, urls: string[]): void {
    if (this.stopped || this.peers.has(id) || id === this.opts.localId) return;
    this.removed.delete(id);
    const peer = new Peer(id, urls, {
      localId: this.opts.localId,
      clusterId: this.opts.clusterId,
      logger: this.logger,
      tls: this.opts.tls,
      timings: this.timings,
      maxQueueMessages: this.opts.maxQueueMessages ?? 4096,
      maxQueueBytes: this.opts.maxQueueBytes ?? 64 * 1024 * 1024,
      reportUnreachable: (pid) => this.reportUnreachable(pid),
      reportSnapshot: (pid, ok) => {
        if (!this.stopped) this.opts.onSnapshotStatus?.(pid, ok);
      },
      reportRemoved: (by) => {
        if (!this.stopped) this.opts.onRemoved?.(by);
      },
    });
    this.peers.set(id, peer);
    this.logger.info('added remote peer', {
      'local-member-id': this.localHex,
      'remote-peer-id': idHex(id),
      'remote-peer-urls': urls,
    });
  }

  /** Changes a peer's URLs (after a member update). */
  updatePeer(id: NodeId, urls: string[]): void {
    const peer = this.peers.get(id);
    if (!peer) return;
    peer.update(urls);
    this.logger.info('updated remote peer', {
      'local-member-id': this.localHex,
      'updated-remote-peer-id': idHex(id),
      'updated-remote-peer-urls': urls,
    });
  }

  /** Stops talking to a member and refuses its streams from now on (410 Gone). */
  removePeer(id: NodeId): void {
    const peer = this.peers.get(id);
    this.removed.add(id);
    this.faults.delete(id);
    this.closeInbound(id);
    if (!peer) return;
    peer.stop();
    this.peers.delete(id);
    this.logger.info('removed remote peer', {
      'local-member-id': this.localHex,
      'removed-remote-peer-id': idHex(id),
    });
  }

  /** Sets or clears (undefined) the fault injected into outgoing traffic to `id`. See PeerFault. */
  setPeerFault(id: NodeId, fault: PeerFault | undefined): void {
    if (!fault || (!fault.blackhole && !fault.drop && !fault.delayMs)) this.faults.delete(id);
    else this.faults.set(id, { ...fault });
  }

  /**
   * Queues messages for their peers. Never blocks and never calls back synchronously: drops (peer down,
   * queue full, unknown peer) are reported through onUnreachable after this returns.
   */
  send(msgs: Message[]): void {
    if (this.stopped) return;
    let unreachable: Set<NodeId> | undefined;
    for (const m of msgs) {
      const peer = this.peers.get(m.to);
      if (!peer) {
        if (m.to !== this.opts.localId) {
          this.logger.debug('ignored message send request; unknown remote peer target', {
            type: m.type,
            'unknown-target-peer-id': idHex(m.to),
          });
        }
        continue;
      }
      const fault = this.faults.get(m.to);
      if (fault && this.applyFault(peer, m, fault)) continue;
      if (!peer.enqueue(m)) (unreachable ??= new Set()).add(m.to);
    }
    if (unreachable) {
      const ids = unreachable;
      queueMicrotask(() => {
        for (const id of ids) this.reportUnreachable(id);
      });
    }
  }

  /**
   * Writes every peer's queued messages to its socket now. The server calls this before a synchronous disk
   * write, so followers receive appends while the leader's own fsync runs instead of after it.
   */
  flush(): void {
    if (this.stopped) return;
    for (const peer of this.peers.values()) peer.flushNow();
  }

  /** True when the fault consumed the message (dropped or deferred). */
  private applyFault(peer: Peer, m: Message, fault: PeerFault): boolean {
    if (fault.blackhole || (fault.drop && Math.random() < fault.drop)) {
      if (m.type === MessageType.Snap) {
        setImmediate(() => {
          if (!this.stopped) this.opts.onSnapshotStatus?.(m.to, false);
        });
      }
      return true;
    }
    if (fault.delayMs) {
      setTimeout(() => {
        if (!this.stopped && this.peers.get(m.to) === peer && !peer.enqueue(m)) this.reportUnreachable(m.to);
      }, fault.delayMs);
      return true;
    }
    return false;
  }

  private reportUnreachable(id: NodeId): void {
    if (!this.stopped) this.opts.onUnreachable?.(id);
  }

  /**
   * Peers connected both ways now: our stream to them is up and theirs to us is attached. (A reference member's
   * peer is active once its stream dial succeeds, and the remote writes to it over that stream; svc's streams carry
   * one direction each, so a peer that can already reach us is the one with its inbound stream here.)
   */
  activePeers(): number {
    let n = 0;
    for (const [id, p] of this.peers) if (p.activeSince !== undefined && this.inbound.has(id)) n++;
    return n;
  }

  /** When the stream to `id` became active (ms since epoch); undefined while inactive or unknown. */
  activeSince(id: NodeId): number | undefined {
    return this.peers.get(id)?.activeSince;
  }

  /** Serves `/raft/...` requests; returns false (and leaves the response alone) for any other path. */
  handleRequest(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/raft' && !path.startsWith('/raft/')) return false;
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'text/plain' }).end('Method Not Allowed\n');
      return true;
    }
    if (this.stopped) {
      res.writeHead(503, { 'Content-Type': 'text/plain' }).end('transport stopped\n');
      return true;
    }
    if (path.startsWith(PATH_STREAM_PREFIX)) this.serveStream(req, res, path.slice(PATH_STREAM_PREFIX.length));
    else if (path === PATH_SNAPSHOT) this.serveSnapshot(req, res);
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
    return true;
  }

  /** Checks cluster, sender and receiver headers; answers the error itself and returns undefined on mismatch. */
  private admit(req: http.IncomingMessage, res: http.ServerResponse): NodeId | undefined {
    const header = (name: string): string | undefined => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const reject = (status: number, text: string): undefined => {
      res.writeHead(status, { 'Content-Type': 'text/plain', [HEADER_CLUSTER_ID]: idHex(this.opts.clusterId) });
      res.end(text + '\n');
      req.resume();
      return undefined;
    };
    const remoteCluster = parseIdHex(header(HEADER_CLUSTER_ID));
    const from = parseIdHex(header(HEADER_FROM));
    if (remoteCluster !== this.opts.clusterId) {
      this.logger.warn('request cluster ID mismatch', {
        'local-member-id': this.localHex,
        'local-member-cluster-id': idHex(this.opts.clusterId),
        'remote-peer-id': header(HEADER_FROM) ?? '',
        'remote-peer-cluster-id': header(HEADER_CLUSTER_ID) ?? '',
      });
      return reject(412, 'cluster ID mismatch');
    }
    if (from === undefined) return reject(400, 'missing or malformed sender id');
    const to = parseIdHex(header(HEADER_TO));
    if (to !== undefined && to !== this.opts.localId) {
      this.logger.warn('ignored streaming request; ID mismatch', {
        'local-member-id': this.localHex,
        'remote-peer-id-stream-handler': header(HEADER_TO) ?? '',
        'remote-peer-id-from': idHex(from),
      });
      return reject(412, 'to field mismatch');
    }
    if (this.removed.has(from)) {
      this.logger.warn('rejected stream from remote peer because it was removed', {
        'local-member-id': this.localHex,
        'remote-peer-id-from': idHex(from),
      });
      return reject(410, 'removed member');
    }
    return from;
  }

  private serveStream(req: http.IncomingMessage, res: http.ServerResponse, fromHex: string): void {
    const from = this.admit(req, res);
    if (from === undefined) return;
    if (parseIdHex(fromHex) !== from) {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('sender id in path and header differ\n');
      req.resume();
      return;
    }
    // A newer stream from the same member replaces the old one (whose connection may be half-open).
    this.closeInbound(from);
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Cache-Control': 'no-store' });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    const fields = {
      'stream-reader-type': STREAM_TYPE,
      'local-member-id': this.localHex,
      'remote-peer-id': idHex(from),
    };
    this.logger.info('established TCP streaming connection with remote peer', fields);

    let lastRecv = Date.now();
    const timer = setInterval(() => {
      if (Date.now() - lastRecv > this.timings.readTimeoutMs) {
        req.destroy(new Error(`nothing received from remote peer for ${Date.now() - lastRecv} ms`));
        return;
      }
      res.write(ALIVE_BYTE);
    }, this.timings.keepaliveMs);
    const stream: InboundStream = { from, req, res, timer, closing: false };
    this.inbound.set(from, stream);

    const decoder = new FrameDecoder();
    const onFrame = (payload: Buffer): void => {
      const m = decodeMessage(payload);
      try {
        this.opts.onMessage(m);
      } catch (err) {
        this.logger.error('failed to process raft message', { 'remote-peer-id': idHex(from), error: String(err) });
      }
    };
    req.on('data', (chunk: Buffer) => {
      lastRecv = Date.now();
      if (this.stopped) return;
      try {
        decoder.push(chunk, onFrame);
      } catch (err) {
        const msg = err instanceof CodecError ? err.message : String(err);
        this.logger.error('failed to decode raft message', { ...fields, error: msg });
        req.destroy(err as Error);
      }
    });
    let closed = false;
    const onClose = (err?: Error): void => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      if (this.inbound.get(from) === stream) this.inbound.delete(from);
      if (!res.writableEnded) res.destroy();
      if (this.stopped || stream.closing) return;
      this.logger.warn('lost TCP streaming connection with remote peer', {
        ...fields,
        error: err?.message ?? 'EOF',
      });
    };
    req.on('error', (err) => onClose(err));
    req.on('end', () => onClose());
    req.on('close', () => onClose());
    res.on('error', (err) => onClose(err));
    res.on('close', () => onClose());
  }

  private closeInbound(from: NodeId): void {
    const s = this.inbound.get(from);
    if (!s) return;
    this.inbound.delete(from);
    s.closing = true;
    clearInterval(s.timer);
    s.req.destroy();
    s.res.destroy();
  }

  private serveSnapshot(req: http.IncomingMessage, res: http.ServerResponse): void {
    const from = this.admit(req, res);
    if (from === undefined) return;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    });
    req.on('error', () => {});
    req.on('end', () => {
      if (this.stopped) {
        res.writeHead(503, { 'Content-Type': 'text/plain' }).end('transport stopped\n');
        return;
      }
      let m: Message;
      try {
        m = decodeMessage(Buffer.concat(chunks, size), 0, size, false);
      } catch (err) {
        this.logger.warn('failed to decode raft snapshot message', { 'remote-peer-id': idHex(from), error: String(err) });
        res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`error decoding raft snapshot message: ${String(err)}\n`);
        return;
      }
      if (m.type !== MessageType.Snap || !m.snapshot) {
        res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`unexpected raft message type ${m.type} on snapshot path\n`);
        return;
      }
      this.logger.info('received database snapshot', {
        'local-member-id': this.localHex,
        'remote-snapshot-sender-id': idHex(from),
        'incoming-snapshot-index': m.snapshot.metadata.index,
        'incoming-snapshot-message-size-bytes': size,
      });
      try {
        this.opts.onMessage(m);
      } catch (err) {
        this.logger.error('failed to process raft message', { 'remote-peer-id': idHex(from), error: String(err) });
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`error processing raft message: ${String(err)}\n`);
        return;
      }
      res.writeHead(204).end();
    });
  }

  /** Closes every stream and request in flight; nothing is delivered or reported afterwards. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const peer of this.peers.values()) peer.stop();
    this.peers.clear();
    for (const id of [...this.inbound.keys()]) this.closeInbound(id);
  }
}

/** What the receiver trickles back on a stream so the sender can tell it is alive. */
const ALIVE_BYTE = Buffer.from([0]);
