// The Auth service's calls and the permission checks the other services make when authentication is on.
import type { SvcServer } from '../../core/server.js';
import { Errors } from '../../core/errors.js';
import { AuthStore, hashPassword, type AuthOp, type PermType } from '../../auth/store.js';
import type { RequestOp, TxnRequest } from '../../core/requests.js';
import type { Pb } from './convert.js';

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
  constructor(private readonly server: SvcServer) {}

  private get store(): AuthStore {
    return this.server.kv.auth;
  }

  /**
   * The calling user, or undefined when authentication is off. Throws when it is on and the token is bad. Without
   * a token, the user named by the client certificate's CommonName, as the reference does with --client-cert-auth.
   */
  user(meta: RequestMeta | undefined): string | undefined {
    if (!this.store.enabled) return undefined;
    if (meta?.token) return this.store.userOfToken(meta.token);
    if (meta?.certUser) return meta.certUser;
    throw Errors.userEmpty();
  }

  requireAdmin(meta: RequestMeta | undefined): void {
    const u = this.user(meta);
    if (u !== undefined && !this.store.isAdmin(u)) throw Errors.permissionDenied();
  }

  requireKeys(meta: RequestMeta | undefined, key: Buffer, end: Buffer, write: boolean): void {
    const u = this.user(meta);
    if (u !== undefined && !this.store.isPermitted(u, key, end, write)) throw Errors.permissionDenied();
  }

  requireTxn(meta: RequestMeta | undefined, t: TxnRequest): void {
    const u = this.user(meta);
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

/** The Auth service's unary calls, keyed by method name. */
export function authHandlers(server: SvcServer, header: () => Pb, gate: AuthGate): Record<string, (req: Pb, meta?: RequestMeta) => Promise<Pb>> {
  const store = () => server.kv.auth;
  const apply = async (op: AuthOp) => {
    await server.propose({ id: server.nextRequestId(), kind: 'auth', auth: op });
    return { header: header() };
  };
  const admin = (meta?: RequestMeta) => gate.requireAdmin(meta);
  return {
    AuthEnable: async (_req, meta) => {
      if (store().enabled) admin(meta);
      return apply({ op: 'enable' });
    },
    AuthDisable: async (_req, meta) => {
      admin(meta);
      return apply({ op: 'disable' });
    },
    AuthStatus: async () => {
      if (!server.capable('3.5')) throw Errors.unavailableUntil('AuthStatus', '3.5');
      return { header: header(), enabled: store().enabled, authRevision: store().revision };
    },
    Authenticate: async (req) => {
      await store().checkPassword(String(req.name ?? ''), String(req.password ?? ''));
      const token = AuthStore.newToken(server.appliedIndex + 1);
      await apply({ op: 'authenticate', name: String(req.name), token });
      return { header: header(), token };
    },
    UserAdd: async (req, meta) => {
      admin(meta);
      const noPassword = !!req.options?.no_password;
      if (!noPassword && String(req.password ?? '') === '' && !req.hashedPassword) throw Errors.authFailed();
      return apply({ op: 'userAdd', name: String(req.name ?? ''), password: noPassword ? '' : await hashPassword(String(req.password ?? ''), server.opts.bcryptCost), noPassword });
    },
    UserGet: async (req, meta) => {
      admin(meta);
      const u = store().user(String(req.name ?? ''));
      if (!u) throw Errors.userNotFound();
      return { header: header(), roles: u.roles };
    },
    UserList: async (_req, meta) => {
      admin(meta);
      return { header: header(), users: store().userNames() };
    },
    UserDelete: async (req, meta) => {
      admin(meta);
      return apply({ op: 'userDelete', name: String(req.name ?? '') });
    },
    UserChangePassword: async (req, meta) => {
      admin(meta);
      return apply({ op: 'userChangePassword', name: String(req.name ?? ''), password: await hashPassword(String(req.password ?? ''), server.opts.bcryptCost) });
    },
    UserGrantRole: async (req, meta) => {
      admin(meta);
      return apply({ op: 'userGrantRole', user: String(req.user ?? ''), role: String(req.role ?? '') });
    },
    UserRevokeRole: async (req, meta) => {
      admin(meta);
      return apply({ op: 'userRevokeRole', name: String(req.name ?? ''), role: String(req.role ?? '') });
    },
    RoleAdd: async (req, meta) => {
      admin(meta);
      return apply({ op: 'roleAdd', name: String(req.name ?? '') });
    },
    RoleGet: async (req, meta) => {
      admin(meta);
      const r = store().role(String(req.role ?? ''));
      if (!r) throw Errors.roleNotFound();
      return { header: header(), perm: r.perms.map((p) => ({ permType: p.permType, key: p.key, range_end: p.rangeEnd })) };
    },
    RoleList: async (_req, meta) => {
      admin(meta);
      return { header: header(), roles: store().roleNames() };
    },
    RoleDelete: async (req, meta) => {
      admin(meta);
      return apply({ op: 'roleDelete', name: String(req.role ?? '') });
    },
    RoleGrantPermission: async (req, meta) => {
      admin(meta);
      const p = req.perm ?? {};
      return apply({ op: 'roleGrantPermission', name: String(req.name ?? ''), perm: { permType: (p.permType || 'READ') as PermType, key: p.key ?? EMPTY, rangeEnd: p.range_end ?? EMPTY } });
    },
    RoleRevokePermission: async (req, meta) => {
      admin(meta);
      return apply({ op: 'roleRevokePermission', role: String(req.role ?? ''), key: req.key ?? EMPTY, rangeEnd: req.range_end ?? EMPTY });
    },
  };
}
