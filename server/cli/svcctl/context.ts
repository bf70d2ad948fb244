// What every v3 command gets: its parsed arguments, the output channels, and a client built lazily from
// the global flags (so commands that need no server, such as `snapshot status`, never dial).
import { Client, ClientError, Status, type ClientOptions } from '../../client/index.js';
import { CliError, Exit } from './errors.js';
import { flagBool, flagStr, type Parsed } from './flags.js';
import { parseGoDuration } from './format.js';

export type OutputFormat = 'simple' | 'json' | 'table' | 'fields' | 'protobuf';

/** Where a command writes; tests and the binary both use process streams. */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdoutIsTTY: boolean;
}

export class Ctx {
  readonly format: OutputFormat;
  readonly hex: boolean;
  readonly endpoints: string[];
  readonly dialTimeoutMs: number;
  readonly commandTimeoutMs: number;
  private client?: Client;
  /** Set by SIGINT handling: long-running commands stop and main exits 0 or 130. */
  readonly abort = new AbortController();

  constructor(
    readonly p: Parsed,
    readonly io: Io,
  ) {
    const w = flagStr(p, 'write-out', 'simple');
    if (!['simple', 'json', 'table', 'fields', 'protobuf'].includes(w)) throw new CliError(`unknown output format "${w}"`, Exit.BadFeature);
    this.format = w as OutputFormat;
    this.hex = flagBool(p, 'hex');
    this.endpoints = flagStr(p, 'endpoints', '127.0.0.1:2379').split(',').map((s) => s.trim()).filter((s) => s !== '');
    this.dialTimeoutMs = parseGoDuration(flagStr(p, 'dial-timeout', '2s'));
    this.commandTimeoutMs = parseGoDuration(flagStr(p, 'command-timeout', '5s'));
  }

  /** Positional arguments after the command words. */
  args(skip: number): string[] {
    return this.p.positional.slice(skip);
  }

  /** Options for a client of `endpoints` (default: the --endpoints list). */
  clientOptions(endpoints: string[] = this.endpoints): ClientOptions {
    const p = this.p;
    const tlsWanted = p.flags.has('cacert') || p.flags.has('cert') || p.flags.has('key') || flagBool(p, 'insecure-skip-tls-verify');
    const opts: ClientOptions = {
      endpoints,
      dialTimeoutMs: this.dialTimeoutMs,
      commandTimeoutMs: this.commandTimeoutMs,
      waitForConnection: true,
    };
    if (tlsWanted || endpoints.some((e) => e.startsWith('https://'))) {
      opts.tls = {
        ca: p.flags.get('cacert'),
        cert: p.flags.get('cert'),
        key: p.flags.get('key'),
        insecureSkipVerify: flagBool(p, 'insecure-skip-tls-verify'),
      };
    }
    const user = p.flags.get('user');
    if (user !== undefined) {
      const i = user.indexOf(':');
      const password = i >= 0 ? user.slice(i + 1) : p.flags.get('password');
      if (password === undefined) throw new CliError('password is missing: use --user user:password or --password', Exit.BadArgs);
      opts.auth = { username: i >= 0 ? user.slice(0, i) : user, password };
    }
    return opts;
  }

  /** The client of the --endpoints list (dialled on first use; connection failures exit like the reference). */
  async kv(): Promise<Client> {
    if (!this.client) this.client = await connectOrFail(this.clientOptions());
    return this.client;
  }

  /** A separate client for other endpoints (caller closes it). */
  async clientFor(endpoints: string[]): Promise<Client> {
    return connectOrFail(this.clientOptions(endpoints));
  }

  close(): void {
    this.client?.close();
  }

  /** Rejects a format this command cannot print, as the reference does. */
  refuseFormats(...formats: OutputFormat[]): void {
    if (formats.includes(this.format)) throw new CliError(`${this.format} not supported as output format`, Exit.BadFeature);
  }
}

async function connectOrFail(opts: ClientOptions): Promise<Client> {
  try {
    return await Client.connect(opts);
  } catch (e) {
    // No connection in time: exit 1 like a timed-out command; any other failure to set up the client
    // (authentication refused, bad TLS files) is the reference's "bad connection", 2.
    const timedOut = e instanceof ClientError && e.code === Status.DEADLINE_EXCEEDED;
    throw new CliError((e as Error).message, timedOut ? Exit.Error : Exit.BadConnection);
  }
}
