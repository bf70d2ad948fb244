// The reference's txn input: three blocks separated by empty lines — compares, success requests, failure
// requests. Compares look like `mod("key") > "0"` (targets ver/version, c/create, m/mod, val/value, lease;
// ops = != < >); requests are get/put/del command lines with their flags.
import type { Compare, Op } from '../../client/types.js';
import { CliError, Exit } from './errors.js';
import { COMMAND_FLAGS, GLOBAL_FLAGS, flagBool, flagInt, flagStr, parseArgs } from './flags.js';
import { getOptions, deleteOptions } from './kv-options.js';

/** Splits a line into words: double-quoted strings (with Go escapes) or runs of non-space characters. */
export function argify(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    out.push(m[1] !== undefined ? unquote(m[1]) : m[2]);
  }
  return out;
}

function unquote(s: string): string {
  try {
    return JSON.parse(`"${s}"`) as string;
  } catch {
    return s;
  }
}

/** One compare line. */
export function parseCompare(line: string): Compare {
  const m = /^(\w+)\("((?:[^"\\]|\\.)*)"\)\s+(=|!=|<|>)\s+"((?:[^"\\]|\\.)*)"\s*$/.exec(line.trim());
  if (!m) throw new CliError(`malformed comparison: ${line}`, Exit.InvalidInput);
  const [, target, rawKey, op, rawVal] = m;
  const key = unquote(rawKey);
  const val = unquote(rawVal);
  const result = ({ '=': 'EQUAL', '!=': 'NOT_EQUAL', '<': 'LESS', '>': 'GREATER' } as const)[op as '=' | '!=' | '<' | '>'];
  const num = () => {
    if (!/^-?\d+$/.test(val)) throw new CliError(`invalid txn compare request: ${line}`, Exit.InvalidInput);
    return BigInt(val);
  };
  switch (target) {
    case 'ver':
    case 'version': return { key, target: 'VERSION', result, value: num() };
    case 'c':
    case 'create': return { key, target: 'CREATE', result, value: num() };
    case 'm':
    case 'mod': return { key, target: 'MOD', result, value: num() };
    case 'val':
    case 'value': return { key, target: 'VALUE', result, value: val };
    case 'lease': return { key, target: 'LEASE', result, value: num() };
    default: throw new CliError(`malformed comparison: ${line} (unknown target ${target})`, Exit.InvalidInput);
  }
}

/** One request line: get/put/del with their flags. */
export function parseRequest(line: string): Op {
  const words = argify(line);
  const p = parseArgs(words, [...GLOBAL_FLAGS, ...COMMAND_FLAGS]);
  const [cmd, ...args] = p.positional;
  switch (cmd) {
    case 'get': {
      if (args.length < 1 || args.length > 2) throw new CliError(`invalid txn request: ${line}`, Exit.InvalidInput);
      return { get: { key: args[0], options: getOptions(p, args) } };
    }
    case 'put': {
      if (args.length !== 2) throw new CliError(`invalid txn request: ${line}`, Exit.InvalidInput);
      const lease = flagStr(p, 'lease', '0');
      return { put: { key: args[0], value: args[1], options: { lease: lease === '0' ? '0' : BigInt(`0x${lease}`).toString(), prevKv: flagBool(p, 'prev-kv') } } };
    }
    case 'del':
    case 'delete': {
      if (args.length < 1 || args.length > 2) throw new CliError(`invalid txn request: ${line}`, Exit.InvalidInput);
      return { delete: { key: args[0], options: deleteOptions(p, args) } };
    }
    default:
      void flagInt;
      throw new CliError(`invalid txn request: ${line}`, Exit.InvalidInput);
  }
}

/** Reads lines until an empty line (or the end). */
export type LineReader = () => Promise<string | null>;

export interface ParsedTxn {
  compare: Compare[];
  success: Op[];
  failure: Op[];
}

/** Reads the three blocks; `prompt` prints the interactive headings. */
export async function readTxn(next: LineReader, prompt?: (s: string) => void): Promise<ParsedTxn> {
  const block = async <X>(heading: string, parse: (l: string) => X): Promise<X[]> => {
    prompt?.(heading);
    const out: X[] = [];
    for (;;) {
      const line = await next();
      if (line === null || line.trim() === '') return out;
      out.push(parse(line));
    }
  };
  const compare = await block('compares:\n', parseCompare);
  const success = await block('success requests (get, put, del):\n', parseRequest);
  const failure = await block('failure requests (get, put, del):\n', parseRequest);
  return { compare, success, failure };
}
