// Command-line parsing of svc-operator on node:util parseArgs: positional words and --flags (--flag value,
// --flag=value, -f value). Each command declares its flags; anything else is a usage error naming the flag.
import { readFileSync } from 'node:fs';
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import type { MemberTls } from '../members/index.js';
import { CodedError } from '../../server/coded-error.js';

/** Raised on bad usage (exit code 2). */
export class UsageError extends CodedError<'USAGE'> {
  constructor(message: string) {
    super('USAGE', message);
  }
}

/** Raised when a command fails (exit code 1). */
export class CommandError extends CodedError<'FAILED'> {
  constructor(message: string) {
    super('FAILED', message);
  }
}

/** Parsed arguments. */
export interface ParsedArgs {
  words: string[];
  /** Flag values by long name; a boolean flag given is "true". */
  flags: Map<string, string>;
}

/** The flags a command accepts: those taking a value and the bare ones (`--help` is always accepted). */
export interface FlagSpec {
  string?: readonly string[];
  boolean?: readonly string[];
}

/** One-letter forms of long flags (given only when the command has the long one). */
const SHORT: Record<string, string> = { file: 'f', output: 'o', help: 'h', namespace: 'n', watch: 'w' };

/** Splits argv into positional words and the flags `spec` declares. */
export function parseArgs(argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  const add = (name: string, type: 'string' | 'boolean') => {
    options[name] = SHORT[name] ? { type, short: SHORT[name] } : { type };
  };
  for (const name of spec.string ?? []) add(name, 'string');
  for (const name of [...(spec.boolean ?? []), 'help']) add(name, 'boolean');
  let parsed: ReturnType<typeof nodeParseArgs>;
  try {
    parsed = nodeParseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(usageLine(e as Error & { code?: string }));
  }
  const flags = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === undefined || value === false) continue;
    flags.set(name, value === true ? 'true' : String(Array.isArray(value) ? value.at(-1) : value));
  }
  return { words: parsed.positionals, flags };
}

/** node:util's parse error as a short line naming the flag (its long name when it has one). */
function usageLine(e: Error & { code?: string }): string {
  const flag = /--[\w-]+/.exec(e.message)?.[0] ?? /'(-\w)/.exec(e.message)?.[1] ?? '';
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${flag}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(e.message) ? `flag ${flag} takes no value` : `flag ${flag} needs a value`;
    default:
      return e.message;
  }
}

/**
 * --cacert, --cert and --key (all three or none; each value as resolved by the command): the files read, or undefined
 * without them (the Job command backup and the backup agent).
 */
export function readTlsFiles(files: readonly [string | undefined, string | undefined, string | undefined]): MemberTls | undefined {
  if (files.some((f) => f !== undefined) && files.some((f) => f === undefined)) throw new UsageError('--cacert, --cert and --key go together');
  const read = (f: string) => {
    try {
      return readFileSync(f);
    } catch (e) {
      throw new UsageError(`cannot read ${f}: ${(e as Error).message}`);
    }
  };
  return files[0] === undefined ? undefined : { ca: read(files[0]), cert: read(files[1]!), key: read(files[2]!) };
}
