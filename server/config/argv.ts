// Command-line tokenizing in the style of Go's flag package (as the reference uses): -flag, --flag,
// -flag=value, --flag value; booleans take no separate value; "--" ends the flags.
import type { Release } from '../releases.js';
import { ConfigError } from './errors.js';
import { FLAGS, type FlagSpec } from './flag-table.js';

export interface CommandLine {
  /** Flag name -> its text value (the last occurrence wins, as in Go). */
  values: Map<string, string>;
  /** -h / --help was given. */
  help: boolean;
}

/** Split argv into flag values, checking names against the flags `release` knows. */
export function tokenize(argv: readonly string[], known: ReadonlyMap<string, FlagSpec>, release: Release): CommandLine {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.length < 2 || arg[0] !== '-') {
      throw new ConfigError(`unexpected argument ${JSON.stringify(arg)}: svc takes only flags (e.g. --name=infra1); see --help`);
    }
    const dashes = arg[1] === '-' ? 2 : 1;
    if (dashes === 2 && arg.length === 2) {
      const rest = argv.slice(i + 1);
      if (rest.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(rest[0])} after "--": svc takes only flags`);
      break;
    }
    const body = arg.slice(dashes);
    if (body === '' || body[0] === '-' || body[0] === '=') throw new ConfigError(`bad flag syntax: ${arg}`);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = known.get(name);
    if (spec === undefined) {
      if (name === 'h' || name === 'help') return { values, help: true };
      if (release.unsupportedFlags.includes(name)) throw new ConfigError(unsupportedMessage(name), name);
      // The reference's own words (Go's flag package), then which release lacks it and what to use instead.
      const old = FLAGS.find((f) => f.name === name);
      const instead = old?.sameAs !== undefined && known.has(old.sameAs) ? `; use --${old.sameAs}` : old?.gate !== undefined && known.has('feature-gates') ? `; use --feature-gates=${old.gate}=true` : '';
      const why = !release.unknownFlags.includes(name) ? '' : ` (not available in release ${release.version}${instead})`;
      throw new ConfigError(`flag provided but not defined: -${name}${why}; see --help for the flags of this release`, name);
    }
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.kind === 'bool') value = 'true';
    else if (i + 1 < argv.length) value = argv[++i];
    else throw new ConfigError(`flag needs an argument: --${name}`, name);
    values.set(name, value);
  }
  return { values, help: false };
}

/** The refusal of a reference flag svc does not implement. */
export function unsupportedMessage(name: string, detail = ''): string {
  return `flag --${name} is not supported by svc${detail}`;
}
