// The svc client: KV, Watch, Lease, Cluster, Maintenance and Auth over the reference's gRPC API, with
// failover across endpoints.
//
// Failover policy (which calls go to the next endpoint, and when):
// - Reads and other idempotent calls (range, read-only txn, member list, lease time-to-live/list, alarm
//   list, auth reads) move on after any UNAVAILABLE error and after "no leader", "not leader",
//   "leader changed", "request timed out", "too many requests".
// - Mutations (put, delete, write txn, compact, lease grant/revoke, member changes, alarm disarm, auth
//   writes) move on only when the error proves the request was not applied: the transport never had a
//   connection to send it on ("No connection established", connection refused), or the server refused it
//   before proposing ("etcdserver: no leader", "not leader", "not capable", "too many requests",
//   "server stopped"). A connection lost after sending is reported to the caller, since the write may
//   have been applied.
// - Every round through all endpoints is followed by a short pause; the whole call is bounded by
//   commandTimeoutMs. Calls addressed to one endpoint (status, defragment, hashKV, snapshot) never fail over.
// - Streams (watch, keep-alive) are reopened on the next endpoint when they break with UNAVAILABLE; a
//   watch resumes after the last revision it delivered.
import * as grpc from '@grpc/grpc-js';
import { ClientError, Status, isConnCanceled, provablyNotApplied, retryableRead, toClientError, waitedForTransport } from './errors.js';
import { Connection, type MethodOf, type ServiceFq, type ServiceName, type TlsOptions } from './connection.js';
import type { EncodableRequestOf, MessageName, SERVICES } from '../wire/index.js';
import { deleteRequest, prefixEnd, putRequest, rangeEndFor, rangeRequest, toBuf, txnReadOnly, txnRequest } from './keys.js';
import type { StreamSource } from './stream.js';
import { Watcher } from './watch.js';
import { KeepAlive } from './keepalive.js';
import { verifiedSnapshot } from './snapshot.js';
import type * as T from './types.js';

export { isConnCanceled };

/** Options of Client.connect. */
export interface ClientOptions {
  /** "host:port", "http://host:port" or "https://host:port"; at least one. */
  endpoints: string[];
  /** How long a blocking connect waits for a connection. Default 5000. */
  dialTimeoutMs?: number;
  /**
   * The reference's WithBlock. false (default): connect returns at once and endpoints are resolved in the
   * background; calls wait (up to commandTimeoutMs) for a usable endpoint. true: connect resolves only
   * once a connection is up, and rejects after dialTimeoutMs ("context deadline exceeded").
   */
  waitForConnection?: boolean;
  tls?: TlsOptions;
  /** Authenticate as this user; the token goes into every call's "token" metadata. */
  auth?: { username: string; password: string };
  /** Deadline of each unary call, failover included. Default 5000. */
  commandTimeoutMs?: number;
}

type Kind = 'read' | 'write';

/** What a method is sent: its request message, as the encoder takes it. */
type RequestFor<S extends ServiceName, M extends MethodOf<S>> = EncodableRequestOf<ServiceFq[S], M>;
/** What a method answers: its response message as decoded (T.Answer: with its header). */
type ReplyFor<S extends ServiceName, M extends MethodOf<S>> = (typeof SERVICES)[ServiceFq[S]][M] extends { response: infer R extends MessageName } ? T.Answer<R> : never;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client of an svc (or reference) cluster. Create with `Client.connect`. */
export class Client implements StreamSource {
  readonly endpoints: readonly string[];
  private readonly opts: ClientOptions;
  private readonly conns: Connection[];
  private readonly extra = new Map<string, Connection>();
  private current = 0;
  private token?: string;
  private authing?: Promise<void>;
  private readonly streams = new Set<Watcher | KeepAlive>();
  private isClosed = false;

  private constructor(opts: ClientOptions) {
    if (opts.endpoints.length === 0) throw new ClientError(Status.INVALID_ARGUMENT, 'no endpoints given');
    this.opts = opts;
    this.endpoints = [...opts.endpoints];
    this.conns = this.endpoints.map((ep) => new Connection(ep, opts.tls));
  }

