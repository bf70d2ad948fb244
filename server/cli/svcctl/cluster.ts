// member, endpoint, alarm, defrag, move-leader.
import { ClientError, Status, type Client } from '../../client/index.js';
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { flagBool, flagInt, flagStr } from './flags.js';
import { goDuration, hexId } from './format.js';
import { defragDataDir } from './offline.js';
import {
  printAlarm, printEndpointHashKV, printEndpointHealth, printEndpointStatus, printMemberList, printOr,
  type EpHealth,
} from './printer.js';

function memberIdArg(ctx: Ctx, cmd: string): string {
  const args = ctx.args(2);
  if (args.length !== 1) throw new CliError('member ID is not provided', Exit.BadArgs);
  if (!/^[0-9a-fA-F]{1,16}$/.test(args[0])) throw new CliError(`bad member ID arg (strconv.ParseUint: parsing "${args[0]}": invalid syntax), expecting ID in Hex`, Exit.BadArgs);
  void cmd;
  return BigInt(`0x${args[0]}`).toString();
}

function peerUrls(ctx: Ctx): string[] {
  const v = flagStr(ctx.p, 'peer-urls');
  if (v === '') throw new CliError('member peer urls not provided', Exit.BadArgs);
  return v.split(',');
}

/** Go's %16x: hex padded with spaces to 16 columns. */
const pad16 = (id: string) => hexId(id).padStart(16, ' ');

/**
 * Asks each of `eps` in turn; a failure is reported on stderr as the reference words it ("Failed to get the
 * <what> of endpoint ...") and the others are still asked.
 */
async function perEndpoint<T>(ctx: Ctx, eps: string[], what: string, ask: (ep: string) => Promise<T>): Promise<{ ok: T[]; failed: boolean }> {
  const ok: T[] = [];
  let failed = false;
  for (const ep of eps) {
    try {
      ok.push(await ask(ep));
    } catch (e) {
      failed = true;
      ctx.io.err(`Failed to get the ${what} of endpoint ${ep} (${(e as Error).message})\n`);
    }
  }
  return { ok, failed };
}

export async function member(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  switch (sub) {
    case 'list': {
      const r = await (await ctx.kv()).memberList();
      return printMemberList(ctx, r);
    }
    case 'add': {
      const args = ctx.args(2);
      if (args.length !== 1) throw new CliError('member name not provided', Exit.BadArgs);
      if (args.length > 1) throw new CliError('too many arguments', Exit.BadArgs);
      const name = args[0];
      const urls = peerUrls(ctx);
      const r = await (await ctx.kv()).memberAdd(urls, { isLearner: flagBool(ctx.p, 'learner') });
      if (ctx.format !== 'simple') return printOr(ctx, r, '');
      ctx.io.out(`Member ${pad16(r.member.ID)} added to cluster ${pad16(r.header.cluster_id)}\n`);
      const conf: string[] = [];
      for (const m of r.members) for (const u of m.peerURLs) conf.push(`${m.ID === r.member.ID ? name : m.name}=${u}`);
      ctx.io.out(`\nSVC_NAME=${JSON.stringify(name)}\nSVC_INITIAL_CLUSTER=${JSON.stringify(conf.join(','))}\n`);
      ctx.io.out(`SVC_INITIAL_ADVERTISE_PEER_URLS=${JSON.stringify(urls.join(','))}\nSVC_INITIAL_CLUSTER_STATE="existing"\n`);
      return;
    }
    case 'remove': {
      const id = memberIdArg(ctx, 'remove');
      const r = await (await ctx.kv()).memberRemove(id);
      return printOr(ctx, r, `Member ${pad16(id)} removed from cluster ${pad16(r.header.cluster_id)}\n`);
    }
    case 'update': {
      const args = ctx.args(2);
      if (args.length !== 1) throw new CliError('member ID is not provided', Exit.BadArgs);
      const id = memberIdArg(ctx, 'update');
      const r = await (await ctx.kv()).memberUpdate(id, peerUrls(ctx));
      return printOr(ctx, r, `Member ${pad16(id)} updated in cluster ${pad16(r.header.cluster_id)}\n`);
    }
    case 'promote': {
      const id = memberIdArg(ctx, 'promote');
      const r = await (await ctx.kv()).memberPromote(id);
      return printOr(ctx, r, `Member ${pad16(id)} promoted in cluster ${pad16(r.header.cluster_id)}\n`);
    }
    default:
      throw new CliError(sub === undefined ? 'member command needs a subcommand (list, add, remove, update, promote)' : `unknown command "${sub}" for "svcctl member"`, Exit.BadArgs);
  }
}

