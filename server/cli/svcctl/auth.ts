// auth enable | disable | status, user ..., role ...
import { prefixEnd, type AuthRoleGetResponse, type Client } from '../../client/index.js';
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { flagBool } from './flags.js';
import { printOr } from './printer.js';
import { lineReader } from './stdin.js';

export async function auth(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  const client = await ctx.kv();
  switch (sub) {
    case 'enable': {
      const r = await client.authEnable();
      return printOr(ctx, r, 'Authentication Enabled\n');
    }
    case 'disable': {
      const r = await client.authDisable();
      return printOr(ctx, r, 'Authentication Disabled\n');
    }
    case 'status': {
      const r = await client.authStatus();
      return printOr(ctx, r, `Authentication Status: ${r.enabled}\nAuthRevision: ${r.authRevision}\n`);
    }
    default:
      throw new CliError(sub === undefined ? 'auth command needs a subcommand (enable, disable)' : `unknown command "${sub}" for "svcctl auth"`, Exit.BadArgs);
  }
}

/** A password from "name:password", or read from standard input (prompted on a terminal). */
async function password(ctx: Ctx, name: string, confirm: boolean): Promise<string> {
  const next = lineReader(ctx.io.stdin);
  if (ctx.io.stdin.isTTY && flagBool(ctx.p, 'interactive', true)) {
    ctx.io.err(`Password of ${name}: `);
    const a = (await next()) ?? '';
    if (confirm) {
      ctx.io.err(`Type password of ${name} again for confirmation: `);
      const b = (await next()) ?? '';
      if (a !== b) throw new CliError('given passwords are different', Exit.BadArgs);
    }
    return a;
  }
  return (await next()) ?? '';
}

function need(ctx: Ctx, n: number, msg: string): string[] {
  const args = ctx.args(2);
  if (args.length !== n) throw new CliError(msg, Exit.BadArgs);
  return args;
}

/**
 * A subcommand on the user or role its one argument names ("user delete alice"): asks the server, then prints
 * the answer (`simple` gives the simple format's text).
 */
async function onNamed<R>(ctx: Ctx, cmd: string, call: (c: Client, name: string) => Promise<R>, simple: (name: string, r: R) => string): Promise<void> {
  const [name] = need(ctx, 1, `${cmd} command requires ${cmd.split(' ')[0]} name as its argument`);
  const r = await call(await ctx.kv(), name);
  printOr(ctx, r, simple(name, r));
}

export async function user(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  switch (sub) {
    case 'add': {
      const [arg] = need(ctx, 1, 'user add command requires user name as its argument');
      const noPassword = flagBool(ctx.p, 'no-password');
      let name = arg;
      let pw = '';
      const i = arg.indexOf(':');
      if (i >= 0) {
        name = arg.slice(0, i);
        pw = arg.slice(i + 1);
      } else if (!noPassword) {
        pw = await password(ctx, name, true);
      }
      const r = await (await ctx.kv()).userAdd(name, pw, { noPassword });
      return printOr(ctx, r, `User ${name} created\n`);
    }
    case 'delete':
      return onNamed(ctx, 'user delete', (c, name) => c.userDelete(name), (name) => `User ${name} deleted\n`);
    case 'get':
      return onNamed(ctx, 'user get', (c, name) => c.userGet(name), (name, r) => `User: ${name}\nRoles:${r.roles.map((x) => ` ${x}`).join('')}\n`);
    case 'list': {
      const r = await (await ctx.kv()).userList();
      return printOr(ctx, r, r.users.map((u) => `${u}\n`).join(''));
    }
    case 'passwd': {
      const [name] = need(ctx, 1, 'user passwd command requires user name as its argument');
      const pw = await password(ctx, name, true);
      const r = await (await ctx.kv()).userChangePassword(name, pw);
      return printOr(ctx, r, 'Password updated\n');
    }
    case 'grant-role': {
      const [name, role] = need(ctx, 2, 'user grant command requires user name and role name as its argument');
      const r = await (await ctx.kv()).userGrantRole(name, role);
      return printOr(ctx, r, `Role ${role} is granted to user ${name}\n`);
    }
    case 'revoke-role': {
      const [name, role] = need(ctx, 2, 'user revoke-role requires user name and role name as its argument');
      const r = await (await ctx.kv()).userRevokeRole(name, role);
      return printOr(ctx, r, `Role ${role} is revoked from user ${name}\n`);
    }
    default:
      throw new CliError(sub === undefined ? 'user command needs a subcommand' : `unknown command "${sub}" for "svcctl user"`, Exit.BadArgs);
  }
}

