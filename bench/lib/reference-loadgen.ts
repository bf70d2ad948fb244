// The reference's own load generator (etcd v3.5.21 tools/benchmark, built by scripts/build-reference-benchmark.sh)
// as an alternative to the Node load generator: `npm run bench -- --loadgen=reference`. It is a Go process, so the
// load does not come from a Node event loop competing with svc's members. It runs a fixed number of requests
// (not a fixed time) and prints a text report; parseToolReport reads the figures from it.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadResult } from './load.js';

/** The figures of one report section of the tool. */
export interface ToolReport {
  seconds: number;
  opsPerSec: number;
  /** NaN when the report has no latency distribution (as for watch events). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Failed requests (the "Error distribution" counts) and the first error's text. */
  errors: number;
  firstError?: string;
}

/** Parses the report section that follows `after` (or the last section) of the tool's stdout. */
export function parseToolReport(stdout: string, after?: string): ToolReport {
  let text = stdout.replace(/\r/g, '\n');
  if (after !== undefined) {
    const at = text.indexOf(after);
    if (at < 0) throw new Error(`the benchmark tool's output has no "${after}" section`);
    text = text.slice(at + after.length);
  } else {
    const at = text.lastIndexOf('Summary:');
    if (at >= 0) text = text.slice(at);
  }
  const num = (re: RegExp) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : Number.NaN;
  };
  const seconds = num(/^\s*Total:\s+(\S+) secs\./m);
  const opsPerSec = num(/^\s*Requests\/sec:\s+(\S+)/m);
  if (Number.isNaN(seconds) || Number.isNaN(opsPerSec)) throw new Error(`the benchmark tool printed no summary:\n${stdout.slice(-2000)}`);
  let errors = 0;
  let firstError: string | undefined;
  const errAt = text.indexOf('Error distribution:');
  if (errAt >= 0) {
    for (const m of text.slice(errAt).matchAll(/^\s*\[(\d+)\]\s+(.*)$/gm)) {
      errors += Number(m[1]);
      firstError ??= m[2].trim();
    }
  }
  return {
    seconds,
    opsPerSec,
    p50Ms: num(/^\s*50% in (\S+) secs\./m) * 1000,
    p99Ms: num(/^\s*99% in (\S+) secs\./m) * 1000,
    maxMs: num(/^\s*Slowest:\s+(\S+) secs\./m) * 1000,
    errors,
    firstError,
  };
}

/** A tool report as a LoadResult (successful requests = rate x time). */
export function toLoadResult(r: ToolReport): LoadResult {
  return { ops: Math.round(r.opsPerSec * r.seconds), errors: r.errors, firstError: r.firstError, seconds: r.seconds, opsPerSec: r.opsPerSec, p50Ms: r.p50Ms, p99Ms: r.p99Ms, maxMs: r.maxMs };
}

/** Builds the tool (once, cached in ~/.cache/svc/ref) and returns its path; throws with the script's output when it cannot. */
export function buildReferenceTool(): string {
  const script = fileURLToPath(new URL('../../../scripts/build-reference-benchmark.sh', import.meta.url));
  const r = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const path = r.stdout.trim().split('\n').pop();
  if (r.status !== 0 || !path) throw new Error(`scripts/build-reference-benchmark.sh failed (exit ${r.status}); the reference load generator is not available`);
  return path;
}

/** The tool's global flags for `clients` requests in flight over `conns` connections. */
export function toolGlobalArgs(endpoints: readonly string[], clients: number, conns: number): string[] {
  return ['--precise', `--endpoints=${endpoints.join(',')}`, `--clients=${clients}`, `--conns=${conns}`];
}

/** Runs the tool; resolves with its stdout, rejects on a non-zero exit or after `timeoutMs` (then it is killed). */
export function runTool(bin: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    // The tool's gRPC logs go to stderr; keep the tail for an error message.
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`benchmark ${args.find((a) => !a.startsWith('-')) ?? ''} did not finish within ${timeoutMs / 1000} s (killed)`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`benchmark ${args.join(' ')} exited with ${code ?? signal}: ${err.split('\n').filter((l) => !l.includes('INFO')).slice(-5).join(' ')}`));
    });
  });
}
