// HTTP/1.1 on the client URL: /version, /health, /metrics, the /v3 JSON gateway (and /v3beta as the release
// table says), PUT /config/local/log, and the legacy /v2/keys API when --enable-v2 is on.
import express, { type Request, type Response, type NextFunction } from 'express';
import type { HealthCore, HttpCore } from '../core/interfaces.js';
import { ServerError, Code } from '../core/errors.js';
import { V2Error } from '../core/v2store.js';
import type { V3Api } from './v3/handlers.js';
import type { MemberMetrics } from './metrics.js';
import { GATEWAY_ROUTES, GatewayInputError, isGatewayStream, jsonToMessage, messageToJson, parseGatewayJson } from './gateway.js';
import { serveGatewayStream } from './gateway-streams.js';
import { serveProbe } from './probes.js';

export interface HttpAppOptions {
  server: HttpCore;
  api: V3Api;
  metrics: MemberMetrics;
  /** Change the log level at run time; throws on an unknown level name. */
  setLogLevel(level: string): void;
  /** --enable-grpc-gateway (default true): serve the JSON gateway under /v3 (and /v3beta). */
  enableGateway?: boolean;
  /**
   * --max-concurrent-streams: gateway calls open at once. The reference's gateway makes its calls over one gRPC
   * client connection to its own server, so they share that connection's stream limit and the calls over it
   * wait for a stream to end; svc's gateway calls share the limit per member. Default: no limit.
   */
  maxConcurrentStreams?: number;
}

/**
 * A pool of `limit` slots: `take(res)` resolves true once the call holds a slot (given back when `res` closes,
 * to the longest waiter first), or false when the caller went away while waiting.
 */
export function callSlots(limit: number): (res: Response) => Promise<boolean> {
  // No limit (the default): nothing to count or to wait for on every call.
  if (limit === Infinity) return (res) => Promise.resolve(!res.closed);
  let used = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else used--;
  };
  return (res) =>
    new Promise<boolean>((resolve) => {
      const hold = () => {
        res.once('close', release);
        resolve(true);
      };
      if (res.closed) return resolve(false);
      if (used < limit) {
        used++;
        return hold();
      }
      const gone = () => {
        waiting.splice(waiting.indexOf(turn), 1);
        resolve(false);
      };
      const turn = () => {
        res.off('close', gone);
        hold();
      };
      waiting.push(turn);
      res.once('close', gone);
    });
}


export function createHttpApp(o: HttpAppOptions): express.Express {
  const { server, api, metrics } = o;
  const release = server.opts.release;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const takeSlot = callSlots(o.maxConcurrentStreams ?? Infinity);
  const raw = express.raw({ type: () => true, limit: server.opts.maxRequestBytes * 2 + 1024 * 1024 });

  app.all('/version', (req, res) => {
    if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
    res.json(server.versionInfo());
  });

  app.all('/health', async (req, res) => {
    if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
    // ?exclude=NOSPACE (repeatable): alarms of those types do not make the member unhealthy, as the reference 3.5
    const q = req.query.exclude;
    const h = await checkHealth(server, 1000, new Set((Array.isArray(q) ? q : q === undefined ? [] : [q]).map(String)));
    (h.ok ? metrics.healthSuccess : metrics.healthFailures).inc();
    const body: Record<string, string> = { health: String(h.ok) };
    if (release.healthReason) body.reason = h.reason;
    // The reference answers JSON with a text/plain content type; clients parse the body either way.
    res.status(h.ok ? 200 : 503).type('text/plain; charset=utf-8').send(JSON.stringify(body));
  });

  if (release.probes) {
    app.all(/^\/(livez|readyz)(\/[a-z_]+)?\/?$/, (req, res) => {
      if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
      const m = /^\/(livez|readyz)(?:\/([a-z_]+))?/.exec(req.path)!;
      void serveProbe(server, m[1] as 'livez' | 'readyz', m[2], req, res);
    });
  }

  app.all('/metrics', async (req, res) => {
    if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });

  app.all('/config/local/log', raw, (req, res) => {
    if (req.method !== 'PUT') return methodNotAllowed(res, 'PUT');
    if (release.configLocalLog === 'deprecated') {
      server.logger.warn('/config/local/log is deprecated and will be removed; use --log-level at start', {});
      res.setHeader('Warning', '299 - "/config/local/log is deprecated"');
    }
    let level: unknown;
    try {
      level = (JSON.parse(bodyText(req)) as { Level?: unknown }).Level;
    } catch (e) {
      return res.status(400).json({ message: `invalid JSON body: ${(e as Error).message}` });
    }
    if (typeof level !== 'string') return res.status(400).json({ message: 'the body must be {"Level": "<LEVEL>"}' });
    try {
      o.setLogLevel(level);
    } catch (e) {
      return res.status(400).json({ message: (e as Error).message });
    }
    server.logger.info('changed log level', { level });
    res.status(204).end();
  });

  const gateway = async (path: string, req: Request, res: Response) => {
    const route = GATEWAY_ROUTES[path];
    const handler = route && api.handler(route.method);
    const streaming = isGatewayStream(path);
    if (!streaming && (!route || !handler)) return sendGrpcError(res, new ServerError(Code.NotFound, `Not Found: ${path}`, 404));
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
    try {
      const body = bodyText(req);
      if (Buffer.byteLength(body) > server.opts.maxRequestBytes) throw new ServerError(Code.InvalidArgument, 'etcdserver: request is too large');
      let json: unknown;
      try {
        json = body.trim() === '' ? {} : parseGatewayJson(body);
      } catch (e) {
        throw new GatewayInputError((e as Error).message);
      }
      if (!(await takeSlot(res))) return;
      const token = req.headers.authorization;
      if (isGatewayStream(path)) {
        serveGatewayStream(path, json, token, req, res, server, api, sendGrpcError);
        return;
      }
      // A caller that hangs up ends a call that waits (campaign, lock), as a cancelled gRPC call does.
      const ac = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) ac.abort();
      });
      const answer = await handler!(jsonToMessage(route.request, json), { token, signal: ac.signal });
      res.json(messageToJson(route.response, answer));
    } catch (e) {
      sendGrpcError(res, e);
    }
  };

  if (o.enableGateway !== false) {
    app.all(/^\/v3\/.+/, raw, (req, res) => void gateway(req.path, req, res));
    app.all(/^\/v3beta\/.+/, raw, (req, res) => {
      const v3 = '/v3/' + req.path.slice('/v3beta/'.length);
      switch (release.v3betaGateway) {
        case 'serve':
          return void gateway(v3, req, res);
        case 'redirect':
          // 308 keeps the method and body, so a client that follows redirects repeats the POST at /v3.
          res.setHeader('Location', v3 + (req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : ''));
          return void res.status(308).json({ message: `${req.path} moved to ${v3}: the /v3beta gateway is deprecated` });
        default:
          return void res.status(404).json({ error: `${req.path}: the /v3beta gateway was removed in ${release.minor}; use /v3`, code: Code.NotFound });
      }
    });
  }

  if (server.opts.enableV2) mountV2(app, server, raw);

  app.use((_req: Request, res: Response) => {
    res.status(404).type('text/plain').send('404 page not found\n');
  });
  app.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.too.large') return sendGrpcError(res, new ServerError(Code.InvalidArgument, 'etcdserver: request is too large'));
    server.logger.warn('HTTP request failed', { error: err.message });
    sendGrpcError(res, err);
  });
  return app;
}

