// parseServerConfig: command line (Go-flag style) + SVC_* environment variables, or a --config-file,
// into a validated ServerConfig for the release SVC_VERSION selected.
import type { Release } from '../releases.js';
import { buildConfig } from './build.js';
import { loadConfigFile } from './config-file.js';
import { ConfigError } from './errors.js';
import { defaultText, deprecationWarnings, envName, flagsOf, specOf, type FlagSpec } from './flag-table.js';
import { tokenize, unsupportedMessage } from './argv.js';
import type { Setting } from './settings.js';
import type { ParseResult, ServerConfig } from './types.js';
import { parseBool, parseDurationMs, parseList } from './values.js';

export { ConfigError } from './errors.js';
export { usage } from './usage.js';
export type { ParseAction, ParseResult, ServerConfig, TlsConfig } from './types.js';

// Flags that are never read from the environment: SVC_VERSION selects the release, not --version.
const NOT_FROM_ENV = new Set(['version', 'config-file']);
// SVC_* variables that are not flags and must not be reported as unrecognized.
const NON_FLAG_VARS = new Set(['SVC_VERSION', 'SVC_CONFIG_FILE', 'SVC_HOSTS_FILE', 'SVC_PROTO_DIR', 'SVC_WATCH_PROGRESS_NOTIFY_MS', 'SVC_AUTO_COMPACTION_REVISION_INTERVAL_MS']);

/** Parse the server's command line and environment for `release`. Throws ConfigError on bad input. */
export function parseServerConfig(argv: string[], env: NodeJS.ProcessEnv, release: Release): ParseResult {
  const known = flagsOf(release);
  const cmd = tokenize(argv, known, release);
  if (cmd.help) return { config: defaultConfig(release), warnings: [], action: 'help' };
  const versionText = cmd.values.get('version');
  if (versionText !== undefined && parseBool({ flag: 'version', where: '--version' }, versionText)) {
    return { config: defaultConfig(release), warnings: [], action: 'version' };
  }

  const warnings: string[] = [];
  const envFlags = envFlagNames(known);
  const configFile = cmd.values.get('config-file') ?? env.SVC_CONFIG_FILE ?? '';
  if (configFile !== '') {
    const ignoredFlags = [...cmd.values.keys()].filter((n) => n !== 'config-file');
    if (ignoredFlags.length > 0) warnings.push(`--config-file is given: ignoring the command-line flags ${ignoredFlags.map((n) => '--' + n).join(', ')}`);
    const ignoredVars = Object.keys(env).filter((k) => envFlags.has(k) && env[k] !== undefined);
    if (ignoredVars.length > 0) warnings.push(`--config-file is given: ignoring the environment variables ${ignoredVars.join(', ')}`);
    const settings = loadConfigFile(configFile, known, release);
    addDeprecations(settings, release, warnings);
    renameSettings(settings);
    const config = buildConfig(settings, known, release, warnings, { mode: 'file', configFile });
    return { config, warnings, action: 'run', unsupported: unsupportedSettings(settings, known, release) };
  }

  const settings = new Map<string, Setting>();
  for (const [name, value] of cmd.values) settings.set(name, { raw: value, origin: { flag: name, where: `--${name}` } });
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith('SVC_') || value === undefined || NON_FLAG_VARS.has(key)) continue;
    const name = envFlags.get(key);
    const flag = key.slice(4).toLowerCase().replace(/_/g, '-');
    if (name === undefined && release.unsupportedFlags.includes(flag)) throw new ConfigError(`${unsupportedMessage(flag)} (set by the environment variable ${key})`, flag);
    if (name === undefined) {
      warnings.push(`unrecognized environment variable ${key}=${value}`);
      continue;
    }
    if (cmd.values.has(name)) {
      const msg = `conflicting environment variable ${key} is shadowed by the command-line flag --${name} (unset the variable or drop the flag)`;
      if (release.shadowedEnvVar === 'error') throw new ConfigError(msg, name);
      warnings.push(msg);
      continue;
    }
    settings.set(name, { raw: value, origin: { flag: name, where: `environment variable ${key}` } });
  }
  addDeprecations(settings, release, warnings);
  renameSettings(settings);
  const config = buildConfig(settings, known, release, warnings, { mode: 'flags', configFile: '' });
  return { config, warnings, action: 'run', unsupported: unsupportedSettings(settings, known, release) };
}

/** The configuration with every default of `release` (what `svc` with no flags would run with). */
export function defaultConfig(release: Release): ServerConfig {
  return buildConfig(new Map(), flagsOf(release), release, [], { mode: 'flags', configFile: '' });
}

function envFlagNames(known: ReadonlyMap<string, FlagSpec>): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of known.keys()) if (!NOT_FROM_ENV.has(name)) out.set(envName(name), name);
  return out;
}

function addDeprecations(settings: ReadonlyMap<string, Setting>, release: Release, warnings: string[]): void {
  for (const [name, s] of settings) {
    const value = typeof s.raw === 'string' || typeof s.raw === 'number' || typeof s.raw === 'boolean' ? String(s.raw) : undefined;
    for (const w of deprecationWarnings(release, name, value)) if (!warnings.includes(w)) warnings.push(w);
  }
}

/** 3.5's experimental names set the settings of their 3.6 names; both at once is the reference's error. */
function renameSettings(settings: Map<string, Setting>): void {
  for (const [name, s] of [...settings]) {
    const to = specOf(name)?.sameAs;
    if (to === undefined) continue;
    if (settings.has(to)) throw new ConfigError(`cannot set --${name} and --${to} at the same time, please use --${to} only`, name);
    settings.delete(name);
    settings.set(to, s);
  }
}

/** Settings of flags svc only parses (defaultOnly) whose value differs from the default: refusal messages. */
export function unsupportedSettings(settings: ReadonlyMap<string, Setting>, known: ReadonlyMap<string, FlagSpec>, release: Release): string[] {
  const out: string[] = [];
  for (const [name, s] of settings) {
    const spec = known.get(name);
    if (!spec?.defaultOnly) continue;
    const def = defaultText(spec, release);
    const norm = (raw: unknown): string => {
      if (spec.kind === 'bool') return String(parseBool(s.origin, raw));
      if (spec.kind === 'duration') return String(parseDurationMs(s.origin, raw));
      if (spec.kind === 'list') return parseList(s.origin, raw).join(',');
      return String(raw).trim();
    };
    if (norm(s.raw) !== norm(def)) out.push(unsupportedMessage(name, ` (svc implements only its default, ${name}=${def === '' ? '""' : def}; got ${String(s.raw)} from ${s.origin.where})`));
  }
  return out;
}
