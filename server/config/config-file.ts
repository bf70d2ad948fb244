// The --config-file YAML: the same keys as the flags (kebab-case), TLS settings in the
// client-transport-security / peer-transport-security sections, log-outputs as a list.
import { readFileSync } from 'node:fs';
import { load, YAMLException } from 'js-yaml';
import type { Release } from '../releases.js';
import { ConfigError } from './errors.js';
import { unsupportedMessage } from './argv.js';
import type { FlagSpec } from './flag-table.js';
import type { Setting } from './settings.js';

const SECTIONS: Readonly<Record<string, string>> = { 'client-transport-security': '', 'peer-transport-security': 'peer-' };
// Section key -> flag name (before the peer- prefix).
const SECTION_KEYS: Readonly<Record<string, { client: string; peer: string }>> = {
  'cert-file': { client: 'cert-file', peer: 'peer-cert-file' },
  'key-file': { client: 'key-file', peer: 'peer-key-file' },
  'client-cert-file': { client: 'client-cert-file', peer: 'peer-client-cert-file' },
  'client-key-file': { client: 'client-key-file', peer: 'peer-client-key-file' },
  'client-cert-auth': { client: 'client-cert-auth', peer: 'peer-client-cert-auth' },
  'trusted-ca-file': { client: 'trusted-ca-file', peer: 'peer-trusted-ca-file' },
  'auto-tls': { client: 'auto-tls', peer: 'peer-auto-tls' },
  'crl-file': { client: 'client-crl-file', peer: 'peer-crl-file' },
  'ca-file': { client: 'ca-file', peer: 'peer-ca-file' },
};

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Read and check a config file; returns its settings by flag name. */
export function loadConfigFile(path: string, known: ReadonlyMap<string, FlagSpec>, release: Release): Map<string, Setting> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${JSON.stringify(path)}: ${(e as Error).message}`, 'config-file');
  }
  const out = new Map<string, Setting>();
  // An empty (or comment-only) file means "all defaults"; the YAML parser would call it an error.
  if (text.split('\n').every((l) => /^\s*(#.*)?$/.test(l))) return out;
  let doc: unknown;
  try {
    doc = load(text);
  } catch (e) {
    if (e instanceof YAMLException) {
      const mark = (e as unknown as { mark?: { line: number; column: number } }).mark;
      const reason = (e as unknown as { reason?: string }).reason ?? e.message.split('\n')[0];
      const at = mark ? `line ${mark.line + 1}, column ${mark.column + 1}` : 'an unknown line';
      throw new ConfigError(`config file ${JSON.stringify(path)}: malformed YAML at ${at}: ${reason}`, 'config-file');
    }
    throw new ConfigError(`config file ${JSON.stringify(path)}: cannot parse: ${(e as Error).message}`, 'config-file');
  }
  if (doc === null || doc === undefined) return out;
  if (!isMapping(doc)) throw new ConfigError(`config file ${JSON.stringify(path)}: expected a mapping of keys (e.g. "name: infra1") at the top level`, 'config-file');

  const unknownKey = (key: string, hint: string): ConfigError =>
    new ConfigError(`config file ${JSON.stringify(path)}: unknown key ${JSON.stringify(key)}${hint}`, key);

  for (const [key, value] of Object.entries(doc)) {
    const prefix = SECTIONS[key];
    if (prefix !== undefined) {
      if (value === null || value === undefined) continue;
      if (!isMapping(value)) throw new ConfigError(`config file ${JSON.stringify(path)}: ${key} must be a mapping (cert-file, key-file, client-cert-auth, trusted-ca-file, auto-tls)`, key);
      for (const [sub, subValue] of Object.entries(value)) {
        const names = SECTION_KEYS[sub];
        const flag = names === undefined ? undefined : prefix === '' ? names.client : names.peer;
        if (flag === undefined || !known.has(flag)) {
          throw unknownKey(`${key}.${sub}`, ` (allowed: ${Object.keys(SECTION_KEYS).filter((k) => known.has(prefix === '' ? SECTION_KEYS[k].client : SECTION_KEYS[k].peer)).join(', ')})`);
        }
        if (subValue === null || subValue === undefined) continue;
        out.set(flag, { raw: subValue, origin: { flag, where: `config file key "${key}.${sub}"` } });
      }
      continue;
    }
    const spec = known.get(key);
    if (spec === undefined && release.unsupportedFlags.includes(key)) throw new ConfigError(`config file ${JSON.stringify(path)}: key ${JSON.stringify(key)}: ${unsupportedMessage(key)}`, key);
    if (spec === undefined || spec.notInFile) throw unknownKey(key, hintFor(key, known, release));
    if (value === null || value === undefined) continue;
    if (key === 'log-outputs' && !Array.isArray(value)) {
      throw new ConfigError(`config file ${JSON.stringify(path)}: key "log-outputs" must be a list, e.g. "log-outputs: [default]" (got ${JSON.stringify(value)})`, key);
    }
    if (key === 'log-output' && release.embed.logOutputField === 'logOutput' && typeof value !== 'string') {
      throw new ConfigError(`config file ${JSON.stringify(path)}: key "log-output" must be a string in release ${release.version}, e.g. "log-output: default"`, key);
    }
    out.set(key, { raw: value, origin: { flag: key, where: `config file key "${key}"` } });
  }
  return out;
}

function hintFor(key: string, known: ReadonlyMap<string, FlagSpec>, release: Release): string {
  for (const [prefix, section] of [['peer-', 'peer-transport-security'], ['', 'client-transport-security']] as const) {
    for (const [sub, names] of Object.entries(SECTION_KEYS)) {
      if ((prefix === '' ? names.client : names.peer) === key && known.has(key)) return ` (TLS settings go under ${section}: as "${sub}")`;
    }
  }
  if (release.unknownFlags.includes(key)) return ` (not available in release ${release.version})`;
  const kebab = key
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase();
  if (kebab !== key && known.has(kebab) && !known.get(kebab)?.notInFile) return ` (did you mean "${kebab}"?)`;
  return '';
}
