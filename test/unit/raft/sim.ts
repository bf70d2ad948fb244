// A deterministic simulator for the consensus core: N members over a network that delays, drops,
// duplicates and reorders messages, partitions and heals, and crashes members and restarts them
// from what they had persisted. After every Ready it checks Raft's safety properties; a run is
// fully determined by its seed, so any failure replays exactly.

import type { ConfState, Entry, Message, NodeId, Ready } from '../../../server/raft/index.js';
import {
  ConfChangeType,
  decodeConfChange,
  RaftError,
  EntryType,
  MemoryStorage,
  MessageType,
  NONE,
  ProposalDroppedError,
  RawNode,
  StateRole,
} from '../../../server/raft/index.js';

/** A small, fast, seedable PRNG (mulberry32). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  /** A number in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: T[]): T {
    return xs[this.int(xs.length)];
  }
}

/** Thrown when a safety or liveness property fails. */
export class InvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantError';
  }
}

/** Per-run fault and configuration knobs (drawn from the seed by runSchedule). */
export interface SimOptions {
  nodes: number;
  seed: number;
  preVote: boolean;
  checkQuorum: boolean;
  electionTick: number;
  heartbeatTick: number;
  maxSizePerMsg: number;
  maxInflightMsgs: number;
  disableProposalForwarding: boolean;
  /** Network behaviour; units are sub-ticks (TICK units per tick). */
  dropRate: number;
  dupRate: number;
  maxDelay: number;
  /** Chance, per Ready, that a member crashes halfway through handling it (after a leader's early send, before persisting). */
  crashMidReady?: number;
  /** Persisting a Ready takes time (messages keep arriving meanwhile), as in the server. */
  asyncPersist?: boolean;
  trace?: (line: string) => void;
}

/** Sub-tick time units per node tick (messages can make several round trips per tick). */
export const TICK = 10;

interface AppState {
  applied: number;
  hash: number;
  confState: ConfState;
}

interface SimNode {
  id: NodeId;
  /** What the member has made durable: survives crashes. */
  storage: MemoryStorage;
  raw: RawNode | undefined;
  app: AppState;
  tickOffset: number;
  group: number;
  /** commit index as last persisted, for commit-progress checks */
  persistedCommit: number;
  /** A Ready being persisted (asyncPersist): finished at time `at`. */
  pending?: { rd: Ready; at: number; sent: boolean };
}

const dec = new TextDecoder();
const enc = new TextEncoder();

