// Shared pieces of the fuzz tests: the store revision (a rejected request must not move it), the
// "clear error" shapes of the HTTP gateway and of gRPC, and the post-fuzz health check of the member.

import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { crashLines } from '../../../harness/chaos/checks.js';
import { httpGet } from '../../../harness/process.js';
import type { GatewayAnswer, SvcCluster } from '../../../harness/svc-cluster.js';

/** The current store revision of member 0 (from Maintenance.Status through the gateway). */
export async function storeRevision(c: SvcCluster): Promise<number> {
  const st = await c.status(0);
  return Number((st.header as { revision?: string }).revision ?? 0);
}

/** Asserts a gateway answer is a clear client error: 4xx with {error or message, code}. */
export function expectClearHttpError(a: GatewayAnswer, what: string): void {
  expect(a.status, `${what}: HTTP ${a.status} ${a.text.slice(0, 300)}`).to.be.within(400, 499);
  const msg = (a.body.error ?? a.body.message) as unknown;
  expect(typeof msg === 'string' && msg.length > 0, `${what}: no error message in ${a.text.slice(0, 300)}`).to.equal(true);
}

/** Asserts the member still runs, answers /health 200, and its log shows no crash. */
export async function expectMemberIntact(c: SvcCluster): Promise<void> {
  expect(c.members[0].process.exitStatus(), `member exited:\n${c.logTails(30)}`).to.equal(null);
  const h = await httpGet(`${c.members[0].clientURL}/health`);
  expect(h.status, h.body).to.equal(200);
  const bad = crashLines(readFileSync(c.members[0].logFile, 'utf8'));
  expect(bad, 'crash-looking lines in the member log').to.deep.equal([]);
}

/** Base64 of a string or bytes. */
export function b64(s: string | Buffer): string {
  return (typeof s === 'string' ? Buffer.from(s) : s).toString('base64');
}
