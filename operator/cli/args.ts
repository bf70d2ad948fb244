// Command-line parsing of svc-operator: positional words and --flags (--flag value, --flag=value, -f value).
import { CodedError } from '../../server/coded-error.js';

/** Raised on bad usage (exit code 2). */
export class UsageError extends CodedError<'USAGE'> {
  constructor(message: string) {
    super('USAGE', message);
  }
}

/** Parsed arguments. */
export interface ParsedArgs {
  words: string[];
  flags: Map<string, string>;
}

const BOOLEAN = new Set(['help', 'h', 'keep', 'watch', 'w', 'dry-run']);
const ALIASES: Record<string, string> = { f: 'file', o: 'output', h: 'help', n: 'namespace', w: 'watch' };

/** Splits argv into positional words and flags; `known` lists accepted flag names. */
export function parseArgs(argv: readonly string[], known: readonly string[]): ParsedArgs {
  const words: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('-') || a === '-') {
      words.push(a);
      continue;
    }
    const body = a.replace(/^--?/, '');
    const eq = body.indexOf('=');
    let name = eq >= 0 ? body.slice(0, eq) : body;
    name = ALIASES[name] ?? name;
    if (!known.includes(name) && !BOOLEAN.has(name)) throw new UsageError(`unknown flag ${a}`);
    if (eq >= 0) flags.set(name, body.slice(eq + 1));
    else if (BOOLEAN.has(name)) flags.set(name, 'true');
    else {
      const v = argv[i + 1];
      if (v === undefined) throw new UsageError(`flag ${a} needs a value`);
      flags.set(name, v);
      i++;
    }
  }
  return { words, flags };
}
