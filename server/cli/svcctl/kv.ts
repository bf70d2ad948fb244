// put, get, del, txn, watch, compaction.
import { ClientError } from '../../client/index.js';
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { flagBool, flagInt, flagStr } from './flags.js';
import { getOptions, deleteOptions } from './kv-options.js';
import { printDel, printGet, printPut, printTxn, printWatch } from './printer.js';
import { lineReader, readAll } from './stdin.js';
import { readTxn } from './txn-parse.js';

/** A lease id given in hex on the command line, as a decimal string. */
export function leaseFromHex(s: string): string {
  if (!/^[0-9a-fA-F]+$/.test(s)) throw new CliError(`bad lease ID (strconv.ParseInt: parsing "${s}": invalid syntax), expecting ID in Hex`, Exit.BadArgs);
  return BigInt(`0x${s}`).toString();
}

export async function put(ctx: Ctx): Promise<void> {
  const args = ctx.args(1);
  const ignoreValue = flagBool(ctx.p, 'ignore-value');
  let key: string;
  let value: string;
  if (args.length === 2 && !ignoreValue) [key, value] = args;
  else if (args.length === 1 && ignoreValue) [key, value] = [args[0], ''];
  else if (args.length === 1) {
    if (ctx.io.stdin.isTTY) throw new CliError('put command needs 1 argument and input from stdin or 2 arguments', Exit.BadArgs);
    [key, value] = [args[0], await readAll(ctx.io.stdin)];
  } else if (args.length === 2 && ignoreValue) {
    throw new CliError('put command needs only 1 argument when \'ignore-value\' is set', Exit.BadArgs);
  } else {
    throw new CliError('put command needs 1 argument and input from stdin or 2 arguments', Exit.BadArgs);
  }
  const leaseHex = flagStr(ctx.p, 'lease', '0');
  const r = await (await ctx.kv()).put(key, value, {
    lease: leaseHex === '0' ? '0' : leaseFromHex(leaseHex),
    prevKv: flagBool(ctx.p, 'prev-kv'),
    ignoreValue,
    ignoreLease: flagBool(ctx.p, 'ignore-lease'),
  });
  printPut(ctx, r);
}

export async function get(ctx: Ctx): Promise<void> {
  const args = ctx.args(1);
  if (args.length < 1 || args.length > 2) throw new CliError('get command needs one argument as key and an optional argument as range_end', Exit.BadArgs);
  const valueOnly = flagBool(ctx.p, 'print-value-only');
  if (valueOnly && ctx.format !== 'simple') throw new CliError('--print-value-only is only for `--write-out=simple`', Exit.BadArgs);
  if (ctx.format === 'table') throw new CliError('table not supported as output format', Exit.BadFeature);
  const r = await (await ctx.kv()).get(args[0], getOptions(ctx.p, args));
  printGet(ctx, r, valueOnly);
}

export async function del(ctx: Ctx): Promise<void> {
  const args = ctx.args(1);
  if (args.length < 1 || args.length > 2) throw new CliError('del command needs one argument as key and an optional argument as range_end', Exit.BadArgs);
  const r = await (await ctx.kv()).delete(args[0], deleteOptions(ctx.p, args));
  printDel(ctx, r);
}

export async function txn(ctx: Ctx): Promise<void> {
  if (ctx.args(1).length !== 0) throw new CliError('txn command does not accept argument', Exit.BadArgs);
  const interactive = flagBool(ctx.p, 'interactive');
  const spec = await readTxn(lineReader(ctx.io.stdin), interactive ? (s) => ctx.io.out(s) : undefined);
  const r = await (await ctx.kv()).txn(spec);
  printTxn(ctx, r);
}

export async function compaction(ctx: Ctx): Promise<void> {
  const args = ctx.args(1);
  if (args.length !== 1) throw new CliError('compaction command needs 1 argument', Exit.BadArgs);
  if (!/^-?\d+$/.test(args[0])) throw new CliError(`strconv.ParseInt: parsing "${args[0]}": invalid syntax`, Exit.Error);
  await (await ctx.kv()).compact(args[0], flagBool(ctx.p, 'physical'));
  ctx.io.out(`compacted revision ${args[0]}\n`);
}

export async function watch(ctx: Ctx): Promise<void> {
  const args = ctx.args(1);
  if (flagBool(ctx.p, 'interactive')) throw new CliError('interactive watch is not supported by svcctl', Exit.BadFeature);
  if (args.length < 1 || args.length > 2) throw new CliError('watch in non-interactive mode requires one or two arguments as key or prefix, with range end', Exit.BadArgs);
  const prefix = flagBool(ctx.p, 'prefix');
  if (prefix && args.length === 2) throw new CliError('watch in non-interactive mode requires one or two arguments as key or prefix, with range end', Exit.BadArgs);
  const client = await ctx.kv();
  const w = client.watch(args[0], {
    prefix,
    rangeEnd: args.length === 2 ? args[1] : undefined,
    startRevision: flagInt(ctx.p, 'rev'),
    prevKv: flagBool(ctx.p, 'prev-kv'),
    progressNotify: flagBool(ctx.p, 'progress-notify'),
  });
  const stop = () => void w.cancel();
  ctx.abort.signal.addEventListener('abort', stop);
  try {
    for await (const r of w) printWatch(ctx, r);
  } catch (e) {
    if (e instanceof ClientError) {
      ctx.io.err(`watch was canceled (${e.message})\n`);
      throw new CliError('watch is canceled by the server', Exit.Interrupted);
    }
    throw e;
  } finally {
    ctx.abort.signal.removeEventListener('abort', stop);
  }
  if (!ctx.abort.signal.aborted) throw new CliError('watch is canceled by the server', Exit.Interrupted);
}
