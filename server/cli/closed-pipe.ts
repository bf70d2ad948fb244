// How every command line program of the package (bin/svc, bin/svcctl, bin/svc-operator, bin/kubectl-svc) ends when
// the reader of its output goes away (`svc-operator local backups | head -2`): quietly, with exit status 141
// (128 + SIGPIPE, what a shell reports for a Go program such as etcdctl killed by the signal), never a stack.

/** The exit status of a program whose output pipe was closed by its reader. */
export const CLOSED_PIPE_STATUS = 141;

/** Makes a closed stdout or stderr pipe end the process quietly; each bin/ launcher calls it once, first. */
export function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(CLOSED_PIPE_STATUS);
      throw e;
    });
  }
}
