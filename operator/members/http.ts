// Plain HTTP/1.1 GETs against a member's client URL (/version, /health, /metrics), with a timeout; https URLs
// verify the member against the cluster's CA and present the operator's client certificate.
import http from 'node:http';
import https from 'node:https';

/** An HTTP answer. */
export interface HttpAnswer {
  status: number;
  body: string;
}

/** TLS material for https client URLs (PEM): the CA that signed the members, the client certificate and key. */
export interface MemberTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** GET `url` and read the whole body; rejects on connection errors and after `timeoutMs`. */
export function httpGet(url: string, timeoutMs: number, tls?: MemberTls): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const onAnswer = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = url.startsWith('https:')
      ? https.get(url, { timeout: timeoutMs, agent: false, ca: tls?.ca, cert: tls?.cert, key: tls?.key }, onAnswer)
      : http.get(url, { timeout: timeoutMs, agent: false }, onAnswer);
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