/** `role get`'s text: the role's read permissions, then its write permissions. */
function roleText(name: string, r: AuthRoleGetResponse): string {
  let s = `Role ${name}\nKV Read:\n`;
  const line = (p: (typeof r.perm)[number]) => (p.range_end.length === 0 ? `\t${p.key.toString()}\n` : `\t${rangeText(p.key.toString(), p.range_end.toString())}\n`);
  for (const p of r.perm) if (p.permType === 'READ' || p.permType === 'READWRITE') s += line(p);
  s += 'KV Write:\n';
  for (const p of r.perm) if (p.permType === 'WRITE' || p.permType === 'READWRITE') s += line(p);
  return s;
}

/** "[key, end)" as the reference prints a permission range. */
function rangeText(key: string, end: string): string {
  let s = end !== '\x00' ? `[${key}, ${end})` : `[${key}, <open ended>`;
  if (prefixEnd(key).toString('latin1') === Buffer.from(end, 'utf8').toString('latin1')) s += ` (prefix ${key})`;
  return s;
}

function permRange(ctx: Ctx, args: string[]): { key: string; end: string } {
  const prefix = flagBool(ctx.p, 'prefix');
  const fromKey = flagBool(ctx.p, 'from-key');
  if (prefix && fromKey) throw new CliError('--from-key and --prefix flags are mutually exclusive', Exit.BadArgs);
  const key = args[0];
  if (args.length > 1) {
    if (prefix || fromKey) throw new CliError('too many arguments with --prefix or --from-key', Exit.BadArgs);
    return { key, end: args[1] };
  }
  if (prefix) return { key, end: key === '' ? '\x00' : prefixEnd(key).toString('latin1') };
  if (fromKey) return { key, end: '\x00' };
  return { key, end: '' };
}

export async function role(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  const args = ctx.args(2);
  switch (sub) {
    case 'add':
      return onNamed(ctx, 'role add', (c, name) => c.roleAdd(name), (name) => `Role ${name} created\n`);
    case 'delete':
      return onNamed(ctx, 'role delete', (c, name) => c.roleDelete(name), (name) => `Role ${name} deleted\n`);
    case 'list': {
      const r = await (await ctx.kv()).roleList();
      return printOr(ctx, r, r.roles.map((x) => `${x}\n`).join(''));
    }
    case 'get':
      return onNamed(ctx, 'role get', (c, name) => c.roleGet(name), roleText);
    case 'grant-permission': {
      if (args.length < 3 || args.length > 4) throw new CliError('role grant command requires role name, permission type, and key [endkey] as its argument', Exit.BadArgs);
      const types: Record<string, 'READ' | 'WRITE' | 'READWRITE'> = { read: 'READ', write: 'WRITE', readwrite: 'READWRITE' };
      const t = types[args[1].toLowerCase()];
      if (!t) throw new CliError(`invalid permission type ${args[1]}`, Exit.BadArgs);
      const { key, end } = permRange(ctx, args.slice(2));
      const r = await (await ctx.kv()).roleGrantPermission(args[0], t, key, Buffer.from(end, 'latin1'));
      return printOr(ctx, r, `Role ${args[0]} updated\n`);
    }
    case 'revoke-permission': {
      if (args.length < 2 || args.length > 3) throw new CliError('role revoke-permission command requires role name and key [endkey] as its argument', Exit.BadArgs);
      const { key, end } = permRange(ctx, args.slice(1));
      const r = await (await ctx.kv()).roleRevokePermission(args[0], key, Buffer.from(end, 'latin1'));
      let s: string;
      if (end === '') s = `Permission of key ${key} is revoked from role ${args[0]}\n`;
      else if (end !== '\x00') s = `Permission of range [${key}, ${end}) is revoked from role ${args[0]}\n`;
      else s = `Permission of range [${key}, <open ended> is revoked from role ${args[0]}\n`;
      return printOr(ctx, r, s);
    }
    default:
      throw new CliError(sub === undefined ? 'role command needs a subcommand' : `unknown command "${sub}" for "svcctl role"`, Exit.BadArgs);
  }
}
