// Entry point of the svc server binary (bin/svc).
import { currentRelease, UnknownReleaseError } from '../releases.js';

export async function main(argv: string[]): Promise<number> {
  let release;
  try {
    release = currentRelease();
  } catch (e) {
    if (e instanceof UnknownReleaseError) {
      process.stderr.write(`svc: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`svc Version: ${release.version}\n`);
    return 0;
  }
  process.stderr.write('svc: the server is not yet available in this build\n');
  return 2;
}
