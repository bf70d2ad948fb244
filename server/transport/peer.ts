// The sending side for one remote member: a long-lived HTTP/1.1 POST whose chunked body is a sequence of
// length-prefixed frames (see codec.ts), re-dialled with backoff when it breaks, plus one-off POSTs for
// snapshots. Messages queue in a bounded buffer and go out many per socket write.

import * as http from 'node:http';
import * as https from 'node:https';
import { isSecureUrl, isUnixUrl, unixSocketPath } from './unix-url.js';

import type { Logger } from '../log/logger.js';
import type { SecureVersion } from 'node:tls';
import type { Message, NodeId } from '../raft/types.js';
import { MessageType } from '../raft/types.js';
import { KEEPALIVE_FRAME, encodeFrames, encodeMessage, encodedSize } from './codec.js';
import { HEADER_CLUSTER_ID, HEADER_FROM, HEADER_TO, PATH_SNAPSHOT, PATH_STREAM_PREFIX, STREAM_TYPE, idHex } from './wire.js';

/** TLS material for dialling peers (and, in peer-server.ts, for serving them). */
export interface PeerTlsOptions {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  /** Verify the remote's certificate (default true). */
  rejectUnauthorized?: boolean;
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
}

/** Timing knobs; the defaults follow the reference (read timeout 5 s, heartbeat at a third of it). */
export interface StreamTimings {
  /** An idle stream sends a keepalive this often. */
  keepaliveMs: number;
  /** A stream on which nothing arrived for this long is considered dead (--raft-read-timeout). */
  readTimeoutMs: number;
  /** A stream whose write has not drained for this long is considered dead (--raft-write-timeout). */
  writeTimeoutMs: number;
  /** Waiting for the remote to accept a stream gives up after this long. */
  dialTimeoutMs: number;
  /** First and largest delay between re-dials. */
  minBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_TIMINGS: StreamTimings = {
  keepaliveMs: 1000,
  readTimeoutMs: 5000,
  writeTimeoutMs: 5000,
  dialTimeoutMs: 5000,
  minBackoffMs: 50,
  maxBackoffMs: 1000,
};

/** What a Peer needs from its Transport. */
export interface PeerContext {
  localId: NodeId;
  clusterId: bigint;
  logger: Logger;
  tls?: PeerTlsOptions;
  timings: StreamTimings;
  maxQueueMessages: number;
  maxQueueBytes: number;
  reportUnreachable(id: NodeId): void;
  reportSnapshot(id: NodeId, ok: boolean): void;
  reportRemoved(by: NodeId): void;
}

/** Largest batch encoded into one write; bigger queues go out as several writes. */
const MAX_BATCH_BYTES = 256 * 1024;
/** Idle inactivity limit for a snapshot POST (a slow peer still makes progress within it). */
const SNAPSHOT_IDLE_TIMEOUT_MS = 30_000;

type StreamState = 'connecting' | 'up' | 'down' | 'stopped';

/** Outgoing traffic to one remote member. */
export class Peer {
  private urls: string[];
  private urlIndex = 0;
  private state: StreamState = 'connecting';
  private queue: Message[] = [];
  private queuedBytes = 0;
  private req: http.ClientRequest | undefined;
  /** Increases with every dial; callbacks of an older attempt are ignored. */
  private attempt = 0;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private dialTimer: NodeJS.Timeout | undefined;
  private flushScheduled = false;
  private waitingDrain = false;
  private lastWrite = 0;
  private lastRecv = 0;
  private activeAt: number | undefined;
  private lastOverflowLog = 0;
  private readonly snapshots = new Set<http.ClientRequest>();

  constructor(
    readonly id: NodeId,
    urls: string[],
    private readonly ctx: PeerContext,
  ) {
    this.urls = [...urls];
    this.backoffMs = ctx.timings.minBackoffMs;
    this.dial();
  }

  /** When the stream to this peer became active (ms since epoch), or undefined while inactive. */
  get activeSince(): number | undefined {
    return this.activeAt;
  }

