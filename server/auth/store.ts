// Authentication and authorization: users, roles, key-range permissions, and simple tokens. Changes are applied
// from the log (so every member holds the same users and roles) and persisted in the v3 db's auth buckets; the
// password hashing and checking happen before proposing, on the member that took the request.
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Backend } from '../storage/backend.js';
import { Errors } from '../core/errors.js';
import type { JwtTokens, TokenInfo } from './tokens.js';

export type PermType = 'READ' | 'WRITE' | 'READWRITE';

export interface Permission {
  permType: PermType;
  key: Buffer;
  rangeEnd: Buffer;
}

export interface User {
  name: string;
  /** A bcrypt hash ("$2a$10$..."; older svc data: "scrypt$<salt b64>$<hash b64>"), or "" for a user without password. */
  password: string;
  roles: string[];
}

export interface Role {
  name: string;
  perms: Permission[];
}

export const ROOT_USER = 'root';
export const ROOT_ROLE = 'root';
/** Simple tokens expire after this long without use (the reference: 5 minutes). */
export const SIMPLE_TOKEN_TTL_MS = 5 * 60 * 1000;

const enc = (s: string) => new TextEncoder().encode(s);
const AUTH = 'auth';
const USERS = 'authUsers';
const ROLES = 'authRoles';
const KEY_ENABLED = enc('authEnabled');
const KEY_REVISION = enc('authRevision');

/** One auth change, as it travels through the log. */
export type AuthOp =
  | { op: 'enable' }
  | { op: 'disable' }
  | { op: 'authenticate'; name: string; token: string }
  | { op: 'userAdd'; name: string; password: string; noPassword: boolean }
  | { op: 'userDelete'; name: string }
  | { op: 'userChangePassword'; name: string; password: string }
  | { op: 'userGrantRole'; user: string; role: string }
  | { op: 'userRevokeRole'; name: string; role: string }
  | { op: 'roleAdd'; name: string }
  | { op: 'roleDelete'; name: string }
  | { op: 'roleGrantPermission'; name: string; perm: Permission }
  | { op: 'roleRevokePermission'; role: string; key: Buffer; rangeEnd: Buffer };

/**
 * The stored form of a password: bcrypt with the "$2a$" prefix the reference writes, so users move with
 * snapshots both ways. Async: bcrypt takes ~100 ms at cost 10 and must not hold the event loop that long.
 */
export async function hashPassword(password: string, cost = 10): Promise<string> {
  const salt = (await bcrypt.genSalt(cost)).replace(/^\$2b\$/, '$2a$');
  return bcrypt.hash(password, salt);
}

