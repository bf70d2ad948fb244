// The v2 data-size estimate the operator reads from the leader: the parsing of svc_v2_store_data_bytes, and
// the number a real member reports once it holds v2 data.
import { expect } from 'chai';
import http from 'node:http';
import { MemberClient, parseV2DataBytes } from '../../../operator/members/index.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';

describe('operator: v2 data-size estimate', function () {
  this.timeout(90000);

  describe('parseV2DataBytes', () => {
    it('reads the gauge among other metrics', () => {
      const text = '# HELP svc_v2_store_data_bytes Bytes...\n# TYPE svc_v2_store_data_bytes gauge\nsvc_v2_store_data_bytes 123456\nsvc_server_is_leader 1\n';
      expect(parseV2DataBytes(text)).to.equal(123456);
      expect(parseV2DataBytes('svc_v2_store_data_bytes{member="a"} 1.5e+08\n')).to.equal(150_000_000);
    });
    it('is undefined when the member does not publish it or publishes nonsense', () => {
      expect(parseV2DataBytes('svc_server_is_leader 1\n')).to.equal(undefined);
      expect(parseV2DataBytes('svc_v2_store_data_bytes_total 5\n')).to.equal(undefined);
      expect(parseV2DataBytes('svc_v2_store_data_bytes NaN\n')).to.equal(undefined);
      expect(parseV2DataBytes('svc_v2_store_data_bytes -1\n')).to.equal(undefined);
    });
  });

  describe('from a real member', () => {
    let c: SvcCluster | undefined;
    const client = new MemberClient({ timeoutMs: 5000 });
    printLogsOnFailure(() => [c]);
    before(async () => {
      c = await startSvcCluster({ size: 1, version: '3.4.34', extraArgs: ['--enable-v2=true'] });
    });
    after(async () => {
      client.close();
      await c?.close();
    });

    it('is 0 without v2 data and grows with what is written through /v2/keys', async () => {
      const url = c!.members[0].clientURL;
      expect(await client.v2DataBytes(url)).to.equal(0);
      const value = 'v'.repeat(64 * 1024);
      for (let i = 0; i < 8; i++) {
        const payload = new URLSearchParams({ value }).toString();
        const status = await new Promise<number>((resolve, reject) => {
          const req = http.request(`${url}/v2/keys/app/k${i}`, { method: 'PUT', agent: false, headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(payload) } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end(payload);
        });
        expect(status).to.equal(201);
      }
      // "app", eight "k<i>" and their values
      expect(await client.v2DataBytes(url)).to.equal(3 + 8 * (2 + value.length));
    });
  });
});