  /** Queues a message; false when it was dropped (peer down or queue full). Never blocks. */
  enqueue(m: Message): boolean {
    if (this.state === 'stopped') return false;
    if (m.type === MessageType.Snap) {
      this.sendSnapshot(m);
      return true;
    }
    if (this.state === 'down') return false;
    const size = encodedSize(m);
    if (this.queue.length >= this.ctx.maxQueueMessages || this.queuedBytes + size > this.ctx.maxQueueBytes) {
      const now = Date.now();
      if (now - this.lastOverflowLog >= 1000) {
        this.lastOverflowLog = now;
        this.ctx.logger.warn('dropped internal Raft message since sending buffer is full (overloaded network)', {
          'message-type': m.type,
          'local-member-id': idHex(this.ctx.localId),
          from: idHex(m.from),
          'remote-peer-id': idHex(this.id),
          'remote-peer-active': this.activeAt !== undefined,
        });
      }
      return false;
    }
    this.queue.push(m);
    this.queuedBytes += size;
    this.scheduleFlush();
    return true;
  }

  /** Replaces the peer's URLs; an open stream is re-dialled only if its URL is gone. */
  update(urls: string[]): void {
    const current = this.urls[this.urlIndex % this.urls.length];
    this.urls = [...urls];
    const still = this.urls.indexOf(current);
    if (still >= 0) {
      this.urlIndex = still;
      return;
    }
    this.urlIndex = 0;
    if (this.state === 'up' || this.state === 'connecting') this.fail(this.attempt, new Error('peer URLs updated'));
  }

  /** Closes the stream and any snapshot in flight; no reconnect, no callbacks afterwards. */
  stop(): void {
    if (this.state === 'stopped') return;
    const wasUp = this.state === 'up';
    this.state = 'stopped';
    this.attempt++;
    this.clearTimers();
    this.req?.destroy();
    this.req = undefined;
    for (const r of this.snapshots) r.destroy();
    this.snapshots.clear();
    this.queue = [];
    this.queuedBytes = 0;
    if (wasUp) {
      this.ctx.logger.info('stopped TCP streaming connection with remote peer', {
        'stream-writer-type': STREAM_TYPE,
        'remote-peer-id': idHex(this.id),
      });
    }
  }

  private clearTimers(): void {
    clearTimeout(this.retryTimer);
    clearInterval(this.keepaliveTimer);
    clearTimeout(this.dialTimer);
    this.retryTimer = this.keepaliveTimer = this.dialTimer = undefined;
  }

  private currentUrl(): URL {
    return new URL(this.urls[this.urlIndex % this.urls.length]);
  }

  private request(url: URL, path: string, headers: http.OutgoingHttpHeaders): http.ClientRequest {
    const common: http.RequestOptions = {
      ...(isUnixUrl(url) ? { socketPath: unixSocketPath(url) } : { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port || (url.protocol === 'https:' ? 443 : 80) }),
      path,
      method: 'POST',
      headers: {
        'content-type': 'application/octet-stream',
        [HEADER_CLUSTER_ID]: idHex(this.ctx.clusterId),
        [HEADER_FROM]: idHex(this.ctx.localId),
        [HEADER_TO]: idHex(this.id),
        ...headers,
      },
      agent: false,
    };
    if (isSecureUrl(url)) {
      const tls = this.ctx.tls;
      return https.request({
        ...common,
        cert: tls?.cert,
        key: tls?.key,
        ca: tls?.ca,
        rejectUnauthorized: tls?.rejectUnauthorized ?? true,
        minVersion: tls?.minVersion,
        maxVersion: tls?.maxVersion,
      });
    }
    return http.request(common);
  }

  private dial(): void {
    if (this.state === 'stopped') return;
    this.state = 'connecting';
    const attempt = ++this.attempt;
    let req: http.ClientRequest;
    try {
      req = this.request(this.currentUrl(), PATH_STREAM_PREFIX + idHex(this.ctx.localId), {
        'transfer-encoding': 'chunked',
      });
    } catch (err) {
      this.fail(attempt, err as Error);
      return;
    }
    this.req = req;
    req.on('socket', (s) => s.setNoDelay(true));
    req.on('error', (err) => this.fail(attempt, err));
    req.on('response', (res) => this.onResponse(attempt, res));
    this.dialTimer = setTimeout(
      () => this.fail(attempt, new Error(`remote peer did not accept the stream within ${this.ctx.timings.dialTimeoutMs} ms`)),
      this.ctx.timings.dialTimeoutMs,
    );
    req.flushHeaders();
  }

