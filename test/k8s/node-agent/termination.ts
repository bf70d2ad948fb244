// Termination messages as the kubelet gives them: each container gets its own file in place of its
// terminationMessagePath (default /dev/termination-log; the path is rewritten in command/args/env like a mountPath),
// and after the process exits the file's content, at most 4096 bytes, is state.terminated.message. With
// terminationMessagePolicy FallbackToLogsOnError an empty file of a failed container gives the log's last
// 80 lines (at most 2048 bytes) instead.
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container } from '@kubernetes/client-node';

export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
const MAX_MESSAGE = 4096;
const MAX_LOG_BYTES = 2048;
const MAX_LOG_LINES = 80;

/** The container's path and the host file that stands for it (emptied for a new start). */
export function terminationFile(podDir: string, c: V1Container): { path: string; file: string } {
  const dir = join(podDir, 'termination');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, c.name);
  writeFileSync(file, '');
  return { path: c.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH, file };
}

function readTail(file: string, max: number): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  const n = Math.min(size, max);
  const buf = Buffer.alloc(n);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, n, size - n);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

/** The message of a container that exited, or undefined when there is none. */
export function terminationMessage(c: V1Container, file: string, exitCode: number, logFile: string, logOffset: number): string | undefined {
  let msg = '';
  if (existsSync(file)) {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(MAX_MESSAGE);
      msg = buf.subarray(0, readSync(fd, buf, 0, MAX_MESSAGE, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }
  if (msg === '' && exitCode !== 0 && c.terminationMessagePolicy === 'FallbackToLogsOnError') {
    // this process's output only: the log file holds every life of the container
    const size = existsSync(logFile) ? statSync(logFile).size : 0;
    const tail = readTail(logFile, Math.min(MAX_LOG_BYTES, Math.max(0, size - logOffset)));
    msg = tail.split('\n').slice(-MAX_LOG_LINES).join('\n');
  }
  return msg === '' ? undefined : msg;
}
