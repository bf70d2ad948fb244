// --listen-metrics-urls: extra URLs that serve only GET /metrics and GET /health, like the reference's.
// Their point is a plain-http port for probes and scrapers when the client URL asks for client certificates
// (--client-cert-auth): a kubelet httpGet probe has no certificate to offer. An https metrics URL uses the
// client URL's TLS settings, client certificate check included, as the reference does.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { ListenError, type ClientListenerTls } from './listener.js';
import type { Logger } from '../log/logger.js';

export interface MetricsListener {
  url: URL;
  close(): Promise<void>;
}

/** Serves /metrics, /health, /livez and /readyz of `app` on `url`; every other path answers 404. */
export async function startMetricsListener(url: URL, app: express.Express, tls: ClientListenerTls | undefined, logger: Logger): Promise<MetricsListener> {
  const text = url.toString().replace(/\/$/, '');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ListenError('BAD_URL', text, `scheme ${url.protocol} is not http or https`);
  if (url.protocol === 'https:' && !tls) throw new ListenError('TLS_REQUIRED', text, 'an https metrics URL needs the client certificate and key (--cert-file, --key-file)');
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' || path === '/health' || /^\/(livez|readyz)(\/|$)/.test(path)) return void app(req, res);
    res.statusCode = 404;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('404 page not found\n');
  };
  const server = url.protocol === 'https:' ? https.createServer({ cert: tls!.cert, key: tls!.key, ca: tls!.ca, requestCert: tls!.requestCert ?? false, rejectUnauthorized: tls!.rejectUnauthorized ?? tls!.requestCert ?? false, minVersion: tls!.minVersion, maxVersion: tls!.maxVersion }, handler) : http.createServer(handler);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(e.code === 'EADDRINUSE' ? 'ADDRESS_IN_USE' : 'LISTEN_FAILED', text, e.message, { cause: e })));
    server.listen({ host, port, exclusive: true }, () => resolve(server.address() as AddressInfo));
  });
  const bound = new URL(url.toString());
  bound.port = String(address.port);
  logger.info('serving metrics', { address: bound.toString().replace(/\/$/, '') });
  return {
    url: bound,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
