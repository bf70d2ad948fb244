// The Auth service (etcdserverpb.Auth): users, roles and permissions, applied through the log.
import { Errors } from '../../core/errors.js';
import { AuthStore, hashPassword, type AuthOp } from '../../auth/store.js';
import type { ApiLimits, AuthCore, Proposals } from '../../core/interfaces.js';
import type { AuthGate, RequestMeta } from './auth-gate.js';
import type { AuthService } from './service-methods.js';
import type { Headers } from './headers.js';

const EMPTY = Buffer.alloc(0);

/** The Auth service's unary calls. */
export function authService(core: AuthCore, proposals: Proposals, limits: ApiLimits, headers: Headers, gate: AuthGate): AuthService {
  const server = proposals;
  const header = () => headers.header();
  const store = () => core.auth;
  // Changes carry the caller (checked again when applied: an admin whose root role went meanwhile is refused).
  const apply = async (op: AuthOp, meta?: RequestMeta) => {
    const caller = op.op === 'authenticate' ? undefined : gate.header(meta);
    await server.propose({ id: server.nextRequestId(), header: caller, kind: 'auth', auth: op });
    return { header: header() };
  };
  const admin = (meta?: RequestMeta) => gate.requireAdmin(meta);
  // An admin-only change whose op costs nothing to build (UserAdd and UserChangePassword hash only after the check).
  const adminApply = async (meta: RequestMeta | undefined, op: AuthOp) => {
    admin(meta);
    return apply(op, meta);
  };
  const methods: AuthService = {
    AuthEnable: async (_req, meta) => {
      if (store().enabled) admin(meta);
      return apply({ op: 'enable' }, meta);
    },
    AuthDisable: async (_req, meta) => adminApply(meta, { op: 'disable' }),
    AuthStatus: async () => {
      if (!core.capable('3.5')) throw Errors.unavailableUntil('AuthStatus', '3.5');
      return { header: header(), enabled: store().enabled, authRevision: store().revision };
    },
    Authenticate: async (req) => {
      const name = String(req.name ?? '');
      await store().checkPassword(name, String(req.password ?? ''));
      if (store().jwt) {
        // A JWT is signed once the Authenticate is applied, at the auth revision of that moment.
        await apply({ op: 'authenticate', name, token: '' });
        return { header: header(), token: store().signToken(name) };
      }
      const token = AuthStore.newToken(core.appliedIndex + 1);
      await apply({ op: 'authenticate', name, token });
      return { header: header(), token };
    },
    UserAdd: async (req, meta) => {
      admin(meta);
      // An empty password is a password (the reference hashes it too); only no_password makes a user without one.
      const noPassword = !!req.options?.no_password;
      return apply({ op: 'userAdd', name: String(req.name ?? ''), password: noPassword ? '' : await hashPassword(String(req.password ?? ''), limits.bcryptCost), noPassword }, meta);
    },
    UserGet: async (req, meta) => {
      gate.requireAdminOr(meta, (user) => user === String(req.name ?? ''));
      const u = store().user(String(req.name ?? ''));
      if (!u) throw Errors.userNotFound();
      return { header: header(), roles: u.roles };
    },
    UserList: async (_req, meta) => {
      admin(meta);
      return { header: header(), users: store().userNames() };
    },
    UserDelete: async (req, meta) => adminApply(meta, { op: 'userDelete', name: String(req.name ?? '') }),
    UserChangePassword: async (req, meta) => {
      admin(meta);
      return apply({ op: 'userChangePassword', name: String(req.name ?? ''), password: await hashPassword(String(req.password ?? ''), limits.bcryptCost) }, meta);
    },
    UserGrantRole: async (req, meta) => adminApply(meta, { op: 'userGrantRole', user: String(req.user ?? ''), role: String(req.role ?? '') }),
    UserRevokeRole: async (req, meta) => adminApply(meta, { op: 'userRevokeRole', name: String(req.name ?? ''), role: String(req.role ?? '') }),
    RoleAdd: async (req, meta) => adminApply(meta, { op: 'roleAdd', name: String(req.name ?? '') }),
    RoleGet: async (req, meta) => {
      gate.requireAdminOr(meta, (user) => store().user(user)?.roles.includes(String(req.role ?? '')) ?? false);
      const r = store().role(String(req.role ?? ''));
      if (!r) throw Errors.roleNotFound();
      return { header: header(), perm: r.perms.map((p) => ({ permType: p.permType, key: p.key, range_end: p.rangeEnd })) };
    },
    RoleList: async (_req, meta) => {
      admin(meta);
      return { header: header(), roles: store().roleNames() };
    },
    RoleDelete: async (req, meta) => adminApply(meta, { op: 'roleDelete', name: String(req.role ?? '') }),
    RoleGrantPermission: async (req, meta) => {
      const p = req.perm ?? {};
      return adminApply(meta, { op: 'roleGrantPermission', name: String(req.name ?? ''), perm: { permType: p.permType || 'READ', key: p.key ?? EMPTY, rangeEnd: p.range_end ?? EMPTY } });
    },
    RoleRevokePermission: async (req, meta) => adminApply(meta, { op: 'roleRevokePermission', role: String(req.role ?? ''), key: req.key ?? EMPTY, rangeEnd: req.range_end ?? EMPTY }),
  };
  return methods;
}
