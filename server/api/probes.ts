// /livez and /readyz (and /<probe>/<check>): the reference's named health checks, each a line "[+]name ok" or
// "[-]name failed: <why>"; ?exclude=<check> skips one, ?verbose lists them on success too.
import type { Request, Response } from 'express';
import type { HttpCore } from '../core/interfaces.js';

type Check = (server: HttpCore) => Promise<void>;

/** A range of one key, KeysOnly, on this member's backend (the reference's serializable read as root). */
const serializableRead: Check = async (server) => {
  server.backend.readTx().range('key', new Uint8Array([0]), null, 1);
};

const CHECKS: Record<'livez' | 'readyz', Array<[string, Check]>> = {
  livez: [['serializable_read', serializableRead]],
  readyz: [
    ['data_corruption', async (s) => {
      if (s.alarms.some((a) => a.alarm === 'CORRUPT')) throw new Error('alarm activated: CORRUPT');
    }],
    ['serializable_read', serializableRead],
    ['linearizable_read', async (s) => {
      await s.linearizableReadNotify(1000);
      await serializableRead(s);
    }],
    ['non_learner', async (s) => {
      if (s.isLearner()) throw new Error('not supported for learner');
    }],
  ],
};

/** Serves GET /livez, /readyz and their per-check paths. */
export async function serveProbe(server: HttpCore, probe: 'livez' | 'readyz', only: string | undefined, req: Request, res: Response): Promise<void> {
  const q = req.query.exclude;
  const excluded = new Set((Array.isArray(q) ? q : q === undefined ? [] : [q]).map(String));
  let checks = CHECKS[probe];
  if (only !== undefined) {
    checks = checks.filter(([name]) => name === only);
    if (checks.length === 0) return void res.status(404).type('text/plain; charset=utf-8').send('404 page not found\n');
  } else {
    const missing = [...excluded].filter((x) => !checks.some(([name]) => name === x));
    if (missing.length > 0) server.logger.warn('some health checks cannot be excluded', { 'missing-health-checks': missing.map((m) => JSON.stringify(m)).join(',') });
    checks = checks.filter(([name]) => !excluded.has(name));
  }
  let lines = '';
  let failed = '';
  for (const [name, check] of checks) {
    try {
      await check(server);
      lines += `[+]${name} ok\n`;
    } catch (e) {
      failed ||= (e as Error).message;
      lines += `[-]${name} failed: ${(e as Error).message}\n`;
    }
  }
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.type('text/plain; charset=utf-8');
  if (failed !== '') {
    server.logger.error('Health check error', { path: `/${probe}`, reason: failed, 'status-code': 503 });
    return void res.status(503).send(lines + '\n');
  }
  res.status(200).send((req.query.verbose !== undefined ? lines : '') + 'ok\n');
}
