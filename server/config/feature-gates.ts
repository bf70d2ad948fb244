// --feature-gates (3.6): Name=true|false pairs over the release's gate table, and the experimental flags 3.6 turned
// into gates. Errors carry the reference's texts.
import type { Release } from '../releases.js';
import { ConfigError } from './errors.js';
import { FLAGS } from './flag-table.js';
import type { Setting } from './settings.js';
import { asText, parseBool } from './values.js';

/** The gates given in a --feature-gates text, in order; throws the reference's parse errors. */
export function parseFeatureGates(text: string, release: Release): Map<string, boolean> {
  const out = new Map<string, boolean>();
  const fail = (why: string) => new ConfigError(`invalid value "${text}" for flag -feature-gates: ${why}`, 'feature-gates');
  for (const entry of text.split(',')) {
    const part = entry.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (eq < 0) throw fail(`missing bool value for ${name}`);
    const value = part.slice(eq + 1).trim();
    const b = goBool(value);
    if (b === undefined) throw fail(`invalid value of ${name}=${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
    if (!Object.hasOwn(release.featureGates, name)) throw fail(`unrecognized feature gate: ${name}`);
    out.set(name, b);
  }
  return out;
}

/** Every gate's value: the release default, AllAlpha/AllBeta, an experimental flag of the gate, then --feature-gates. */
export function featureGatesOf(release: Release, settings: ReadonlyMap<string, Setting>): Map<string, boolean> {
  const fg = settings.get('feature-gates');
  const fgText = fg ? asText(fg.origin, fg.raw) : '';
  const given = parseFeatureGates(fgText, release);
  const gates = new Map<string, boolean>();
  for (const [name, g] of Object.entries(release.featureGates)) {
    const all = g.stage === 'ALPHA' ? given.get('AllAlpha') : given.get('AllBeta');
    gates.set(name, given.get(name) ?? (name.startsWith('All') ? g.def : all ?? g.def));
  }
  // The experimental flags of the gates (their only names up to 3.5; 3.6 warns and refuses them next to the gate).
  for (const spec of FLAGS) {
    const s = spec.gate === undefined ? undefined : settings.get(spec.name);
    if (!s || spec.gate === undefined) continue;
    const v = parseBool(s.origin, s.raw);
    if (fgText.includes(spec.gate)) {
      const g = gates.get(spec.gate);
      throw new ConfigError(`cannot specify both flags: --${spec.name}=${v} and --feature-gates=${spec.gate}=${g} at the same time, please just use --feature-gates=${spec.gate}=${g}`, spec.name);
    }
    gates.set(spec.gate, v);
  }
  return gates;
}

/** Go's strconv.ParseBool. */
function goBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}
