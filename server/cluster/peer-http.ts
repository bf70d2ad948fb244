// Small HTTP(S) requests from one member to another's peer URL (version polling, cluster discovery, lease
// renewals), with the peer TLS material when the peer URLs are https.
import http from 'node:http';
import https from 'node:https';
import type { SecureVersion } from 'node:tls';
import { isSecureUrl, isUnixUrl, unixSocketPath } from '../transport/unix-url.js';

export interface PeerTlsClient {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  /**
   * --peer-auto-tls made the certificate: the peers' (self-signed) certificates are not verified, as the
   * reference's self-signed TLS info skips verification on the client side.
   */
  selfSigned?: boolean;
  /** Presented instead of cert/key when given (--peer-client-cert-file). */
  dialCert?: Buffer;
  dialKey?: Buffer;
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
}

export interface PeerResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request with a deadline; rejects on network errors and timeouts. */
export function peerRequest(url: string, o: { method?: string; body?: string; timeoutMs: number; tls?: PeerTlsClient; headers?: Record<string, string> }): Promise<PeerResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const secure = isSecureUrl(u);
    const mod = secure ? https : http;
    // A unix socket URL "unix://<socket>/<request path>": the socket is the host part (as the reference dials it).
    const unix = isUnixUrl(u);
    const target = unix ? new URL(`${secure ? 'https' : 'http'}://localhost${u.host !== '' ? u.pathname : '/'}${u.search}`) : u;
    const req = mod.request(
      target,
      {
        method: o.method ?? 'GET',
        timeout: o.timeoutMs,
        ...(unix ? { socketPath: u.host !== '' ? u.host : unixSocketPath(u) } : {}),
        ...(secure && o.tls ? { cert: o.tls.dialCert ?? o.tls.cert, key: o.tls.dialKey ?? o.tls.key, ca: o.tls.ca, minVersion: o.tls.minVersion, maxVersion: o.tls.maxVersion, ...(o.tls.selfSigned ? { rejectUnauthorized: false } : {}) } : {}),
        headers: { ...(o.body !== undefined ? { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(o.body) } : {}), ...o.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (body.length < 1024 * 1024) body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out after ${o.timeoutMs}ms`)));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The server version a member reports on its peer URLs' /version (the first that answers), or undefined. */
export async function fetchPeerVersion(urls: string[], tls: PeerTlsClient | undefined): Promise<string | undefined> {
  for (const u of urls) {
    try {
      const res = await peerRequest(new URL('/version', u).toString(), { timeoutMs: 1000, tls });
      if (res.status !== 200) continue;
      const j = JSON.parse(res.body) as { etcdserver?: string };
      if (typeof j.etcdserver === 'string') return j.etcdserver;
    } catch {
      /* try the next URL */
    }
  }
  return undefined;
}