  private onResponse(attempt: number, res: http.IncomingMessage): void {
    if (attempt !== this.attempt) {
      res.destroy();
      return;
    }
    clearTimeout(this.dialTimer);
    this.dialTimer = undefined;
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => {});
      res.on('end', () => this.onRejected(attempt, res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8').trim(), res));
      return;
    }
    this.state = 'up';
    this.backoffMs = this.ctx.timings.minBackoffMs;
    this.lastRecv = this.lastWrite = Date.now();
    this.ctx.logger.info('established TCP streaming connection with remote peer', {
      'stream-writer-type': STREAM_TYPE,
      'local-member-id': idHex(this.ctx.localId),
      'remote-peer-id': idHex(this.id),
    });
    this.activate();
    res.on('data', () => {
      this.lastRecv = Date.now();
    });
    res.on('error', (err) => this.fail(attempt, err));
    res.on('end', () => this.fail(attempt, new Error('stream closed by remote peer')));
    res.on('close', () => this.fail(attempt, new Error('stream closed by remote peer')));
    this.keepaliveTimer = setInterval(() => this.tick(attempt), this.ctx.timings.keepaliveMs);
    this.scheduleFlush();
  }

  /** The remote answered the stream request with an error status: say why, in the reference's words. */
  private onRejected(attempt: number, status: number, body: string, res: http.IncomingMessage): void {
    const fields = {
      'local-member-id': idHex(this.ctx.localId),
      'remote-peer-id': idHex(this.id),
      'local-member-cluster-id': idHex(this.ctx.clusterId),
      'remote-peer-cluster-id': String(res.headers[HEADER_CLUSTER_ID] ?? ''),
      'http-status': status,
      error: body,
    };
    if (status === 412 && /cluster ID mismatch/i.test(body)) {
      this.ctx.logger.error('request sent was ignored by remote peer due to cluster ID mismatch', fields);
    } else if (status === 410) {
      this.ctx.logger.error('the local member has been permanently removed from the cluster', fields);
      this.ctx.reportRemoved(this.id);
    } else {
      this.ctx.logger.warn('remote peer rejected the stream request', fields);
    }
    this.fail(attempt, new Error(`unexpected http status ${status}: ${body}`));
  }

