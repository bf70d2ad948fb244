// Entry point of the svcctl client binary (bin/svcctl).
import { currentRelease, UnknownReleaseError } from '../releases.js';

export async function main(argv: string[]): Promise<number> {
  let release;
  try {
    release = currentRelease();
  } catch (e) {
    if (e instanceof UnknownReleaseError) {
      process.stderr.write(`svcctl: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (argv[0] === 'version' || argv.includes('--version')) {
    process.stdout.write(`svcctl version: ${release.version}\nAPI version: ${release.minor}\n`);
    return 0;
  }
  process.stderr.write('svcctl: no commands are available in this build yet\n');
  return 2;
}
