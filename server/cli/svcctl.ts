// Entry point of the svcctl client binary (bin/svcctl): the reference client's v3 command set (and, with
// SVCCTL_API=2 or on a release whose default is 2, its v2 command set), printing what it prints.
// Exit status: 0 on success, otherwise the reference's codes (1 most errors, 4 unsupported output format,
// 5 watch cancelled by the server, 128 bad arguments; v2: 1 bad arguments, 4 server errors).
import { currentRelease, UnknownReleaseError, type Release } from '../releases.js';
import { setProtoDir } from '../wire/index.js';
import { Ctx, type Io } from './svcctl/context.js';
import { CliError, Exit } from './svcctl/errors.js';
import { applyEnv, COMMAND_FLAGS, GLOBAL_FLAGS, parseArgs, type Parsed } from './svcctl/flags.js';
import { unknownCommandText } from './svcctl/suggest.js';
import { compaction, del, get, put, txn, watch } from './svcctl/kv.js';
import { lease } from './svcctl/lease.js';
import { alarm, defrag, endpoint, member, moveLeader } from './svcctl/cluster.js';
import { snapshot } from './svcctl/snapshot.js';
import { auth, role, user } from './svcctl/auth.js';
import { runV2 } from './svcctl/v2.js';

type Command = (ctx: Ctx) => Promise<void>;

/** The v3 commands, in the order the reference registers them (suggestions follow this order). */
const COMMANDS: Array<[string, Command, string]> = [
  ['get', get, 'Gets the key or a range of keys'],
  ['put', put, 'Puts the given key into the store'],
  ['del', del, 'Removes the specified key or range of keys [key, range_end)'],
  ['txn', txn, 'Txn processes all the requests in one transaction'],
  ['compaction', compaction, 'Compacts the event history in svc'],
  ['alarm', alarm, 'Alarm related commands'],
  ['defrag', defrag, 'Defragments the storage of the svc members with given endpoints, or (--data-dir) of a stopped member'],
  ['endpoint', endpoint, 'Endpoint related commands'],
  ['move-leader', moveLeader, 'Transfers leadership to another svc cluster member.'],
  ['watch', watch, 'Watches events stream on keys or prefixes'],
  ['version', async () => undefined, 'Prints the version of svcctl'],
  ['lease', lease, 'Lease related commands'],
  ['member', member, 'Membership related commands'],
  ['snapshot', snapshot, 'Manages svc node snapshots'],
  ['auth', auth, 'Enable or disable authentication'],
  ['user', user, 'User related commands'],
  ['role', role, 'Role related commands'],
];

/** Commands that run until interrupted: SIGINT ends them cleanly instead of killing the process. */
const LONG_RUNNING = new Set(['watch', 'lease']);

function processIo(): Io {
  return {
    out: (s) => void process.stdout.write(s),
    err: (s) => void process.stderr.write(s),
    stdin: process.stdin,
    stdoutIsTTY: process.stdout.isTTY === true,
  };
}

function usage(release: Release): string {
  const width = Math.max(...COMMANDS.map(([n]) => n.length));
  return (
    `NAME:\n\tsvcctl - A simple command line client for svc3.\n\nUSAGE:\n\tsvcctl [flags]\n\nVERSION:\n\t${release.version}\n\n` +
    `API VERSION:\n\t${release.minor}\n\nCOMMANDS:\n${COMMANDS.map(([n, , d]) => `\t${n.padEnd(width)}\t${d}\n`).join('')}\n` +
    'OPTIONS:\n      --cacert=""\t\t\t\tverify certificates of TLS-enabled secure servers using this CA bundle\n' +
    '      --cert=""\t\t\t\t\tidentify secure client using this TLS certificate file\n' +
    '      --command-timeout=5s\t\t\ttimeout for short running command (excluding dial timeout)\n' +
    '      --dial-timeout=2s\t\t\t\tdial timeout for client connections\n' +
    '      --endpoints=[127.0.0.1:2379]\t\tgRPC endpoints\n' +
    '      --hex[=false]\t\t\t\tprint byte strings as hex encoded strings\n' +
    '      --insecure-skip-tls-verify[=false]\tskip server certificate verification\n' +
    '      --key=""\t\t\t\t\tidentify secure client using this TLS key file\n' +
    '      --user=""\t\t\t\t\tusername[:password] for authentication (prompt if password is not supplied)\n' +
    '  -w, --write-out="simple"\t\t\tset the output format (fields, json, protobuf, simple, table)\n'
  );
}

/** Runs svcctl with `argv` (without the program name); resolves with the exit status. */
export async function main(argv: string[], io: Io = processIo(), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // grpc-js passes IP addresses as the TLS server name, which Node answers with a deprecation warning on
  // stderr; a command-line tool's output must not carry it.
  if (io.stdin === process.stdin) process.noDeprecation = true;
  setProtoDir(env.SVC_PROTO_DIR);
  let release: Release;
  try {
    release = currentRelease(env);
  } catch (e) {
    if (e instanceof UnknownReleaseError) {
      io.err(`svcctl: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const api = env.SVCCTL_API === undefined || env.SVCCTL_API === '' ? String(release.clientApiDefault) : env.SVCCTL_API;
  if (api === '2') return runV2(argv, env, io, release.version);
  if (api !== '3' && api !== '3.0') {
    io.err(`unsupported API version ${api}\n`);
    return 1;
  }

  let p: Parsed;
  try {
    p = parseArgs(argv, [...GLOBAL_FLAGS, ...COMMAND_FLAGS]);
    applyEnv(p.flags, env);
  } catch (e) {
    if (e instanceof CliError) {
      io.err(`Error: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
  const name = p.positional[0];
  if (p.flags.get('version') === 'true' || name === 'version') {
    io.out(`svcctl version: ${release.version}\nAPI version: ${release.minor}\n`);
    return 0;
  }
  if (name === undefined || name === 'help' || p.flags.get('help') === 'true') {
    io.out(usage(release));
    return 0;
  }
  // Like the reference (cobra prefix matching), an unambiguous prefix names its command.
  const prefixed = COMMANDS.filter(([n]) => n.startsWith(name));
  const entry = COMMANDS.find(([n]) => n === name) ?? (prefixed.length === 1 ? prefixed[0] : undefined);
  if (!entry) {
    io.err(unknownCommandText(name, 'svcctl', COMMANDS.map(([n]) => n)));
    return Exit.Error;
  }

  let ctx: Ctx | undefined;
  const onSignal = () => {
    if (ctx && LONG_RUNNING.has(entry[0])) ctx.abort.abort();
    else process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    ctx = new Ctx(p, io);
    await entry[1](ctx);
    return 0;
  } catch (e) {
    if (e instanceof CliError) {
      io.err(e.raw ?? `Error: ${e.message}\n`);
      return e.exitCode;
    }
    io.err(`Error: ${(e as Error).message ?? String(e)}\n`);
    return Exit.Error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    ctx?.close();
  }
}