  /** Keepalive and liveness check while the stream is up. */
  private tick(attempt: number): void {
    if (attempt !== this.attempt || this.state !== 'up') return;
    const now = Date.now();
    if (now - this.lastRecv > this.ctx.timings.readTimeoutMs) {
      this.fail(attempt, new Error(`nothing received from remote peer for ${now - this.lastRecv} ms`));
      return;
    }
    if (this.waitingDrain && now - this.lastWrite > this.ctx.timings.writeTimeoutMs) {
      this.fail(attempt, new Error(`a write to the remote peer has not completed for ${now - this.lastWrite} ms`));
      return;
    }
    if (!this.waitingDrain && now - this.lastWrite >= this.ctx.timings.keepaliveMs) {
      this.lastWrite = now;
      this.req?.write(KEEPALIVE_FRAME);
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.state !== 'up' || this.waitingDrain) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: messages from several I/O callbacks of this loop turn share a write.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Writes what is queued now instead of at the end of this event-loop turn (the caller is about to block). */
  flushNow(): void {
    if (this.queue.length > 0) this.flush();
  }

  private flush(): void {
    const req = this.req;
    const attempt = this.attempt;
    while (this.queue.length > 0 && this.state === 'up' && !this.waitingDrain && req) {
      let n = 0;
      let bytes = 0;
      while (n < this.queue.length && (n === 0 || bytes < MAX_BATCH_BYTES)) {
        bytes += encodedSize(this.queue[n]);
        n++;
      }
      const batch = n === this.queue.length ? this.queue : this.queue.slice(0, n);
      this.queue = n === this.queue.length ? [] : this.queue.slice(n);
      this.queuedBytes = Math.max(0, this.queuedBytes - bytes);
      this.lastWrite = Date.now();
      if (!req.write(encodeFrames(batch))) {
        this.waitingDrain = true;
        req.once('drain', () => {
          if (attempt !== this.attempt) return;
          this.waitingDrain = false;
          this.flush();
        });
      }
    }
  }

  /** Ends the current attempt (once): log, drop the queue, report, and re-dial after a backoff. */
  private fail(attempt: number, err: Error): void {
    if (attempt !== this.attempt || this.state === 'stopped' || this.state === 'down') return;
    const wasUp = this.state === 'up';
    this.attempt++;
    this.clearTimers();
    const req = this.req;
    this.req = undefined;
    req?.destroy();
    this.waitingDrain = false;
    this.state = 'down';
    if (wasUp) {
      this.ctx.logger.warn('lost TCP streaming connection with remote peer', {
        'stream-writer-type': STREAM_TYPE,
        'local-member-id': idHex(this.ctx.localId),
        'remote-peer-id': idHex(this.id),
        error: err.message,
      });
    } else {
      this.ctx.logger.debug('failed to dial stream to remote peer', {
        'local-member-id': idHex(this.ctx.localId),
        'remote-peer-id': idHex(this.id),
        address: this.urls[this.urlIndex % this.urls.length],
        error: err.message,
      });
    }
    this.deactivate(err);
    const dropped = this.queue.length;
    this.queue = [];
    this.queuedBytes = 0;
    if (dropped > 0 || wasUp) this.ctx.reportUnreachable(this.id);
    // Try the next URL next time; the first retry after a working stream broke is quick.
    this.urlIndex++;
    const base = wasUp ? this.ctx.timings.minBackoffMs : this.backoffMs;
    this.backoffMs = Math.min(this.ctx.timings.maxBackoffMs, base * 2);
    const delay = base * (0.8 + Math.random() * 0.4);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.dial();
    }, delay);
  }

  private activate(): void {
    if (this.activeAt !== undefined) return;
    this.activeAt = Date.now();
    this.ctx.logger.info('peer became active', { 'peer-id': idHex(this.id) });
  }

  private deactivate(err: Error): void {
    if (this.activeAt === undefined) return;
    this.activeAt = undefined;
    this.ctx.logger.warn('peer became inactive (message send to peer failed)', {
      'peer-id': idHex(this.id),
      error: `failed to write ${idHex(this.id)} on stream Message (${err.message})`,
    });
  }

  /** One POST per snapshot; the outcome goes to reportSnapshot (and reportUnreachable on failure). */
  private sendSnapshot(m: Message): void {
    const body = encodeMessage(m);
    const fields = {
      'snapshot-index': m.snapshot?.metadata.index ?? 0,
      'remote-peer-id': idHex(this.id),
      bytes: body.length,
    };
    this.ctx.logger.info('sending database snapshot', fields);
    let done = false;
    let req: http.ClientRequest | undefined;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      if (req) this.snapshots.delete(req);
      if (this.state === 'stopped') return;
      if (err) {
        this.ctx.logger.warn('failed to send database snapshot', { ...fields, error: err.message });
        this.ctx.reportUnreachable(this.id);
        this.ctx.reportSnapshot(this.id, false);
      } else {
        this.ctx.logger.info('sent database snapshot', fields);
        this.ctx.reportSnapshot(this.id, true);
      }
    };
    try {
      req = this.request(this.currentUrl(), PATH_SNAPSHOT, { 'content-length': body.length });
    } catch (err) {
      setImmediate(() => finish(err as Error));
      return;
    }
    this.snapshots.add(req);
    req.setTimeout(SNAPSHOT_IDLE_TIMEOUT_MS, () => req?.destroy(new Error('snapshot send timed out')));
    req.on('error', (err) => finish(err));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => finish(err));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) finish();
        else finish(new Error(`unexpected http status ${status}: ${Buffer.concat(chunks).toString('utf8').trim()}`));
      });
    });
    req.end(body);
  }
}
