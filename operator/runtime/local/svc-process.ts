// How a local svc server process is started: node running the compiled svc.js of a build (the members of the local
// runtime, a restore drill's scratch member).
import { pathToFileURL } from 'node:url';

/** node's arguments that run the svc server of `svcEntry` (its compiled svc.js); the member's flags follow. */
export function svcNodeArgs(svcEntry: string): string[] {
  const url = pathToFileURL(svcEntry).href;
  return ['--enable-source-maps', '-e', `import(${JSON.stringify(url)}).then((m) => m.main(process.argv.slice(1))).then((c) => { if (typeof c === 'number') process.exitCode = c; })`, '--'];
}