/** Does `password` match a stored hash (bcrypt, or the scrypt form svc wrote before)? */
export async function passwordMatches(stored: string, password: string): Promise<boolean> {
  if (/^\$2[aby]\$\d\d\$/.test(stored)) return bcrypt.compare(password, stored);
  // "scrypt$<salt>$<hash>": what svc stored before it used bcrypt
  const [kind, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const want = Buffer.from(hash, 'base64');
  const got = scryptSync(password, Buffer.from(salt, 'base64'), want.length);
  return timingSafeEqual(want, got);
}

/** Does [key, end) lie within the permission's [pkey, pend)? Empty end = one key; "\0" end = open range. */
function covers(p: Permission, key: Buffer, end: Buffer): boolean {
  const open = (b: Buffer) => b.length === 1 && b[0] === 0;
  if (p.rangeEnd.length === 0) return end.length === 0 && key.equals(p.key);
  if (Buffer.compare(key, p.key) < 0) return false;
  if (open(p.rangeEnd)) return true;
  if (end.length === 0) return Buffer.compare(key, p.rangeEnd) < 0;
  if (open(end)) return false;
  return Buffer.compare(end, p.rangeEnd) <= 0;
}

export class AuthStore {
  enabled = false;
  revision = 0;
  private users = new Map<string, User>();
  private roles = new Map<string, Role>();
  private tokens = new Map<string, { user: string; lastUsed: number }>();

  /** `jwt`: --auth-token jwt,... (tokens are signed and checked by signature; none is kept). Absent: simple tokens. */
  constructor(
    private backend: Backend,
    readonly jwt?: JwtTokens,
    private readonly simpleTokenTtlMs = SIMPLE_TOKEN_TTL_MS,
  ) {
    this.load();
  }

  /** Reload from the db (after opening it, or after a snapshot replaced it). */
  load(backend: Backend = this.backend): void {
    this.backend = backend;
    const tx = backend.readTx();
    this.enabled = tx.get(AUTH, KEY_ENABLED)?.[0] === 1;
    const rev = tx.get(AUTH, KEY_REVISION);
    this.revision = rev ? Number(Buffer.from(rev).readBigUInt64BE(0)) : 0;
    this.users.clear();
    this.roles.clear();
    tx.forEach(USERS, (_k, v) => {
      const u = JSON.parse(Buffer.from(v).toString('utf8')) as User;
      this.users.set(u.name, u);
    });
    tx.forEach(ROLES, (_k, v) => {
      const r = JSON.parse(Buffer.from(v).toString('utf8')) as { name: string; perms: Array<{ permType: PermType; key: string; rangeEnd: string }> };
      this.roles.set(r.name, { name: r.name, perms: r.perms.map((p) => ({ permType: p.permType, key: Buffer.from(p.key, 'base64'), rangeEnd: Buffer.from(p.rangeEnd, 'base64') })) });
    });
  }

  // ------------------------------------------------------------------------------------------- reads

  user(name: string): User | undefined {
    return this.users.get(name);
  }

  role(name: string): Role | undefined {
    return this.roles.get(name);
  }

  userNames(): string[] {
    return [...this.users.keys()].sort();
  }

  roleNames(): string[] {
    return [...this.roles.keys()].sort();
  }

  /** Check a password before proposing Authenticate (throws the reference's error when wrong). */
  async checkPassword(name: string, password: string): Promise<void> {
    if (!this.enabled) throw Errors.authNotEnabled();
    const u = this.users.get(name);
    if (!u || u.password === '' || !(await passwordMatches(u.password, password))) throw Errors.authFailed();
  }

  /** The user a token stands for; refreshes the token's lifetime. */
  userOfToken(token: string, now = Date.now()): string {
    const t = this.tokens.get(token);
    if (!t || now - t.lastUsed > this.simpleTokenTtlMs) {
      if (t) this.tokens.delete(token);
      throw Errors.invalidAuthToken();
    }
    t.lastUsed = now;
    return t.user;
  }

  /**
   * The user a token stands for and the auth revision it speaks for: a simple token speaks for the current one,
   * a JWT for the one it was issued at. Throws invalid auth token.
   */
  tokenInfo(token: string): TokenInfo {
    if (!this.jwt) return { username: this.userOfToken(token), revision: this.revision };
    const info = this.jwt.info(token);
    if (!info) throw Errors.invalidAuthToken();
    return info;
  }

  /** A JWT for `name` at the current auth revision (after its Authenticate was applied). */
  signToken(name: string): string {
    if (!this.jwt) throw new Error('signToken: simple tokens are made before proposing');
    return this.jwt.assign(name, this.revision);
  }

  isAdmin(user: string): boolean {
    return this.users.get(user)?.roles.includes(ROOT_ROLE) ?? false;
  }

  /**
   * The reference's permission check of keys for a user at an auth revision (a token's, or a proposal's header
   * at apply): nothing when authentication is off; revision 0 (no user was known when the request was taken)
   * -> user name is empty; a revision older than the store's -> "revision of auth store is old" (the client
   * authenticates again and retries); an unknown user or a missing permission -> permission denied.
   */
  checkKeys(info: TokenInfo, key: Buffer, end: Buffer, write: boolean): void {
    if (!this.enabled) return;
    if (info.revision === 0) throw Errors.userEmpty();
    if (info.revision < this.revision) throw Errors.authOldRevision();
    if (!this.isPermitted(info.username, key, end, write)) throw Errors.permissionDenied();
  }

  /** The reference's admin check at apply: nothing when off; no user -> empty; unknown -> not found; else root. */
  checkAdmin(username: string): void {
    if (!this.enabled) return;
    if (username === '') throw Errors.userEmpty();
    if (!this.users.has(username)) throw Errors.userNotFound();
    if (!this.isAdmin(username)) throw Errors.permissionDenied();
  }

  /** May `user` read (write) every key of [key, end)? */
  isPermitted(user: string, key: Buffer, end: Buffer, write: boolean): boolean {
    const u = this.users.get(user);
    if (!u) return false;
    if (u.roles.includes(ROOT_ROLE)) return true;
    for (const rn of u.roles) {
      for (const p of this.roles.get(rn)?.perms ?? []) {
        const ok = p.permType === 'READWRITE' || p.permType === (write ? 'WRITE' : 'READ');
        if (ok && covers(p, key, end)) return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------------------------------- apply

  /** Apply one committed auth change. Deterministic: the same ops give every member the same store. */
  apply(op: AuthOp): void {
    const tx = this.backend.batchTx();
    switch (op.op) {
      case 'enable': {
        if (this.enabled) return;
        const root = this.users.get(ROOT_USER);
        if (!root) throw Errors.rootUserNotExist();
        if (!root.roles.includes(ROOT_ROLE)) throw Errors.rootRoleNotExist();
        this.enabled = true;
        tx.put(AUTH, KEY_ENABLED, Uint8Array.of(1));
        this.tokens.clear();
        break;
      }
      case 'disable':
        this.enabled = false;
        tx.put(AUTH, KEY_ENABLED, Uint8Array.of(0));
        this.tokens.clear();
        break;
      case 'authenticate':
        // Every member learns a simple token, so it works against any of them. A JWT is not kept (its
        // Authenticate carries no token): any member checks it by its signature.
        if (op.token !== '') this.tokens.set(op.token, { user: op.name, lastUsed: Date.now() });
        return;
      case 'userAdd': {
        if (op.name === '') throw Errors.userEmpty();
        if (this.users.has(op.name)) throw Errors.userAlreadyExist();
        this.putUser(tx, { name: op.name, password: op.noPassword ? '' : op.password, roles: [] });
        break;
      }
      case 'userDelete': {
        this.deleteNamed(tx, 'user', op.name);
        this.dropTokensOf(op.name);
        break;
      }
      case 'userChangePassword': {
        const u = this.users.get(op.name);
        if (!u) throw Errors.userNotFound();
        this.putUser(tx, { ...u, password: op.password });
        this.dropTokensOf(op.name);
        break;
      }
      case 'userGrantRole': {
        const u = this.users.get(op.user);
        if (!u) throw Errors.userNotFound();
        if (op.role !== ROOT_ROLE && !this.roles.has(op.role)) throw Errors.roleNotFound();
        if (!u.roles.includes(op.role)) this.putUser(tx, { ...u, roles: [...u.roles, op.role].sort() });
        break;
      }
      case 'userRevokeRole': {
        const u = this.users.get(op.name);
        if (!u) throw Errors.userNotFound();
        if (this.enabled && op.name === ROOT_USER && op.role === ROOT_ROLE) throw Errors.invalidAuthMgmt();
        if (!u.roles.includes(op.role)) throw Errors.roleNotGranted();
        this.putUser(tx, { ...u, roles: u.roles.filter((r) => r !== op.role) });
        break;
      }
      case 'roleAdd': {
        if (op.name === '') throw Errors.roleEmpty();
        if (this.roles.has(op.name)) throw Errors.roleAlreadyExist();
        this.putRole(tx, { name: op.name, perms: [] });
        break;
      }
      case 'roleDelete': {
        this.deleteNamed(tx, 'role', op.name);
        for (const u of [...this.users.values()]) if (u.roles.includes(op.name)) this.putUser(tx, { ...u, roles: u.roles.filter((r) => r !== op.name) });
        break;
      }
      case 'roleGrantPermission': {
        const r = this.roles.get(op.name);
        if (!r) throw Errors.roleNotFound();
        const perm = { permType: op.perm.permType, key: Buffer.from(op.perm.key), rangeEnd: Buffer.from(op.perm.rangeEnd) };
        const others = r.perms.filter((p) => !(p.key.equals(perm.key) && p.rangeEnd.equals(perm.rangeEnd)));
        this.putRole(tx, { name: r.name, perms: [...others, perm].sort((a, b) => Buffer.compare(a.key, b.key)) });
        break;
      }
      case 'roleRevokePermission': {
        const r = this.roles.get(op.role);
        if (!r) throw Errors.roleNotFound();
        const kept = r.perms.filter((p) => !(p.key.equals(Buffer.from(op.key)) && p.rangeEnd.equals(Buffer.from(op.rangeEnd))));
        if (kept.length === r.perms.length) throw Errors.permissionNotGranted();
        this.putRole(tx, { name: r.name, perms: kept });
        break;
      }
    }
    this.revision++;
    const rev = Buffer.alloc(8);
    rev.writeBigUInt64BE(BigInt(this.revision));
    tx.put(AUTH, KEY_REVISION, rev);
  }

  private putUser(tx: ReturnType<Backend['batchTx']>, u: User): void {
    this.users.set(u.name, u);
    tx.put(USERS, enc(u.name), enc(JSON.stringify(u)));
  }

  private putRole(tx: ReturnType<Backend['batchTx']>, r: Role): void {
    this.roles.set(r.name, r);
    const json = { name: r.name, perms: r.perms.map((p) => ({ permType: p.permType, key: p.key.toString('base64'), rangeEnd: p.rangeEnd.toString('base64') })) };
    tx.put(ROLES, enc(r.name), enc(JSON.stringify(json)));
  }

  /** Deletes a user or a role: never root's own while auth is on, and only one that exists. */
  private deleteNamed(tx: ReturnType<Backend['batchTx']>, kind: 'user' | 'role', name: string): void {
    const [named, bucket, root, notFound] = kind === 'user' ? [this.users, USERS, ROOT_USER, Errors.userNotFound] : [this.roles, ROLES, ROOT_ROLE, Errors.roleNotFound];
    if (this.enabled && name === root) throw Errors.invalidAuthMgmt();
    if (!named.has(name)) throw notFound();
    named.delete(name);
    tx.delete(bucket, enc(name));
  }

  private dropTokensOf(user: string): void {
    for (const [t, v] of this.tokens) if (v.user === user) this.tokens.delete(t);
  }

  /** A new simple token: random text, then the revision, like the reference's "<random>.<index>". */
  static newToken(index: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const bytes = randomBytes(16);
    let s = '';
    for (const b of bytes) s += alphabet[b % alphabet.length];
    return `${s}.${index}`;
  }
}
