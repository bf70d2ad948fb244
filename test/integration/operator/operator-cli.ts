// `svc-operator <args>` as its own process, for the tests of the local runtime's command line.
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MAIN = fileURLToPath(new URL('../../../operator/cli/main.js', import.meta.url));

/** `svc-operator <args>` started as its own process: its output so far, and its end. */
export interface StartedCli {
  pid: number;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>;
}

/** Starts `svc-operator <args>` as its own process (stdout and stderr together, as a terminal shows them). */
export function startOperatorCli(args: string[], env: NodeJS.ProcessEnv = {}): StartedCli {
  const script = `import(${JSON.stringify(pathToFileURL(MAIN).href)}).then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  const child = spawn(process.execPath, ['-e', script, '--', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, out })));
  return { pid: child.pid!, output: () => out, exited };
}

/** Runs `svc-operator <args>` as its own process; resolves with its exit status, signal and output. */
export function operatorCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return startOperatorCli(args, env).exited;
}

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Runs `bin/<program> <args>` (the launcher a user runs) with its output pipe closed by the reader before the program
 * writes (as `| head -2` does once it has its lines); resolves with its exit status and what it wrote on stderr.
 */
export function closedPipeCli(program: 'svc' | 'svcctl' | 'svc-operator' | 'kubectl-svc', args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`${REPO}bin/${program}`, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}
