// Command-line parsing in the reference client's style (pflag): --name=value, --name value, -w value, bool
// flags without a value, "--" ends the flags; global flags may appear anywhere and also come from
// SVCCTL_<NAME> environment variables (a flag on the command line wins).
import { CliError } from './errors.js';

export type FlagType = 'bool' | 'string';

export interface FlagSpec {
  name: string;
  type: FlagType;
  short?: string;
}

/** Flags of one type without a shorthand. */
function ofType(type: FlagType, names: string[]): FlagSpec[] {
  return names.map((name) => ({ name, type }));
}

/** Flags every command accepts. */
export const GLOBAL_FLAGS: FlagSpec[] = [
  ...ofType('string', ['endpoints', 'dial-timeout', 'command-timeout', 'keepalive-time', 'keepalive-timeout', 'cacert', 'cert', 'key',
    'user', 'password', 'discovery-srv-name']),
  ...ofType('bool', ['insecure-skip-tls-verify', 'insecure-transport', 'insecure-discovery', 'hex', 'debug', 'version']),
  { name: 'write-out', type: 'string', short: 'w' },
  { name: 'discovery-srv', type: 'string', short: 'd' },
  { name: 'help', type: 'bool', short: 'h' },
];

/** Flags of the v3 commands (one table: no name has two types). */
export const COMMAND_FLAGS: FlagSpec[] = [
  ...ofType('bool', ['prefix', 'from-key', 'keys-only', 'count-only', 'print-value-only', 'prev-kv', 'ignore-value', 'ignore-lease',
    'keys', 'cluster', 'learner', 'physical', 'no-password', 'progress-notify', 'once', 'detail', 'skip-hash-check']),
  { name: 'interactive', type: 'bool', short: 'i' },
  ...ofType('string', ['lease', 'limit', 'rev', 'sort-by', 'order', 'consistency', 'peer-urls', 'new-user-password', 'min-mod-rev',
    'max-mod-rev', 'min-create-rev', 'max-create-rev', 'data-dir', 'wal-dir', 'name', 'initial-cluster',
    'initial-cluster-token', 'initial-advertise-peer-urls']),
];

export interface Parsed {
  /** Flag values by long name; bools as "true"/"false". */
  flags: Map<string, string>;
  positional: string[];
}

/** Splits argv into flags and positional arguments. */
export function parseArgs(argv: string[], specs: FlagSpec[]): Parsed {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    let spec: FlagSpec | undefined;
    let value: string | undefined;
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      spec = byName.get(name);
      if (!spec) throw new CliError(`unknown flag: --${name}`);
      if (eq >= 0) value = a.slice(eq + 1);
    } else if (a.startsWith('-') && a.length > 1 && a !== '-') {
      const name = a.slice(1, 2);
      spec = byShort.get(name);
      if (!spec) throw new CliError(`unknown shorthand flag: '${name}' in ${a}`);
      const rest = a.slice(2);
      if (rest !== '') value = rest.startsWith('=') ? rest.slice(1) : rest;
    } else {
      positional.push(a);
      continue;
    }
    if (spec.type === 'bool') {
      const v = value ?? 'true';
      if (!['true', 'false', '1', '0', 't', 'f', 'TRUE', 'FALSE', 'True', 'False'].includes(v)) {
        throw new CliError(`invalid argument "${v}" for "--${spec.name}" flag: strconv.ParseBool: parsing "${v}": invalid syntax`);
      }
      flags.set(spec.name, ['true', '1', 't', 'TRUE', 'True'].includes(v) ? 'true' : 'false');
    } else {
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new CliError(`flag needs an argument: --${spec.name}`);
        value = argv[++i];
      }
      flags.set(spec.name, value);
    }
  }
  return { flags, positional };
}

/** Fills global flags missing from the command line from SVCCTL_<NAME> variables. */
export function applyEnv(flags: Map<string, string>, env: NodeJS.ProcessEnv): void {
  for (const spec of GLOBAL_FLAGS) {
    if (flags.has(spec.name)) continue;
    const v = env[`SVCCTL_${spec.name.toUpperCase().replace(/-/g, '_')}`];
    if (v !== undefined && v !== '') flags.set(spec.name, v);
  }
}

/** A bool flag's value. */
export function flagBool(p: Parsed, name: string, dflt = false): boolean {
  const v = p.flags.get(name);
  return v === undefined ? dflt : v === 'true';
}

/** A string flag's value. */
export function flagStr(p: Parsed, name: string, dflt = ''): string {
  return p.flags.get(name) ?? dflt;
}

/** An integer flag's value. */
export function flagInt(p: Parsed, name: string, dflt = 0): number {
  const v = p.flags.get(name);
  if (v === undefined) return dflt;
  if (!/^-?\d+$/.test(v)) throw new CliError(`invalid argument "${v}" for "--${name}" flag: strconv.ParseInt: parsing "${v}": invalid syntax`);
  return Number(v);
}
