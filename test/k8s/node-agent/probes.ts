// Executes one probe attempt (httpGet, tcpSocket, exec) as the kubelet would, against the pod's own IP.
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

/** Outcome of one probe attempt. */
export interface ProbeResult { ok: boolean; message: string }

/** Resolves a probe port (number or a named container port). */
export function probePort(port: number | string | undefined, c: V1Container): number {
  if (typeof port === 'number') return port;
  if (port !== undefined && /^\d+$/.test(port)) return Number(port);
  const named = c.ports?.find((p) => p.name === port);
  if (!named) throw new Error(`probe port ${String(port)} is not a port of container ${c.name}`);
  return named.containerPort;
}

/** How exec probes run their command (the agent maps it like the container's own command). */
export type ExecRunner = (command: string[], timeoutMs: number) => Promise<number>;

/** Runs one attempt of probe for container c of a pod at podIP. */
export async function runProbe(probe: V1Probe, c: V1Container, podIP: string, exec: ExecRunner): Promise<ProbeResult> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.httpGet) {
      const g = probe.httpGet;
      const port = probePort(g.port as number | string, c);
      const https = (g.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
      const headers: Record<string, string> = {};
      for (const h of g.httpHeaders ?? []) headers[h.name] = h.value;
      const status = await new Promise<number>((resolve, reject) => {
        const req = (https ? httpsRequest : httpRequest)({
          host: g.host || podIP, port, path: g.path || '/', method: 'GET', headers, timeout: timeoutMs,
          rejectUnauthorized: false,
        }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end();
      });
      return { ok: status >= 200 && status < 400, message: `HTTP ${status}` };
    }
    if (probe.tcpSocket) {
      const port = probePort(probe.tcpSocket.port as number | string, c);
      await new Promise<void>((resolve, reject) => {
        const s = connect({ host: probe.tcpSocket?.host || podIP, port, timeout: timeoutMs });
        s.once('connect', () => { s.destroy(); resolve(); });
        s.once('timeout', () => { s.destroy(); reject(new Error('timeout')); });
        s.once('error', reject);
      });
      return { ok: true, message: 'connected' };
    }
    if (probe.exec?.command?.length) {
      const code = await exec(probe.exec.command, timeoutMs);
      return { ok: code === 0, message: `exit ${code}` };
    }
    if (probe.grpc) return { ok: false, message: 'grpc probes are not supported by the test node agent' };
    return { ok: false, message: 'probe has no handler' };
  } catch (e) {
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}

/** Runs argv with env, resolving its exit code (-1 on timeout or spawn failure). */
export function execExitCode(argv: string[], env: Record<string, string>, cwd: string | undefined, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { env, cwd, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', () => { clearTimeout(timer); resolve(-1); });
    child.once('exit', (code) => { clearTimeout(timer); resolve(code ?? -1); });
  });
}