  /** Creates a client; see ClientOptions.waitForConnection for when it resolves. */
  static async connect(opts: ClientOptions): Promise<Client> {
    const c = new Client(opts);
    if (opts.waitForConnection) {
      const deadline = new Date(Date.now() + (opts.dialTimeoutMs ?? 5000));
      try {
        const first = await Promise.any(c.conns.map((conn, i) => conn.waitForReady(deadline).then(() => i)));
        c.current = first;
      } catch {
        c.close();
        throw new ClientError(Status.DEADLINE_EXCEEDED, 'context deadline exceeded');
      }
    } else {
      for (const conn of c.conns) conn.kick();
    }
    if (opts.auth) {
      try {
        await c.login();
      } catch (e) {
        c.close();
        throw e;
      }
    }
    return c;
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** The endpoint calls currently go to. */
  get activeEndpoint(): string {
    return this.endpoints[this.current];
  }

  // ------------------------------------------------------------------------------------------ plumbing

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.token) md.set('token', this.token);
    return md;
  }

  private checkOpen(): void {
    if (this.isClosed) throw new ClientError(Status.CANCELLED, 'grpc: the client connection is closing');
  }

  private unaryOn<S extends ServiceName, M extends MethodOf<S>>(conn: Connection, service: S, method: M, req: RequestFor<S, M>, deadline: number): Promise<ReplyFor<S, M>> {
    return new Promise((resolve, reject) => {
      const stub = conn.stub(service);
      const fn = stub[method] as (req: RequestFor<S, M>, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: ReplyFor<S, M>) => void) => void;
      fn.call(stub, req, this.metadata(), { deadline: new Date(deadline) }, (err, res) => (err ? reject(toClientError(err, conn.endpoint)) : resolve(res)));
    });
  }

  /** A unary call with failover (see the policy at the top of this file). */
  private async call<S extends ServiceName, M extends MethodOf<S>>(service: S, method: M, req: RequestFor<S, M>, kind: Kind): Promise<ReplyFor<S, M>> {
    this.checkOpen();
    if (this.authing) await this.authing;
    const deadline = Date.now() + (this.opts.commandTimeoutMs ?? 5000);
    let reauthed = false;
    for (let attempt = 1; ; attempt++) {
      this.preferReady();
      const conn = this.conns[this.current];
      try {
        return await this.unaryOn(conn, service, method, req, conn.isReady() ? deadline : this.attemptDeadline(deadline));
      } catch (e) {
        const err = toClientError(e, conn.endpoint);
        if (this.isClosed) throw new ClientError(Status.CANCELLED, 'grpc: the client connection is closing', { cause: err });
        if (this.opts.auth && !reauthed && err.message === 'etcdserver: invalid auth token') {
          reauthed = true;
          await this.login();
          continue;
        }
        // a deadline spent waiting for a transport: this channel's connection attempt is stuck, start afresh
        if (waitedForTransport(err)) conn.reset();
        const again = kind === 'read' ? retryableRead(err) : provablyNotApplied(err);
        if (!again || Date.now() >= deadline) throw err;
        this.failover();
        if (attempt % this.conns.length === 0) await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
      }
    }
  }

  /**
   * Moves off an endpoint whose channel has no transport when another one has: a restarted member's old address
   * may take a connect timeout to fail, and a call queued there would spend the whole deadline waiting.
   */
  private preferReady(): void {
    if (this.conns[this.current].isReady()) return;
    const ready = this.conns.findIndex((c) => c.isReady());
    if (ready >= 0) this.current = ready;
  }

  /** The deadline of one attempt on a channel still connecting: a share of what is left, so others get a turn. */
  private attemptDeadline(deadline: number): number {
    const left = deadline - Date.now();
    return Math.min(deadline, Date.now() + Math.max(500, Math.floor(left / this.conns.length)));
  }

  /** Each endpoint's channel state ("<endpoint> READY"), for diagnostics of a call that failed everywhere. */
  endpointStates(): string[] {
    return this.conns.map((c) => `${c.endpoint} ${c.state()}`);
  }

  /** A connection for calls addressed to one endpoint (any endpoint, listed or not). */
  private connFor(endpoint?: string): Connection {
    this.checkOpen();
    if (endpoint === undefined) return this.conns[this.current];
    const i = this.endpoints.indexOf(endpoint);
    if (i >= 0) return this.conns[i];
    let c = this.extra.get(endpoint);
    if (!c) {
      c = new Connection(endpoint, this.opts.tls);
      this.extra.set(endpoint, c);
    }
    return c;
  }

  /** A unary call on one endpoint, no failover. */
  private async callOn<S extends ServiceName, M extends MethodOf<S>>(endpoint: string | undefined, service: S, method: M, req: RequestFor<S, M>): Promise<ReplyFor<S, M>> {
    if (this.authing) await this.authing;
    const conn = this.connFor(endpoint);
    try {
      return await this.unaryOn(conn, service, method, req, Date.now() + (this.opts.commandTimeoutMs ?? 5000));
    } catch (e) {
      if (this.isClosed) throw new ClientError(Status.CANCELLED, 'grpc: the client connection is closing', { cause: e });
      throw e;
    }
  }

  /** StreamSource: moves calls to the next endpoint. */
  failover(): void {
    this.current = (this.current + 1) % this.conns.length;
  }

  /** StreamSource: a bidirectional stream on the current endpoint (waits up to the dial timeout for one). */
  async openDuplex(service: 'Watch' | 'Lease', method: string): Promise<grpc.ClientDuplexStream<unknown, unknown>> {
    this.checkOpen();
    if (this.authing) await this.authing;
    const conn = this.conns[this.current];
    const stub = conn.stub(service);
    const fn = stub[method] as (md: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientDuplexStream<unknown, unknown>;
    return fn.call(stub, this.metadata(), {});
  }

  private async login(): Promise<void> {
    const auth = this.opts.auth!;
    this.authing = (async () => {
      this.token = undefined;
      const deadline = Date.now() + (this.opts.commandTimeoutMs ?? 5000);
      for (let attempt = 1; ; attempt++) {
        const conn = this.conns[this.current];
        try {
          const r = await this.unaryOn(conn, 'Auth', 'Authenticate', { name: auth.username, password: auth.password }, deadline);
          this.token = r.token || undefined;
          return;
        } catch (e) {
          const err = toClientError(e, conn.endpoint);
          if (!retryableRead(err) || Date.now() >= deadline) throw err;
          this.failover();
          if (attempt % this.conns.length === 0) await sleep(200);
        }
      }
    })();
    try {
      await this.authing;
    } finally {
      this.authing = undefined;
    }
  }

  // ------------------------------------------------------------------------------------------ KV

  /** Reads one key, or a range with opts.prefix / fromKey / rangeEnd. */
  get(key: T.Bytes, opts: T.GetOptions = {}): Promise<T.RangeResponse> {
    return this.call('KV', 'Range', rangeRequest(key, opts), 'read');
  }

  /** Writes key = value. */
  put(key: T.Bytes, value: T.Bytes, opts: T.PutOptions = {}): Promise<T.PutResponse> {
    return this.call('KV', 'Put', putRequest(key, value, opts), 'write');
  }

  /** Deletes one key, or a range with opts.prefix / fromKey / rangeEnd. */
  delete(key: T.Bytes, opts: T.DeleteOptions = {}): Promise<T.DeleteRangeResponse> {
    return this.call('KV', 'DeleteRange', deleteRequest(key, opts), 'write');
  }

  /** Runs a transaction: if every compare holds, the success ops, else the failure ops. */
  txn(spec: T.TxnSpec): Promise<T.TxnResponse> {
    // The nested answers carry their header as the outer one does (svc and the reference fill each).
    return this.call('KV', 'Txn', txnRequest(spec), txnReadOnly(spec) ? 'read' : 'write') as Promise<T.TxnResponse>;
  }

  /** Compacts the key history up to `revision`; `physical` waits until it is removed from the backend. */
  compact(revision: number | string, physical = false): Promise<T.HeaderResponse> {
    return this.call('KV', 'Compact', { revision: String(revision), physical }, 'write');
  }

  // ------------------------------------------------------------------------------------------ Watch

  /** Watches a key (or a range); iterate the result or listen for 'response'. */
  watch(key: T.Bytes, opts: T.WatchOptions = {}): Watcher {
    this.checkOpen();
    let k = toBuf(key);
    if (k.length === 0 && (opts.prefix || opts.fromKey)) k = Buffer.from([0]);
    const req = {
      key: k,
      range_end: rangeEndFor(key, opts),
      start_revision: String(opts.startRevision ?? 0),
      progress_notify: !!opts.progressNotify,
      filters: opts.filters ?? [],
      prev_kv: !!opts.prevKv,
    };
    const w = new Watcher(this, req);
    this.streams.add(w);
    w.once('end', () => this.streams.delete(w));
    return w;
  }

  // ------------------------------------------------------------------------------------------ Lease

  /** Grants a lease of `ttl` seconds (id 0: the server picks one). */
  grant(ttl: number, id: string | bigint | number = 0): Promise<T.LeaseGrantResponse> {
    return this.call('Lease', 'LeaseGrant', { TTL: String(ttl), ID: String(id) }, 'write');
  }

  /** Revokes a lease, deleting its keys. */
  revoke(id: string | bigint | number): Promise<T.HeaderResponse> {
    return this.call('Lease', 'LeaseRevoke', { ID: String(id) }, 'write');
  }

  /** Renews a lease once; fails with NOT_FOUND when it no longer exists. */
  async keepAliveOnce(id: string | bigint | number): Promise<T.LeaseKeepAliveResponse> {
    this.checkOpen();
    const deadline = Date.now() + (this.opts.commandTimeoutMs ?? 5000);
    for (let attempt = 1; ; attempt++) {
      const stream = await this.openDuplex('Lease', 'LeaseKeepAlive');
      try {
        const r = await new Promise<T.LeaseKeepAliveResponse>((resolve, reject) => {
          const t = setTimeout(() => reject(new ClientError(Status.DEADLINE_EXCEEDED, 'context deadline exceeded')), Math.max(1, deadline - Date.now()));
          stream.once('data', (d: T.LeaseKeepAliveResponse) => (clearTimeout(t), resolve(d)));
          stream.once('error', (e) => (clearTimeout(t), reject(toClientError(e, this.activeEndpoint))));
          stream.write({ ID: String(id) });
        });
        if (Number(r.TTL) <= 0) throw new ClientError(Status.NOT_FOUND, 'etcdserver: requested lease not found');
        return r;
      } catch (e) {
        const err = toClientError(e);
        if (this.isClosed) throw new ClientError(Status.CANCELLED, 'grpc: the client connection is closing');
        if (!retryableRead(err) || Date.now() >= deadline) throw err;
        this.failover();
        if (attempt % this.conns.length === 0) await sleep(200);
      } finally {
        stream.end();
        stream.cancel();
      }
    }
  }

  /** Keeps a lease alive until cancelled, the lease expires, or the client closes. */
  keepAlive(id: string | bigint | number): KeepAlive {
    this.checkOpen();
    const k = new KeepAlive(this, String(id));
    this.streams.add(k);
    k.once('end', () => this.streams.delete(k));
    return k;
  }

  /** A lease's granted and remaining TTL (TTL -1: it does not exist), with its keys when asked. */
  timeToLive(id: string | bigint | number, opts: { keys?: boolean } = {}): Promise<T.LeaseTimeToLiveResponse> {
    return this.call('Lease', 'LeaseTimeToLive', { ID: String(id), keys: !!opts.keys }, 'read');
  }

  /** Every live lease. */
  leases(): Promise<T.LeaseLeasesResponse> {
    return this.call('Lease', 'LeaseLeases', {}, 'read');
  }

  // ------------------------------------------------------------------------------------------ Cluster

  /** The members (linearizable: answered after a read through consensus). */
  memberList(opts: { linearizable?: boolean } = {}): Promise<T.MemberListResponse> {
    return this.call('Cluster', 'MemberList', { linearizable: opts.linearizable ?? false }, 'read');
  }

  /** Adds a member (a learner with opts.isLearner). */
  async memberAdd(peerURLs: string[], opts: { isLearner?: boolean } = {}): Promise<T.MemberAddResponse> {
    const r = await this.call('Cluster', 'MemberAdd', { peerURLs, isLearner: !!opts.isLearner }, 'write');
    if (!r.member) throw new ClientError(Status.UNKNOWN, 'the MemberAdd answer names no member', { endpoint: this.activeEndpoint });
    return { ...r, member: r.member };
  }

  /** Removes a member by id (decimal string, bigint, or number). */
  memberRemove(id: string | bigint): Promise<T.MembersResponse> {
    return this.call('Cluster', 'MemberRemove', { ID: String(id) }, 'write');
  }

  /** Changes a member's peer URLs. */
  memberUpdate(id: string | bigint, peerURLs: string[]): Promise<T.MembersResponse> {
    return this.call('Cluster', 'MemberUpdate', { ID: String(id), peerURLs }, 'write');
  }

  /** Promotes a learner to a voting member. */
  memberPromote(id: string | bigint): Promise<T.MembersResponse> {
    return this.call('Cluster', 'MemberPromote', { ID: String(id) }, 'write');
  }

  // ------------------------------------------------------------------------------------------ Maintenance

  /** Status of one member (default: the active endpoint). */
  status(endpoint?: string): Promise<T.StatusResponse> {
    return this.callOn(endpoint, 'Maintenance', 'Status', {});
  }

  /** Raised alarms. */
  alarmList(): Promise<T.AlarmResponse> {
    return this.call('Maintenance', 'Alarm', { action: 'GET', memberID: '0', alarm: 'NONE' }, 'read');
  }

  /** Disarms alarms: the given ones, or (no argument) every raised alarm. */
  async alarmDisarm(alarm?: T.AlarmMember): Promise<T.AlarmResponse> {
    const targets = alarm ? [alarm] : (await this.alarmList()).alarms;
    let last: T.AlarmResponse = { header: undefined as unknown as T.ResponseHeader, alarms: [] };
    const disarmed: T.AlarmMember[] = [];
    for (const a of targets) {
      last = await this.call('Maintenance', 'Alarm', { action: 'DEACTIVATE', memberID: a.memberID, alarm: a.alarm }, 'write');
      disarmed.push(...last.alarms);
    }
    return { header: last.header, alarms: disarmed };
  }

  /** Defragments one member's backend. */
  defragment(endpoint?: string): Promise<T.HeaderResponse> {
    return this.callOn(endpoint, 'Maintenance', 'Defragment', {});
  }

  /** Hash of one member's key history up to `revision` (0: the newest). */
  hashKV(endpoint: string | undefined, revision: number | string = 0): Promise<T.HashKVResponse> {
    return this.callOn(endpoint, 'Maintenance', 'HashKV', { revision: String(revision) });
  }

  /** Hash of one member's whole backend. */
  hash(endpoint?: string): Promise<{ header: T.ResponseHeader; hash: number }> {
    return this.callOn(endpoint, 'Maintenance', 'Hash', {});
  }

  /** The raw snapshot stream of one member: database chunks, then its 32-byte sha256. */
  async *snapshotRaw(endpoint?: string): AsyncGenerator<Buffer> {
    if (this.authing) await this.authing;
    const conn = this.connFor(endpoint);
    const stub = conn.stub('Maintenance');
    const fn = stub.Snapshot as (req: unknown, md: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientReadableStream<{ blob: Buffer }>;
    const stream = fn.call(stub, {}, this.metadata(), {});
    try {
      for await (const msg of stream) yield msg.blob;
    } catch (e) {
      throw toClientError(e, conn.endpoint);
    } finally {
      stream.cancel();
    }
  }

  /** One member's database, verified against the trailing sha256 (a DATA_LOSS ClientError on mismatch). */
  snapshot(endpoint?: string): AsyncGenerator<Buffer> {
    return verifiedSnapshot(this.snapshotRaw(endpoint));
  }

  /** Asks the leader (the active endpoint must be it) to hand leadership to `targetId`. */
  moveLeader(targetId: string | bigint, endpoint?: string): Promise<T.HeaderResponse> {
    return this.callOn(endpoint, 'Maintenance', 'MoveLeader', { targetID: String(targetId) });
  }

  // ------------------------------------------------------------------------------------------ Auth

  authEnable(): Promise<T.HeaderResponse> {
    return this.call('Auth', 'AuthEnable', {}, 'write');
  }
  authDisable(): Promise<T.HeaderResponse> {
    return this.call('Auth', 'AuthDisable', {}, 'write');
  }
  authStatus(): Promise<T.AuthStatusResponse> {
    return this.call('Auth', 'AuthStatus', {}, 'read');
  }
  /** Authenticates and returns the token (Client.connect with `auth` does this itself). */
  async authenticate(username: string, password: string): Promise<string> {
    const r = await this.call('Auth', 'Authenticate', { name: username, password }, 'read');
    return r.token;
  }
  userAdd(name: string, password: string, opts: { noPassword?: boolean } = {}): Promise<T.HeaderResponse> {
    return this.call('Auth', 'UserAdd', { name, password, options: { no_password: !!opts.noPassword } }, 'write');
  }
  userGet(name: string): Promise<T.AuthUserGetResponse> {
    return this.call('Auth', 'UserGet', { name }, 'read');
  }
  userList(): Promise<T.AuthUserListResponse> {
    return this.call('Auth', 'UserList', {}, 'read');
  }
  userDelete(name: string): Promise<T.HeaderResponse> {
    return this.call('Auth', 'UserDelete', { name }, 'write');
  }
  userChangePassword(name: string, password: string): Promise<T.HeaderResponse> {
    return this.call('Auth', 'UserChangePassword', { name, password }, 'write');
  }
  userGrantRole(user: string, role: string): Promise<T.HeaderResponse> {
    return this.call('Auth', 'UserGrantRole', { user, role }, 'write');
  }
  userRevokeRole(name: string, role: string): Promise<T.HeaderResponse> {
    return this.call('Auth', 'UserRevokeRole', { name, role }, 'write');
  }
  roleAdd(name: string): Promise<T.HeaderResponse> {
    return this.call('Auth', 'RoleAdd', { name }, 'write');
  }
  roleGet(role: string): Promise<T.AuthRoleGetResponse> {
    return this.call('Auth', 'RoleGet', { role }, 'read');
  }
  roleList(): Promise<T.AuthRoleListResponse> {
    return this.call('Auth', 'RoleList', {}, 'read');
  }
  roleDelete(role: string): Promise<T.HeaderResponse> {
    return this.call('Auth', 'RoleDelete', { role }, 'write');
  }
  /** Grants `permType` on [key, rangeEnd) (rangeEnd empty: the key alone) to a role. */
  roleGrantPermission(name: string, permType: T.Permission['permType'], key: T.Bytes, rangeEnd: T.Bytes = ''): Promise<T.HeaderResponse> {
    return this.call('Auth', 'RoleGrantPermission', { name, perm: { permType, key: toBuf(key), range_end: toBuf(rangeEnd) } }, 'write');
  }
  roleRevokePermission(role: string, key: T.Bytes, rangeEnd: T.Bytes = ''): Promise<T.HeaderResponse> {
    return this.call('Auth', 'RoleRevokePermission', { role, key: toBuf(key), range_end: toBuf(rangeEnd) }, 'write');
  }

  // ------------------------------------------------------------------------------------------ lifecycle

  /** Closes every connection; pending and later calls fail with status Canceled (see isConnCanceled). */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const s of [...this.streams]) {
      if (s instanceof Watcher) s.close();
      else s.cancel();
    }
    for (const c of this.conns) c.close();
    for (const c of this.extra.values()) c.close();
  }
}

export { prefixEnd };
