// The permission checks the services make when authentication is on.
import { Errors } from '../../core/errors.js';
import type { AuthStore } from '../../auth/store.js';
import type { TokenInfo } from '../../auth/tokens.js';
import type { RequestOp, TxnRequest } from '../../core/requests.js';

/** What a call carries besides its message: the token of an authenticated client. */
export interface RequestMeta {
  token?: string;
  /** Aborted when the caller goes away (calls that wait: Campaign, Lock). */
  signal?: AbortSignal;
  /** The CommonName of the client's verified TLS certificate (gRPC with --client-cert-auth only). */
  certUser?: string;
}

const EMPTY = Buffer.alloc(0);

export class AuthGate {
  /** `auth` is read at each call: the store is rebuilt when a snapshot replaces the db. */
  constructor(private readonly auth: () => AuthStore) {}

  private get store(): AuthStore {
    return this.auth();
  }

  /**
   * The calling user, or undefined when authentication is off. Throws when it is on and the token is bad. Without
   * a token, the user named by the client certificate's CommonName, as the reference does with --client-cert-auth.
   */
  user(meta: RequestMeta | undefined): string | undefined {
    return this.info(meta)?.username;
  }

  /** The calling user and the auth revision its token speaks for (a certificate's user: the current one). */
  private info(meta: RequestMeta | undefined): TokenInfo | undefined {
    if (!this.store.enabled) return undefined;
    if (meta?.token) return this.store.tokenInfo(meta.token);
    if (meta?.certUser) return { username: meta.certUser, revision: this.store.revision };
    throw Errors.userEmpty();
  }

  /**
   * The user for a check of keys. A token issued before the last change of users, roles or permissions (a JWT
   * carries its revision) is refused with the reference's "revision of auth store is old": its client
   * authenticates again and retries.
   */
  private keysUser(meta: RequestMeta | undefined): string | undefined {
    const info = this.info(meta);
    if (info && info.revision < this.store.revision) throw Errors.authOldRevision();
    return info?.username;
  }

  requireAdmin(meta: RequestMeta | undefined): void {
    const u = this.user(meta);
    if (u !== undefined && !this.store.isAdmin(u)) throw Errors.permissionDenied();
  }

  /** Admin, or `allowed(user)` for the calling user (the reference: a user reads itself and the roles it holds). */
  requireAdminOr(meta: RequestMeta | undefined, allowed: (user: string) => boolean): void {
    const u = this.user(meta);
    if (u !== undefined && !this.store.isAdmin(u) && !allowed(u)) throw Errors.permissionDenied();
  }

  /** May the caller read every one of these keys? (LeaseTimeToLive with keys, as the reference.) */
  requireEachKey(meta: RequestMeta | undefined, keys: readonly Uint8Array[]): void {
    const u = this.keysUser(meta);
    if (u === undefined) return;
    for (const k of keys) if (!this.store.isPermitted(u, Buffer.from(k), EMPTY, false)) throw Errors.permissionDenied();
  }

  requireKeys(meta: RequestMeta | undefined, key: Buffer, end: Buffer, write: boolean): void {
    const u = this.keysUser(meta);
    if (u !== undefined && !this.store.isPermitted(u, key, end, write)) throw Errors.permissionDenied();
  }

  requireTxn(meta: RequestMeta | undefined, t: TxnRequest): void {
    const u = this.keysUser(meta);
    if (u === undefined) return;
    const check = (key: Uint8Array, end: Uint8Array, write: boolean) => {
      if (!this.store.isPermitted(u, Buffer.from(key), Buffer.from(end), write)) throw Errors.permissionDenied();
    };
    const walk = (txn: TxnRequest) => {
      for (const c of txn.compare) check(c.key, c.rangeEnd, false);
      const op = (o: RequestOp) => {
        if ('range' in o) check(o.range.key, o.range.rangeEnd, false);
        else if ('put' in o) check(o.put.key, EMPTY, true);
        else if ('deleteRange' in o) check(o.deleteRange.key, o.deleteRange.rangeEnd, true);
        else walk(o.txn);
      };
      txn.success.forEach(op);
      txn.failure.forEach(op);
    };
    walk(t);
  }
}
