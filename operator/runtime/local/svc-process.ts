// How the local runtime's processes are started: node running a compiled entry of a build that exports main(argv)
// (svc.js: the members, a restore drill's scratch member; the operator's main.js: the backup agent).
import { pathToFileURL } from 'node:url';

/** node's arguments that run main() of `entry` (e.g. the svc server's compiled svc.js); its flags follow. */
export function svcNodeArgs(entry: string): string[] {
  const url = pathToFileURL(entry).href;
  return ['--enable-source-maps', '-e', `import(${JSON.stringify(url)}).then((m) => m.main(process.argv.slice(1))).then((c) => { if (typeof c === 'number') process.exitCode = c; })`, '--'];
}
