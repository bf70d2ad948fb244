// Small HTTP(S) requests from one member to another's peer URL (version polling, cluster discovery, lease
// renewals), with the peer TLS material when the peer URLs are https.
import http from 'node:http';
import https from 'node:https';

export interface PeerTlsClient {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

export interface PeerResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request with a deadline; rejects on network errors and timeouts. */
export function peerRequest(url: string, o: { method?: string; body?: string; timeoutMs: number; tls?: PeerTlsClient }): Promise<PeerResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      {
        method: o.method ?? 'GET',
        timeout: o.timeoutMs,
        ...(u.protocol === 'https:' && o.tls ? { cert: o.tls.cert, key: o.tls.key, ca: o.tls.ca } : {}),
        headers: o.body !== undefined ? { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(o.body) } : {},
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
