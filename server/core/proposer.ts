// The proposer: request ids, proposals waiting for their entry to apply (the raft node batches them into one step
// per ready pass), and linearizable reads through read-index requests.
import { randomBytes } from 'node:crypto';
import { RaftError } from '../raft/index.js';
import type { ConfChange, ConfChangeType } from '../raft/types.js';
import type { Member } from '../cluster/membership.js';
import { encodeRequest, encodeTagged, type InternalRequest } from './requests.js';
import { Errors } from './errors.js';
import { IdWaiters } from './wait.js';
import type { ProposalRefused } from './raft-node.js';
import { sleep, type Lifecycle } from './lifecycle.js';

/** What the proposer steps into the consensus core. */
export interface ProposerRaft {
  /** Queue an entry for the next ready pass; `refused` hears when the core drops it. */
  propose(data: Uint8Array, refused: ProposalRefused): void;
  proposeConfChange(cc: ConfChange): void;
  readIndex(ctx: Uint8Array): void;
  /** Schedule a ready pass. */
  kick(): void;
  /** The current leader (0n: none). */
  readonly lead: bigint;
}

/** The applied index, and waiting for it to reach an index. */
export interface AppliedIndex {
  readonly appliedIndex: number;
  waitApplied(index: number, fn: () => void): void;
}

export interface ProposerStats {
  proposalsPending: number;
  proposalsFailed: number;
  readIndexesFailed: number;
}

export interface ProposerOptions {
  maxRequestBytes: number;
  electionMs: number;
  tickMs: number;
  /** The high 24 bits of every request id (default: random, so ids differ across restarts). */
  idPrefix?: bigint;
}

/** The applier's side: settles the waiters of applied entries. */
export interface ProposalWaiters {
  /** Settle the proposal with this id; false when nobody here waits for it (proposed elsewhere, or timed out). */
  settle(id: bigint, result: unknown, error?: Error): boolean;
  /** A conf change proposed here applied: resolve its waiter with the member list. */
  confChangeApplied(requestId: bigint, members: Member[]): void;
}

/** How long a read-index request may go unanswered before it is sent again (the reference: 500 ms). */
export const READ_INDEX_RETRY_MS = 500;

type ReadWaiter = { resolve: () => void; reject: (e: Error) => void };

export class Proposer implements ProposalWaiters {
  private readonly proposals = new IdWaiters<unknown>(() => this.stats.proposalsPending--);
  private readonly confWaiters = new IdWaiters<Member[]>();
  private readonly idPrefix: bigint;
  private idCounter = 0n;
  private readCounter = 0n;
  private pendingReads: ReadWaiter[] = [];
  private inflightRead?: { ctx: string; waiters: ReadWaiter[]; timer: NodeJS.Timeout };

  constructor(
    private readonly raft: ProposerRaft,
    private readonly applied: AppliedIndex,
    private readonly lifecycle: Lifecycle,
    private readonly stats: ProposerStats,
    private readonly opts: ProposerOptions,
  ) {
    this.idPrefix = opts.idPrefix ?? BigInt('0x' + randomBytes(3).toString('hex')) << 40n;
  }

  nextRequestId(): bigint {
    this.idCounter++;
    return this.idPrefix | (this.idCounter & 0xffffffffffn);
  }

  requestTimeoutMs(): number {
    return 5000 + 2 * this.opts.electionMs;
  }

  private get ending(): boolean {
    return this.lifecycle.stopped || this.lifecycle.stopping;
  }

