// The --help text: the flags this release knows, grouped, with defaults and deprecation notes.
import type { Release } from '../releases.js';
import { defaultText, enumValues, flagsOf, type FlagSpec } from './flag-table.js';

const GROUPS: ReadonlyArray<[FlagSpec['group'], string]> = [
  ['member', 'Member'],
  ['clustering', 'Clustering'],
  ['security', 'Security'],
  ['logging', 'Logging'],
  ['profiling', 'Profiling and monitoring'],
  ['unsafe', 'Unsafe'],
  ['experimental', 'Experimental'],
];

/** The usage text printed by `svc --help` for this release. */
export function usage(release: Release): string {
  const flags = [...flagsOf(release).values()];
  const lines: string[] = [
    'Usage:',
    '',
    '  svc [flags]',
    '    Start a svc server.',
    '',
    '  svc --version',
    '    Print the version and exit.',
    '',
    '  svc -h | --help',
    '    Print this help and exit.',
    '',
    '  svc --config-file <file.yaml>',
    '    Read the configuration from a YAML file with the same keys as the flags (TLS settings under',
    '    client-transport-security / peer-transport-security). Other flags and SVC_* variables are then ignored.',
    '',
    `Flags of release ${release.version}. Each flag can also be set with the environment variable`,
    'SVC_<FLAG_NAME> (upper case, dashes as underscores), e.g. SVC_DATA_DIR for --data-dir; the command line wins.',
  ];
  for (const [group, title] of GROUPS) {
    const inGroup = flags.filter((f) => f.group === group);
    if (inGroup.length === 0) continue;
    lines.push('', `${title}:`, '');
    for (const f of inGroup) {
      const def = defaultText(f, release);
      const shown = f.kind === 'bool' ? `'${def}'` : def === '' ? '' : `'${def}'`;
      lines.push(`  --${f.name}${shown === '' ? '' : ' ' + shown}`);
      lines.push(`      ${f.help}`);
      const values = enumValues(f, release);
      if (f.kind === 'enum' && values.length > 0) lines.push(`      Values: ${values.join(', ')}.`);
      if (f.defaultOnly) lines.push(`      NOT IMPLEMENTED by svc: only the default value is accepted.`);
      const note = release.deprecatedFlags[f.name];
      if (note !== undefined) lines.push(`      DEPRECATED: ${note}.`);
      for (const v of values) {
        const valued = release.deprecatedFlags[`${f.name}=${v}`];
        if (valued !== undefined) lines.push(`      DEPRECATED value ${v}: ${valued}.`);
      }
    }
  }
  if (release.unsupportedFlags.length > 0) {
    lines.push('', `Flags of the reference ${release.minor} that svc does not support (refused, exit status 2):`, '');
    let line = ' ';
    for (const f of release.unsupportedFlags) {
      if (line.length + f.length + 3 > 110) {
        lines.push(line);
        line = ' ';
      }
      line += ` --${f}`;
    }
    lines.push(line);
  }
  return lines.join('\n') + '\n';
}