function hashStep(h: number, e: Entry): number {
  // FNV-1a over (index, term, data): the state machine's fingerprint after applying e.
  h ^= e.index;
  h = Math.imul(h, 16777619);
  h ^= e.term;
  h = Math.imul(h, 16777619);
  for (let i = 0; i < e.data.length; i++) {
    h ^= e.data[i];
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

function u32(n: number): Uint8Array {
  return new Uint8Array([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

function fromU32(b: Uint8Array): number {
  return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
}

function msgStr(m: Message): string {
  let s = `${m.type} ${m.from}->${m.to} t${m.term}`;
  if (m.type === 'App') s += ` i${m.index}/lt${m.logTerm} n${m.entries.length} c${m.commit}`;
  else if (m.type === 'AppResp') s += ` i${m.index}${m.reject ? ` REJ hint ${m.rejectHint}/${m.logTerm}` : ''}`;
  else if (m.type === 'Snap') s += ` snap@${m.snapshot?.metadata.index}`;
  else if (m.reject) s += ' REJ';
  if (m.context.length) s += ` ctx=${dec.decode(m.context)}`;
  return s;
}

/** A simulated cluster with a faulty network and safety checks after every step. */
export class Cluster {
  readonly nodes = new Map<NodeId, SimNode>();
  readonly ids: NodeId[];
  readonly rng: Rng;
  now = 0;
  private buckets: Message[][] = [];
  private lost = new WeakSet<Message>();
  // --- safety bookkeeping ---
  private leaderOfTerm = new Map<number, NodeId>();
  /** term of the committed entry at each index (sparse) */
  private committedTerm: number[] = [];
  maxCommitted = 0;
  /** state-machine fingerprint after applying each index */
  private appliedHash: number[] = [];
  /** (index:term) -> data and previous entry's term, for log matching */
  private entryFacts = new Map<string, { data: string; prevTerm: number }>();
  private pendingReads = new Map<string, { minIndex: number; node: NodeId }>();
  private readSeq = 0;
  private propSeq = 0;
  /** proposal payload -> index where it was applied */
  readonly appliedProposals = new Map<string, number>();
  /** read context -> index served (the last answer, duplicates included) */
  readonly readResults = new Map<string, number>();
  /** Sees every message a member sends (before the network drops or delays it). */
  tap: ((m: Message) => void) | undefined;
  /** Members removed from the configuration: shut down for good, their messages dropped (as etcd does). */
  readonly retired = new Set<NodeId>();
  private toRetire: NodeId[] = [];
  /** The membership as of the highest applied ConfChange (what the cluster currently is). */
  conf: ConfState;
  private confIndex = 0;
  readonly stats = { delivered: 0, dropped: 0, proposals: 0, dropProposals: 0, reads: 0, readsServed: 0, snapshots: 0, elections: 0, crashes: 0, confChanges: 0 };

  constructor(readonly opts: SimOptions) {
    this.rng = new Rng(opts.seed ^ 0x5bd1e995);
    this.ids = [];
    for (let i = 1; i <= opts.nodes; i++) this.ids.push(BigInt(i));
    this.conf = { voters: [...this.ids], learners: [] };
    const peers = this.ids.map((id) => ({ id, context: new Uint8Array(0) }));
    for (const id of this.ids) {
      const storage = new MemoryStorage();
      RawNode.bootstrap(storage, peers);
      const n: SimNode = {
        id,
        storage,
        raw: undefined,
        app: { applied: 0, hash: 0, confState: { voters: [], learners: [] } },
        tickOffset: this.rng.int(TICK),
        group: 0,
        persistedCommit: storage.initialState().hardState.commit,
      };
      this.nodes.set(id, n);
      this.start(n);
    }
  }

  trace(line: string): void {
    this.opts.trace?.(`[${(this.now / TICK).toFixed(1)}] ${line}`);
  }

  private start(n: SimNode, overrides: Partial<SimOptions> = {}): void {
    const o = { ...this.opts, ...overrides };
    const snap = n.storage.snapshot();
    n.app = {
      applied: snap.metadata.index,
      hash: snap.metadata.index > 0 ? fromU32(snap.data) : 0,
      confState: snap.metadata.confState,
    };
    // Each incarnation gets its own deterministic random stream.
    const r = new Rng(this.rng.int(0x7fffffff) + 1);
    n.raw = new RawNode({
      id: n.id,
      electionTick: o.electionTick,
      heartbeatTick: o.heartbeatTick,
      storage: n.storage,
      applied: snap.metadata.index,
      maxSizePerMsg: o.maxSizePerMsg,
      maxInflightMsgs: o.maxInflightMsgs,
      preVote: o.preVote,
      checkQuorum: o.checkQuorum,
      disableProposalForwarding: o.disableProposalForwarding,
      random: () => r.next(),
    });
    n.persistedCommit = n.storage.initialState().hardState.commit;
  }

  // ---------------- faults and workload ----------------

  /** Adds a member that starts empty (not bootstrapped); it joins once the cluster adds it by ConfChange. */
  addNode(id: NodeId, overrides: Partial<SimOptions> = {}): void {
    const n: SimNode = {
      id,
      storage: new MemoryStorage(),
      raw: undefined,
      app: { applied: 0, hash: 0, confState: { voters: [], learners: [] } },
      tickOffset: this.rng.int(TICK),
      group: 0,
      persistedCommit: 0,
    };
    this.nodes.set(id, n);
    this.ids.push(id);
    this.start(n, overrides);
  }

  /** Crashes a member: everything not persisted is lost. */
  crash(id: NodeId): void {
    const n = this.nodes.get(id)!;
    if (!n.raw) return;
    this.trace(`CRASH ${id}`);
    this.stats.crashes++;
    n.raw = undefined;
    n.pending = undefined;
  }

  /** Restarts a crashed member from its persisted storage. */
  restart(id: NodeId): void {
    const n = this.nodes.get(id)!;
    if (n.raw || this.retired.has(id)) return;
    this.trace(`RESTART ${id} (last ${n.storage.lastIndex()}, commit ${n.storage.initialState().hardState.commit})`);
    this.start(n);
  }

  /** Splits members into groups; messages cross no group boundary. */
  partition(groups: NodeId[][]): void {
    for (const n of this.nodes.values()) n.group = -1;
    groups.forEach((g, i) => g.forEach((id) => (this.nodes.get(id)!.group = i)));
    let extra = groups.length;
    for (const n of this.nodes.values()) if (n.group < 0) n.group = extra++;
    this.trace(`PARTITION ${groups.map((g) => `[${g.join(',')}]`).join(' ')}`);
  }

  /** Cuts one member off from everyone. */
  isolate(id: NodeId): void {
    this.partition([[id], this.ids.filter((x) => x !== id)]);
  }

  heal(): void {
    for (const n of this.nodes.values()) n.group = 0;
    this.trace('HEAL');
  }

  alive(): NodeId[] {
    return this.ids.filter((id) => this.nodes.get(id)!.raw !== undefined);
  }

  /** Live members of the current configuration (voters and learners). */
  aliveMembers(): NodeId[] {
    return this.alive().filter((id) => this.conf.voters.includes(id) || this.conf.learners.includes(id));
  }

  /** Proposes a membership change on `on`; returns whether it was accepted for proposal. */
  proposeConfChange(on: NodeId, type: ConfChangeType, nodeId: NodeId): boolean {
    try {
      this.raw(on).proposeConfChange({ type, nodeId, context: new Uint8Array(0) });
      this.trace(`PROPOSE CONF ${ConfChangeType[type]} ${nodeId} on ${on}`);
      return true;
    } catch (e) {
      if (e instanceof RaftError && (e.code === 'ProposalDropped' || e.code === 'ConfChangePending')) {
        this.trace(`PROPOSE CONF ${ConfChangeType[type]} ${nodeId} on ${on}: ${e.code}`);
        return false;
      }
      throw e;
    }
  }

  raw(id: NodeId): RawNode {
    const r = this.nodes.get(id)!.raw;
    if (!r) throw new Error(`node ${id} is down`);
    return r;
  }

  /** Proposes a fresh payload on `id`; returns it, or undefined if dropped. */
  propose(id: NodeId): string | undefined {
    const n = this.nodes.get(id)!;
    if (!n.raw) return undefined;
    const payload = `p${++this.propSeq}`;
    this.stats.proposals++;
    try {
      n.raw.propose(enc.encode(payload));
      this.trace(`PROPOSE ${payload} on ${id}`);
      return payload;
    } catch (e) {
      if (e instanceof ProposalDroppedError) {
        this.stats.dropProposals++;
        this.trace(`PROPOSE ${payload} on ${id} dropped: ${e.message}`);
        return undefined;
      }
      throw e;
    }
  }

  /** Starts a linearizable read on `id`; returns its context. */
  readIndex(id: NodeId): string | undefined {
    const n = this.nodes.get(id)!;
    if (!n.raw) return undefined;
    const ctx = `r${++this.readSeq}`;
    // Any entry some member already knows committed must be visible to this read.
    this.pendingReads.set(ctx, { minIndex: this.maxCommitted, node: id });
    this.stats.reads++;
    this.trace(`READINDEX ${ctx} on ${id} (min ${this.maxCommitted})`);
    n.raw.readIndex(enc.encode(ctx));
    return ctx;
  }

  /** Takes a snapshot at the applied index and compacts most of the log before it. */
  snapshotAndCompact(id: NodeId, keep: number): void {
    const n = this.nodes.get(id)!;
    if (!n.raw) return;
    const idx = n.app.applied;
    if (idx <= n.storage.snapshot().metadata.index || idx > n.storage.lastIndex()) return;
    n.storage.createSnapshot(idx, n.app.confState, u32(n.app.hash));
    const compactTo = Math.max(idx - keep, n.storage.firstIndex());
    if (compactTo >= n.storage.firstIndex() && compactTo <= idx) n.storage.compact(compactTo);
    this.stats.snapshots++;
    this.trace(`SNAPSHOT ${id} at ${idx}, compacted to ${compactTo}`);
  }

  /** The member every live member agrees is leader (and that is leader), if any. */
  stableLeader(): NodeId | undefined {
    let lead: NodeId | undefined;
    for (const id of this.aliveMembers()) {
      const ss = this.raw(id).status().softState;
      if (ss.lead === NONE) return undefined;
      if (lead === undefined) lead = ss.lead;
      else if (lead !== ss.lead) return undefined;
    }
    if (lead === undefined || !this.nodes.get(lead)!.raw) return undefined;
    return this.raw(lead).status().softState.role === StateRole.Leader ? lead : undefined;
  }

  /** One line per member: role, term, leader, log and membership (for failure reports). */
  describe(): string {
    const lines = [`conf voters=[${this.conf.voters.join(',')}] learners=[${this.conf.learners.join(',')}]`];
    for (const id of this.ids) {
      const n = this.nodes.get(id)!;
      if (!n.raw) {
        lines.push(`  ${id}: ${this.retired.has(id) ? 'retired' : 'down'}`);
        continue;
      }
      const st = n.raw.status();
      const log = n.raw.raft.raftLog;
      lines.push(
        `  ${id}: ${st.softState.role} term=${st.hardState.term} vote=${st.hardState.vote} lead=${st.softState.lead} commit=${st.hardState.commit} applied=${st.applied} last=${log.lastIndex()} first=${log.firstIndex()} voters=[${st.confState.voters.join(',')}] learners=[${st.confState.learners.join(',')}]`,
      );
    }
    return lines.join('\n');
  }

  /** Any live member that believes it is leader in the highest term. */
  leader(): NodeId | undefined {
    let best: NodeId | undefined;
    let bestTerm = -1;
    for (const id of this.alive()) {
      const st = this.raw(id).status();
      if (st.softState.role === StateRole.Leader && st.hardState.term > bestTerm) {
        best = id;
        bestTerm = st.hardState.term;
      }
    }
    return best;
  }

  // ---------------- network ----------------

  private sendAll(msgs: Message[]): void {
    for (const m of msgs) {
      this.tap?.(m);
      if (this.rng.chance(this.opts.dropRate)) {
        this.stats.dropped++;
        // A lost snapshot is still reported to its sender (by the transport, in real life).
        if (m.type === MessageType.Snap) {
          this.lost.add(m);
          this.enqueue(m, 1 + this.rng.int(this.opts.maxDelay));
        }
        continue;
      }
      this.enqueue(m, 1 + this.rng.int(this.opts.maxDelay));
      if (this.rng.chance(this.opts.dupRate)) this.enqueue(m, 1 + this.rng.int(this.opts.maxDelay * 2));
    }
  }

  private enqueue(m: Message, delay: number): void {
    const at = this.now + delay;
    const b = this.buckets[at];
    if (b) b.push(m);
    else this.buckets[at] = [m];
  }

  private deliver(m: Message): void {
    const to = this.nodes.get(m.to);
    const from = this.nodes.get(m.from);
    if (this.lost.has(m) || !to || !to.raw || !from || to.group !== from.group) {
      this.stats.dropped++;
      if (m.type === MessageType.Snap) this.reportSnapshot(m, false);
      return;
    }
    this.stats.delivered++;
    if (this.opts.trace) this.trace(`deliver ${msgStr(m)}`);
    to.raw.step(m);
    if (m.type === MessageType.Snap) this.reportSnapshot(m, true);
  }

  /** Tells the snapshot's sender how sending went, as the transport does. */
  private reportSnapshot(m: Message, ok: boolean): void {
    const from = this.nodes.get(m.from);
    if (!from?.raw) return;
    this.trace(`report snapshot to ${m.to} ${ok ? 'ok' : 'failed'} to ${m.from}`);
    from.raw.reportSnapshot(m.to, ok);
  }

  // ---------------- time ----------------

  /** Advances one sub-tick: ticks due members, delivers due messages, processes every Ready. */
  stepUnit(): void {
    this.now++;
    for (const n of this.nodes.values()) {
      if (n.pending && n.pending.at <= this.now && n.raw) {
        const { rd, sent } = n.pending;
        n.pending = undefined;
        this.finishReady(n, rd, sent);
      }
    }
    const phase = this.now % TICK;
    for (const n of this.nodes.values()) if (n.raw && n.tickOffset === phase) n.raw.tick();
    const due = this.buckets[this.now];
    if (due) {
      this.buckets[this.now] = undefined as unknown as Message[];
      for (const m of due) {
        this.deliver(m);
        this.processReadies();
      }
    }
    this.processReadies();
    if (this.toRetire.length > 0) {
      for (const id of this.toRetire) {
        this.trace(`RETIRE ${id}`);
        this.crash(id);
        this.retired.add(id);
      }
      this.toRetire = [];
    }
  }

  /** Runs k ticks' worth of sub-ticks. */
  runTicks(k: number): void {
    for (let i = 0; i < k * TICK; i++) this.stepUnit();
  }

  /** Runs until pred holds (checked each sub-tick) or maxTicks pass; returns whether it held. */
  runUntil(pred: () => boolean, maxTicks: number): boolean {
    for (let i = 0; i < maxTicks * TICK; i++) {
      if (pred()) return true;
      this.stepUnit();
    }
    return pred();
  }

  processReadies(): void {
    for (let again = true; again; ) {
      again = false;
      for (const n of this.nodes.values()) {
        if (n.raw && !n.pending && n.raw.hasReady()) {
          this.beginReady(n, n.raw.ready());
          again = true;
        }
      }
    }
  }

  // ---------------- the Ready loop, with safety checks ----------------

  private fail(msg: string): never {
    throw new InvariantError(msg);
  }

  private beginReady(n: SimNode, rd: Ready): void {
    const raw = n.raw!;
    const id = n.id;
    if (rd.softState) {
      this.trace(`${id} soft ${rd.softState.role} lead=${rd.softState.lead} term=${raw.raft.term}`);
      if (rd.softState.role === StateRole.Leader) this.checkNewLeader(n);
    }
    // A leader may send before persisting (the followers persist in parallel), as the server does;
    // a follower never acknowledges what it has not persisted.
    const sendFirst = raw.raft.state === StateRole.Leader && this.rng.chance(0.5);
    if (sendFirst && rd.messages.length > 0) this.sendAll(rd.messages);
    if (this.opts.crashMidReady && this.rng.chance(this.opts.crashMidReady)) {
      this.trace(`CRASH ${id} in the middle of a Ready (nothing of it persisted${sendFirst ? ', messages sent' : ''})`);
      this.stats.crashes++;
      n.raw = undefined;
      return;
    }
    if (this.opts.asyncPersist) {
      // The disk write takes a while; meanwhile the member keeps receiving and stepping messages.
      n.pending = { rd, at: this.now + 1 + this.rng.int(this.opts.maxDelay), sent: sendFirst };
      return;
    }
    this.finishReady(n, rd, sendFirst);
  }

  private finishReady(n: SimNode, rd: Ready, sendFirst: boolean): void {
    const raw = n.raw!;
    const id = n.id;
    // 1. persist: snapshot, entries, hard state
    if (rd.snapshot) {
      const s = rd.snapshot;
      const known = this.committedTerm[s.metadata.index];
      if (known !== undefined && known !== s.metadata.term) this.fail(`snapshot at ${s.metadata.index} has term ${s.metadata.term}, committed term ${known}`);
      n.storage.applySnapshot(s);
      this.trace(`${id} persisted snapshot @${s.metadata.index}`);
    }
    if (rd.entries.length > 0) this.persistEntries(n, rd.entries);
    if (rd.hardState) {
      const hs = rd.hardState;
      const prev = n.storage.initialState().hardState;
      if (hs.term < prev.term) this.fail(`node ${id} term went back ${prev.term} -> ${hs.term}`);
      if (hs.term === prev.term && prev.vote !== NONE && hs.vote !== prev.vote) this.fail(`node ${id} changed its vote in term ${hs.term}`);
      n.storage.setHardState(hs);
      this.recordCommit(n, hs.commit);
    }
    // 2. send
    if (!sendFirst && rd.messages.length > 0) this.sendAll(rd.messages);
    // 3. apply
    if (rd.snapshot) {
      const s = rd.snapshot;
      const h = fromU32(s.data);
      const known = this.appliedHash[s.metadata.index];
      if (known !== undefined && known !== h) this.fail(`snapshot state at ${s.metadata.index} differs from applied state`);
      n.app = { applied: s.metadata.index, hash: h, confState: s.metadata.confState };
    }
    for (const e of rd.committedEntries) this.apply(n, e);
    for (const rs of rd.readStates) {
      const ctx = dec.decode(rs.requestCtx);
      const want = this.pendingReads.get(ctx);
      if (!want) this.fail(`unknown read ${ctx}`);
      if (rs.index < want.minIndex) this.fail(`read ${ctx} got index ${rs.index}, but ${want.minIndex} was committed before it started`);
      this.stats.readsServed++;
      this.readResults.set(ctx, rs.index);
      this.trace(`${id} read ${ctx} -> ${rs.index}`);
    }
    raw.advance(rd);
  }

  private persistEntries(n: SimNode, ents: Entry[]): void {
    const st = n.storage;
    let prevTerm: number | undefined;
    const i0 = ents[0].index - 1;
    if (i0 >= st.firstIndex() - 1 && i0 <= st.lastIndex()) prevTerm = st.term(i0);
    for (const e of ents) {
      const key = `${e.index}:${e.term}`;
      const data = dec.decode(e.data);
      const f = this.entryFacts.get(key);
      if (f === undefined) {
        if (prevTerm !== undefined) this.entryFacts.set(key, { data, prevTerm });
      } else {
        if (f.data !== data) this.fail(`log matching: entry ${key} has data '${data}' on ${n.id}, '${f.data}' elsewhere`);
        if (prevTerm !== undefined && f.prevTerm !== prevTerm) this.fail(`log matching: entry ${key} follows term ${prevTerm} on ${n.id}, ${f.prevTerm} elsewhere`);
      }
      // A stale leader may write anything where it never had the committed entry; but an entry a
      // member holds that is committed must never be replaced.
      const ct = this.committedTerm[e.index];
      if (ct !== undefined && ct !== e.term && e.index >= st.firstIndex() && e.index <= st.lastIndex() && st.term(e.index) === ct) {
        this.fail(`committed entry ${e.index} (term ${ct}) overwritten by term ${e.term} on ${n.id}`);
      }
      prevTerm = e.term;
    }
    st.append(ents);
    this.trace(`${n.id} persisted ${ents.length} entries [${ents[0].index}..${ents[ents.length - 1].index}]`);
  }

  private recordCommit(n: SimNode, commit: number): void {
    const st = n.storage;
    if (commit > st.lastIndex()) this.fail(`node ${n.id} commit ${commit} beyond its persisted log ${st.lastIndex()}`);
    for (let i = Math.max(n.persistedCommit + 1, st.firstIndex()); i <= commit; i++) {
      const t = st.term(i);
      const ct = this.committedTerm[i];
      if (ct === undefined) this.committedTerm[i] = t;
      else if (ct !== t) this.fail(`index ${i} committed with term ${t} on ${n.id}, with term ${ct} elsewhere`);
    }
    if (commit > n.persistedCommit) n.persistedCommit = commit;
    if (commit > this.maxCommitted) this.maxCommitted = commit;
  }

  private checkNewLeader(n: SimNode): void {
    const raw = n.raw!;
    const term = raw.raft.term;
    this.stats.elections++;
    const other = this.leaderOfTerm.get(term);
    if (other !== undefined && other !== n.id) this.fail(`two leaders in term ${term}: ${other} and ${n.id}`);
    this.leaderOfTerm.set(term, n.id);
    // Leader completeness: the new leader's log holds every entry committed so far.
    const log = raw.raft.raftLog;
    if (log.lastIndex() < this.maxCommitted) this.fail(`leader ${n.id} (term ${term}) lacks committed entries: last ${log.lastIndex()} < ${this.maxCommitted}`);
    for (let i = Math.max(1, log.firstIndex()); i <= this.maxCommitted; i++) {
      const ct = this.committedTerm[i];
      if (ct !== undefined && log.zeroTermOnErr(i) !== ct) this.fail(`leader ${n.id} (term ${term}) has term ${log.zeroTermOnErr(i)} at committed index ${i} (committed term ${ct})`);
    }
  }

  private apply(n: SimNode, e: Entry): void {
    if (e.index !== n.app.applied + 1) this.fail(`node ${n.id} applies ${e.index} after ${n.app.applied}`);
    const ct = this.committedTerm[e.index];
    if (ct !== undefined && ct !== e.term) this.fail(`node ${n.id} applies ${e.index}/${e.term} but committed term is ${ct}`);
    n.app.hash = hashStep(n.app.hash, e);
    n.app.applied = e.index;
    const known = this.appliedHash[e.index];
    if (known === undefined) this.appliedHash[e.index] = n.app.hash;
    else if (known !== n.app.hash) this.fail(`node ${n.id} applied a different entry (or history) at index ${e.index}`);
    if (e.type === EntryType.ConfChange) {
      const cc = decodeConfChange(e.data);
      n.app.confState = n.raw!.applyConfChange(cc);
      if (e.index > this.confIndex) {
        this.confIndex = e.index;
        this.conf = n.app.confState;
        this.trace(`CONF @${e.index} voters=[${this.conf.voters.join(',')}] learners=[${this.conf.learners.join(',')}]`);
        // A removed member shuts itself down once its removal is applied (here: by anyone).
        if (cc.type === ConfChangeType.RemoveNode && !this.retired.has(cc.nodeId)) this.toRetire.push(cc.nodeId);
      }
    } else if (e.data.length > 0) {
      const p = dec.decode(e.data);
      const at = this.appliedProposals.get(p);
      if (at !== undefined && at !== e.index) {
        // A duplicated forwarded proposal may legitimately be appended twice; record the first.
      } else this.appliedProposals.set(p, e.index);
    }
  }
}

/** What one seeded schedule did (for the CLI and failure reports). */
export interface ScheduleResult {
  seed: number;
  nodes: number;
  options: SimOptions;
  stats: Cluster['stats'];
  leaderTicks: number;
}

/** Draws the run's knobs from its seed. */
export function optionsFor(seed: number, nodes: number, trace?: (s: string) => void): SimOptions {
  const r = new Rng(seed);
  return {
    nodes,
    seed,
    preVote: r.chance(0.5),
    checkQuorum: r.chance(0.5),
    electionTick: 10,
    heartbeatTick: 1 + r.int(3),
    maxSizePerMsg: r.chance(0.5) ? 64 : 1024 * 1024,
    maxInflightMsgs: 1 + r.int(8),
    disableProposalForwarding: r.chance(0.2),
    dropRate: r.chance(0.3) ? 0 : r.next() * 0.2,
    dupRate: r.chance(0.5) ? 0 : r.next() * 0.1,
    maxDelay: 1 + r.int(30),
    crashMidReady: r.chance(0.5) ? 0 : 0.004,
    asyncPersist: r.chance(0.5),
    trace,
  };
}

/**
 * Runs one seeded schedule: `steps` ticks of random faults and workload, then heal everything and
 * check liveness (a leader within a bound, and a proposal commits everywhere). Throws InvariantError.
 */
export function runSchedule(seed: number, nodes: number, steps: number, trace?: (s: string) => void): ScheduleResult {
  const opts = optionsFor(seed, nodes, trace);
  const c = new Cluster(opts);
  const r = new Rng(seed * 31 + 7);
  const fault = r.next(); // how turbulent this run is
  const membership = nodes >= 3 && r.chance(0.3); // some runs also change the membership
  for (let t = 0; t < steps; t++) {
    const alive = c.alive();
    if (alive.length > 0 && r.chance(0.4)) c.propose(r.pick(alive));
    if (alive.length > 0 && r.chance(0.1)) c.readIndex(r.pick(alive));
    if (r.chance(0.05 * fault) && nodes > 1) {
      const shuffled = [...c.ids].sort(() => r.next() - 0.5);
      const cut = 1 + r.int(nodes - 1);
      c.partition([shuffled.slice(0, cut), shuffled.slice(cut)]);
    }
    if (r.chance(0.06)) c.heal();
    if (r.chance(0.03 * fault) && alive.length > 0) c.crash(r.pick(alive));
    const down = c.ids.filter((id) => !alive.includes(id));
    if (down.length > 0 && r.chance(0.15)) c.restart(r.pick(down));
    if (r.chance(0.04) && alive.length > 0) c.snapshotAndCompact(r.pick(alive), r.int(4));
    if (r.chance(0.03) && nodes > 1) {
      const l = c.leader();
      if (l !== undefined) c.raw(l).transferLeader(r.pick(c.ids.filter((x) => x !== l)));
    }
    if (membership && r.chance(0.04)) changeMembership(c, r, nodes);
    c.runTicks(1);
  }
  const leaderTicks = checkLiveness(c);
  return { seed, nodes, options: opts, stats: c.stats, leaderTicks };
}

/**
 * One random single-member change on the leader: promote a learner, add a fresh member (as a
 * learner or a voter; ids are never reused), or remove a voter (possibly the leader itself).
 */
function changeMembership(c: Cluster, r: Rng, nodes: number): void {
  const l = c.leader();
  if (l === undefined) return;
  const { voters, learners } = c.conf;
  c.stats.confChanges++;
  if (learners.length > 0 && r.chance(0.7)) {
    c.proposeConfChange(l, ConfChangeType.AddNode, r.pick(learners));
  } else if (voters.length < nodes && r.chance(0.6)) {
    const fresh = BigInt(c.ids.length + 1);
    if (c.proposeConfChange(l, r.chance(0.5) ? ConfChangeType.AddLearnerNode : ConfChangeType.AddNode, fresh)) c.addNode(fresh);
  } else if (voters.length > Math.max(2, nodes - 2)) {
    c.proposeConfChange(l, ConfChangeType.RemoveNode, r.pick(voters));
  }
}

/**
 * Heals everything (no partitions, no losses, every member up) and checks liveness: a leader all
 * agree on within a bound, and a proposal applied on every member. Returns the ticks to a leader.
 */
export function checkLiveness(c: Cluster): number {
  // Heal: no partitions, no losses, everyone up. A leader must emerge and a proposal must commit.
  c.heal();
  c.opts.dropRate = 0;
  c.opts.dupRate = 0;
  c.opts.crashMidReady = 0;
  for (const id of c.ids) c.restart(id);
  const opts = c.opts;
  const members = () => c.aliveMembers();
  const before = c.now;
  const bound = 40 * opts.electionTick;
  if (!c.runUntil(() => c.stableLeader() !== undefined, bound)) {
    throw new InvariantError(`liveness: no stable leader within ${bound} ticks after healing\n${c.describe()}`);
  }
  const leaderTicks = Math.round((c.now - before) / TICK);
  // A proposal may still be lost to a leadership change (e.g. a transfer that was under way): retry
  // every few election timeouts, as a client would.
  const payloads: string[] = [];
  let lastTry = -Infinity;
  const committed = c.runUntil(() => {
    for (const p of payloads) {
      const at = c.appliedProposals.get(p);
      if (at !== undefined && members().every((id) => c.nodes.get(id)!.app.applied >= at)) return true;
    }
    if (c.now - lastTry >= 3 * opts.electionTick * TICK) {
      const l = c.stableLeader();
      const p = l === undefined ? undefined : c.propose(l);
      if (p !== undefined) {
        payloads.push(p);
        lastTry = c.now;
      }
    }
    return false;
  }, bound);
  if (!committed) throw new InvariantError(`liveness: no proposal (${payloads.join(',')}) applied on every member within ${bound} ticks\n${c.describe()}`);
  return leaderTicks;
}

/** The command that replays one schedule with a trace. */
export function replayCommand(seed: number, nodes: number, steps: number): string {
  return `node dist/test/unit/raft/sim-cli.js --seed ${seed} --nodes ${nodes} --steps ${steps} --verbose`;
}