  /**
   * Propose a request and resolve with its apply result. With a leader known, the only promise made is the
   * waiter's (no async wrapper); the pending count drops as the waiter settles.
   */
  propose<T>(req: InternalRequest, timeoutMs = this.requestTimeoutMs()): Promise<T> {
    if (this.ending) return Promise.reject(Errors.stopped());
    let data: Uint8Array;
    try {
      data = encodeRequest(req);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    if (data.length > this.opts.maxRequestBytes) return Promise.reject(Errors.requestTooLarge());
    if (this.raft.lead === 0n) return this.waitForLeader(timeoutMs).then(() => this.submit<T>(req.id, data, timeoutMs));
    return this.submit<T>(req.id, data, timeoutMs);
  }

  private readonly proposalTimedOut = (): Error => {
    this.stats.proposalsFailed++;
    return this.raft.lead === 0n ? Errors.timeoutDueToLeaderFail() : Errors.timeout();
  };

  private submit<T>(id: bigint, data: Uint8Array, timeoutMs: number): Promise<T> {
    const p = this.proposals.register(id, timeoutMs, this.proposalTimedOut);
    this.stats.proposalsPending++;
    try {
      this.raft.propose(data, (e) => {
        this.stats.proposalsFailed++;
        this.proposals.reject(id, e instanceof RaftError ? (this.raft.lead === 0n ? Errors.noLeader() : Errors.leaderChanged()) : (e as Error));
      });
    } catch (e) {
      this.proposals.reject(id, e as Error); // a rejection, never a throw, for the caller
    }
    return p as Promise<T>;
  }

  settle(id: bigint, result: unknown, error?: Error): boolean {
    if (!this.proposals.has(id)) return false;
    if (error) this.proposals.reject(id, error);
    else this.proposals.resolve(id, result);
    return true;
  }

  confChangeApplied(requestId: bigint, members: Member[]): void {
    this.confWaiters.resolve(requestId, members);
  }

  /** Wait (a bounded time) for an election to finish, as a request arriving between leaders should. */
  async waitForLeader(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + Math.min(timeoutMs, 3 * this.opts.electionMs);
    while (this.raft.lead === 0n) {
      if (this.ending) throw Errors.stopped();
      if (Date.now() >= deadline) throw Errors.noLeader();
      await sleep(this.opts.tickMs);
    }
  }

  /** Propose a membership change and resolve with the member list once it applied. */
  async proposeConfChange(type: ConfChangeType, nodeId: bigint, member: Partial<Member>): Promise<Member[]> {
    if (this.ending) throw Errors.stopped();
    if (this.raft.lead === 0n) await this.waitForLeader(this.requestTimeoutMs());
    const requestId = this.nextRequestId();
    const cc: ConfChange = { type, nodeId, context: encodeTagged({ ...member, requestId }) };
    const p = this.confWaiters.register(requestId, this.requestTimeoutMs(), () => Errors.timeout());
    try {
      this.raft.proposeConfChange(cc);
    } catch (e) {
      this.confWaiters.reject(requestId, e instanceof RaftError ? Errors.leaderChanged() : (e as Error));
    }
    this.raft.kick();
    return p;
  }

  /** Resolves when a read issued now may be served locally and be linearizable. */
  async linearizableReadNotify(timeoutMs = this.requestTimeoutMs()): Promise<void> {
    if (this.lifecycle.stopped) throw Errors.stopped();
    if (this.raft.lead === 0n) await this.waitForLeader(timeoutMs);
    return new Promise<void>((resolve, reject) => {
      this.pendingReads.push({ resolve, reject });
      this.sendReadIndex(timeoutMs);
    });
  }

  private sendReadIndex(timeoutMs: number): void {
    if (this.inflightRead || this.pendingReads.length === 0) return;
    if (this.raft.lead === 0n) {
      const waiters = this.pendingReads;
      this.pendingReads = [];
      this.stats.readIndexesFailed += waiters.length;
      for (const w of waiters) w.reject(Errors.noLeader());
      return;
    }
    const waiters = this.pendingReads;
    this.pendingReads = [];
    const deadline = Date.now() + timeoutMs;
    const attempt = () => {
      this.readCounter++;
      const ctxBuf = Buffer.alloc(8);
      ctxBuf.writeBigUInt64BE(this.readCounter);
      // Unanswered read-index requests are sent again (a message may be lost while a peer stream connects).
      const timer = setTimeout(() => {
        if (this.inflightRead?.timer !== timer) return;
        if (Date.now() < deadline && !this.lifecycle.stopped) return attempt();
        this.inflightRead = undefined;
        this.stats.readIndexesFailed += waiters.length;
        for (const w of waiters) w.reject(this.raft.lead === 0n ? Errors.noLeader() : Errors.timeout());
        this.sendReadIndex(this.requestTimeoutMs());
      }, READ_INDEX_RETRY_MS);
      this.inflightRead = { ctx: ctxBuf.toString('hex'), waiters, timer };
      try {
        this.raft.readIndex(ctxBuf);
      } catch {
        /* no leader right now: the retry timer tries again until the deadline */
      }
      this.raft.kick();
    };
    attempt();
  }

  /** The consensus core answered a read-index request (ctx in hex). */
  onReadState(ctx: string, index: number): void {
    const r = this.inflightRead;
    if (!r || r.ctx !== ctx) return;
    clearTimeout(r.timer);
    this.inflightRead = undefined;
    const done = () => {
      for (const w of r.waiters) w.resolve();
    };
    if (this.applied.appliedIndex >= index) done();
    else this.applied.waitApplied(index, done);
    if (this.pendingReads.length > 0) setImmediate(() => this.sendReadIndex(this.requestTimeoutMs()));
  }

  /** The member stops: every waiter fails. */
  stop(): void {
    this.proposals.rejectAll(() => Errors.stopped());
    this.confWaiters.rejectAll(() => Errors.stopped());
    if (this.inflightRead) {
      clearTimeout(this.inflightRead.timer);
      for (const w of this.inflightRead.waiters) w.reject(Errors.stopped());
      this.inflightRead = undefined;
    }
    for (const w of this.pendingReads) w.reject(Errors.stopped());
    this.pendingReads = [];
  }
}