/** --cluster: every member's client URLs instead of --endpoints. */
async function endpointsFor(ctx: Ctx): Promise<string[]> {
  if (!flagBool(ctx.p, 'cluster')) return ctx.endpoints;
  const r = await (await ctx.kv()).memberList();
  const eps = r.members.flatMap((m) => m.clientURLs);
  if (eps.length === 0) throw new CliError('no endpoints found in the member list', Exit.Error);
  return eps;
}

/** The message a failed health check reports (the reference's client times out on a dead endpoint). */
function healthError(e: unknown): string {
  const err = e as ClientError;
  if (err?.code === Status.UNAVAILABLE || err?.code === Status.DEADLINE_EXCEEDED) return 'context deadline exceeded';
  return String(err?.message ?? e);
}

export async function endpoint(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  switch (sub) {
    case 'health': {
      const eps = await endpointsFor(ctx);
      const results: EpHealth[] = [];
      await Promise.all(
        eps.map(async (ep) => {
          let start = process.hrtime.bigint();
          let c: Client | undefined;
          let error: string | undefined;
          try {
            c = await (await import('../../client/index.js')).Client.connect({ ...ctx.clientOptions([ep]), waitForConnection: false });
            start = process.hrtime.bigint();
            await c.get('health');
          } catch (e) {
            // Permission denied still proves the member committed a proposal.
            if ((e as Error).message !== 'etcdserver: permission denied') error = healthError(e);
          } finally {
            c?.close();
          }
          const took = goDuration(process.hrtime.bigint() - start);
          results.push(error ? { endpoint: ep, health: false, took, error } : { endpoint: ep, health: true, took });
        }),
      );
      printEndpointHealth(ctx, results);
      if (results.some((h) => !h.health)) throw new CliError('unhealthy cluster', Exit.Error);
      return;
    }
    case 'status': {
      const eps = await endpointsFor(ctx);
      const client = await ctx.kv();
      const list = await perEndpoint(ctx, eps, 'status', async (ep) => ({ Endpoint: ep, Status: await client.status(ep) }));
      printEndpointStatus(ctx, list.ok);
      if (list.failed) throw new CliError('', Exit.Error, '');
      return;
    }
    case 'hashkv': {
      const eps = await endpointsFor(ctx);
      const client = await ctx.kv();
      const rev = flagInt(ctx.p, 'rev');
      const list = await perEndpoint(ctx, eps, 'hash', async (ep) => ({ Endpoint: ep, HashKV: await client.hashKV(ep, rev) }));
      printEndpointHashKV(ctx, list.ok);
      if (list.failed) throw new CliError('', Exit.Error, '');
      return;
    }
    default:
      throw new CliError(sub === undefined ? 'endpoint command needs a subcommand (health, status, hashkv)' : `unknown command "${sub}" for "svcctl endpoint"`, Exit.BadArgs);
  }
}

export async function alarm(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  const client = await ctx.kv();
  if (sub === 'list') return printAlarm(ctx, await client.alarmList());
  if (sub === 'disarm') return printAlarm(ctx, await client.alarmDisarm());
  throw new CliError(sub === undefined ? 'alarm command needs a subcommand (list, disarm)' : `unknown command "${sub}" for "svcctl alarm"`, Exit.BadArgs);
}

export async function defrag(ctx: Ctx): Promise<void> {
  if (flagStr(ctx.p, 'data-dir', '') !== '') return defragDataDir(ctx);
  const eps = await endpointsFor(ctx);
  const client = await ctx.kv();
  let failed = false;
  for (const ep of eps) {
    try {
      await client.defragment(ep);
      ctx.io.out(`Finished defragmenting etcd member[${ep}]\n`);
    } catch (e) {
      failed = true;
      ctx.io.err(`Failed to defragment etcd member[${ep}] (${(e as Error).message})\n`);
    }
  }
  if (failed) throw new CliError('', Exit.Error, '');
}

export async function moveLeader(ctx: Ctx): Promise<void> {
  const args = ctx.args(1);
  if (args.length !== 1) throw new CliError('move-leader command needs 1 argument', Exit.BadArgs);
  if (!/^[0-9a-fA-F]{1,16}$/.test(args[0])) throw new CliError(`strconv.ParseUint: parsing "${args[0]}": invalid syntax`, Exit.BadArgs);
  const target = BigInt(`0x${args[0]}`).toString();
  const client = await ctx.kv();
  let leaderEp: string | undefined;
  let leaderId = '0';
  for (const ep of ctx.endpoints) {
    const st = await client.status(ep).catch(() => undefined);
    if (st && st.header.member_id === st.leader) {
      leaderEp = ep;
      leaderId = st.leader;
      break;
    }
  }
  if (!leaderEp) throw new CliError(`no leader endpoint given at [${ctx.endpoints.join(' ')}]`, Exit.Error);
  await client.moveLeader(target, leaderEp);
  ctx.io.out(`Leadership transferred from ${hexId(leaderId)} to ${hexId(target)}\n`);
}

export { ClientError };
