// Plain HTTP/1.1 GETs against a member's client URL (/version, /health, /metrics), with a timeout.
import http from 'node:http';

/** An HTTP answer. */
export interface HttpAnswer {
  status: number;
  body: string;
}

/** GET `url` and read the whole body; rejects on connection errors and after `timeoutMs`. */
export function httpGet(url: string, timeoutMs: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