function bodyText(req: Request): string {
  return Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
}

function methodNotAllowed(res: Response, allow: string): void {
  res.setHeader('Allow', allow);
  res.status(405).type('text/plain').send('Method Not Allowed\n');
}

/** The reference gateway's error JSON: {"error","message","code"} with the gRPC code. */
function sendGrpcError(res: Response, e: unknown): void {
  let code: number = Code.Unknown;
  let status = 500;
  let message = String((e as Error)?.message ?? e);
  if (e instanceof ServerError) {
    code = e.grpcCode;
    status = e.httpStatus;
  } else if (e instanceof GatewayInputError) {
    code = Code.InvalidArgument;
    status = 400;
  } else {
    message = `etcdserver: ${message}`;
  }
  if (!res.headersSent) res.status(status).json({ error: message, message, code });
}

export interface HealthResult {
  ok: boolean;
  reason: string;
}

/** Healthy: a leader, no alarm, and a linearizable read that completes in time. */
export async function checkHealth(server: HealthCore, timeoutMs = 1000, excludedAlarms: ReadonlySet<string> = new Set()): Promise<HealthResult> {
  // the first alarm not excluded is the reason, as the reference reports it
  const alarm = server.alarms.find((a) => !excludedAlarms.has(a.alarm));
  if (alarm) return { ok: false, reason: `ALARM ${alarm.alarm}` };
  if (server.lead === 0n) return { ok: false, reason: 'RAFT NO LEADER' };
  try {
    await server.linearizableReadNotify(timeoutMs);
    return { ok: true, reason: '' };
  } catch (e) {
    return { ok: false, reason: `QGET ERROR: ${(e as Error).message}` };
  }
}

function mountV2(app: express.Express, server: HttpCore, raw: express.RequestHandler): void {
  const setHeaders = (res: Response) => {
    res.setHeader('X-Etcd-Cluster-Id', server.clusterId.toString(16));
    res.setHeader('X-Etcd-Index', String(server.v2.index));
    res.setHeader('X-Raft-Index', String(server.appliedIndex));
    res.setHeader('X-Raft-Term', String(server.term));
  };
  const send = (res: Response, status: number, body: unknown) => {
    setHeaders(res);
    res.status(status).json(body);
  };
  const fail = (res: Response, e: unknown) => {
    if (e instanceof V2Error) return send(res, e.httpStatus, e.toJSON());
    if (e instanceof ServerError) return send(res, e.httpStatus, { errorCode: 300, message: 'Raft Internal Error', cause: e.message, index: server.v2.index });
    send(res, 500, { errorCode: 300, message: 'Raft Internal Error', cause: String((e as Error).message), index: server.v2.index });
  };
  app.all(/^\/v2\/keys(\/.*)?$/, raw, async (req, res) => {
    const path = decodeURIComponent(req.path.slice('/v2/keys'.length)) || '/';
    const q = req.query as Record<string, string | undefined>;
    try {
      if (req.method === 'GET') {
        if (q.quorum === 'true') await server.linearizableReadNotify();
        return send(res, 200, server.v2.get(path, q.recursive === 'true'));
      }
      if (req.method === 'PUT' || req.method === 'DELETE') {
        const form = new URLSearchParams(bodyText(req));
        const get = (k: string) => form.get(k) ?? q[k];
        const prevExist = get('prevExist');
        const ev = await server.propose<{ action: string; prevNode?: unknown }>({
          id: server.nextRequestId(),
          kind: 'v2',
          v2: {
            method: req.method,
            path,
            value: get('value') ?? undefined,
            dir: get('dir') === 'true',
            recursive: get('recursive') === 'true',
            prevExist: prevExist === undefined ? undefined : prevExist === 'true',
          },
        });
        return send(res, req.method === 'PUT' && !ev.prevNode ? 201 : 200, ev);
      }
      res.setHeader('Allow', 'GET, PUT, DELETE');
      res.status(405).type('text/plain').send('Method Not Allowed\n');
    } catch (e) {
      fail(res, e);
    }
  });
}
