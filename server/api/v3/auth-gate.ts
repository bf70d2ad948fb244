// The permission checks the services make when authentication is on.
import { Errors } from '../../core/errors.js';
import type { AuthStore } from '../../auth/store.js';
import type { TokenInfo } from '../../auth/tokens.js';
import { checkTxnKeys } from '../../auth/txn-keys.js';
import type { RequestHeader, TxnRequest } from '../../core/requests.js';

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
   * What a proposal made for this caller carries (the reference's RequestHeader): the user and the auth revision
   * its token speaks for, checked again when the entry is applied. Empty ("", 0) when authentication is off or
   * the call names no user (the apply refuses it then, as the reference); a bad token is refused here.
   */
  header(meta: RequestMeta | undefined): RequestHeader {
    if (!this.store.enabled || (!meta?.token && !meta?.certUser)) return { username: '', authRevision: 0 };
    const info = this.info(meta)!;
    return { username: info.username, authRevision: info.revision };
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

  /**
   * May the caller read every one of these keys? (LeaseTimeToLive with keys, as the reference.) Every check of
   * keys is AuthStore.checkKeys: a token issued before the last change of users, roles or permissions (a JWT
   * carries its revision) is refused with the reference's "revision of auth store is old".
   */
  requireEachKey(meta: RequestMeta | undefined, keys: readonly Uint8Array[]): void {
    const info = this.info(meta);
    if (info) for (const k of keys) this.store.checkKeys(info, Buffer.from(k), EMPTY, false);
  }

  /** May the caller read (write: write) [key, end)? The keys are copied only when authentication is on. */
  requireKeys(meta: RequestMeta | undefined, key: Uint8Array, end: Uint8Array, write: boolean): void {
    const info = this.info(meta);
    if (info) this.store.checkKeys(info, Buffer.from(key), Buffer.from(end), write);
  }

  requireTxn(meta: RequestMeta | undefined, t: TxnRequest): void {
    const info = this.info(meta);
    if (info) checkTxnKeys(this.store, info, t);
  }
}
