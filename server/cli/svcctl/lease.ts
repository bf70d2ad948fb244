// lease grant | revoke | timetolive | list | keep-alive.
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { flagBool } from './flags.js';
import { hex16 } from './format.js';
import { leaseFromHex } from './kv.js';
import { printGrant, printKeepAlive, printLeases, printOr, printTimeToLive } from './printer.js';

function oneLeaseArg(ctx: Ctx, cmd: string): string {
  const args = ctx.args(2);
  if (args.length !== 1) throw new CliError(`${cmd} command needs 1 argument`, Exit.BadArgs);
  return leaseFromHex(args[0]);
}

export async function lease(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  switch (sub) {
    case 'grant': {
      const args = ctx.args(2);
      if (args.length !== 1) throw new CliError('lease grant command needs TTL argument', Exit.BadArgs);
      if (!/^-?\d+$/.test(args[0])) throw new CliError(`bad TTL (strconv.ParseInt: parsing "${args[0]}": invalid syntax)`, Exit.BadArgs);
      const r = await (await ctx.kv()).grant(Number(args[0]));
      return printGrant(ctx, r);
    }
    case 'revoke': {
      const id = oneLeaseArg(ctx, 'lease revoke');
      const client = await ctx.kv();
      const r = await client.revoke(id).catch((e: Error) => {
        throw new CliError(`failed to revoke lease (${e.message})`, Exit.Error);
      });
      return printOr(ctx, r, `lease ${hex16(id)} revoked\n`);
    }
    case 'timetolive': {
      const id = oneLeaseArg(ctx, 'lease timetolive');
      const keys = flagBool(ctx.p, 'keys');
      const r = await (await ctx.kv()).timeToLive(id, { keys });
      return printTimeToLive(ctx, r, keys);
    }
    case 'list': {
      const r = await (await ctx.kv()).leases();
      return printLeases(ctx, r);
    }
    case 'keep-alive': {
      const id = oneLeaseArg(ctx, 'lease keep-alive');
      const client = await ctx.kv();
      if (flagBool(ctx.p, 'once')) {
        const r = await client.keepAliveOnce(id);
        return printKeepAlive(ctx, r);
      }
      const ka = client.keepAlive(id);
      const stop = () => ka.cancel();
      ctx.abort.signal.addEventListener('abort', stop);
      let expired = false;
      ka.once('expired', () => (expired = true));
      try {
        for await (const r of ka) printKeepAlive(ctx, r);
      } finally {
        ctx.abort.signal.removeEventListener('abort', stop);
      }
      if (expired || !ctx.abort.signal.aborted) ctx.io.out(`lease ${hex16(id)} expired or revoked.\n`);
      return;
    }
    default:
      throw new CliError(sub === undefined ? 'lease command needs a subcommand (grant, revoke, timetolive, list, keep-alive)' : `unknown command "${sub}" for "svcctl lease"`, Exit.BadArgs);
  }
}
