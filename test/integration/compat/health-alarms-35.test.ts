// GET /health with an alarm raised, side by side with the reference 3.5.21 (one member each): unhealthy with the
// alarm as the reason, and healthy again with `?exclude=<alarm type>` (what probes and the operator ask while an
// alarm they handle is raised); an alarm of another type excluded changes nothing.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSingleMember, TARGETS, type Target } from '../../../harness/side-by-side.js';
import { httpGet, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { freePorts } from '../../../harness/ports.js';
import { postJson } from '../../../harness/svc-cluster.js';

describe('/health with an alarm raised (svc 3.5 and the reference 3.5.21)', function () {
  this.timeout(60000);
  let dir: string;
  const procs: LoggedProcess[] = [];
  const urls = {} as Record<Target, string>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-health-alarm-'));
    const ports = await freePorts(4);
    await Promise.all(TARGETS.map(async (target, i) => {
      const { proc, clientUrl } = spawnSingleMember(target, { dir, name: target, clientPort: ports[2 * i], peerPort: ports[2 * i + 1] });
      procs.push(proc);
      await waitForHttp(`${clientUrl}/health`, { timeoutMs: 30000, process: proc });
      urls[target] = clientUrl;
    }));
  });

  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const health = async (target: Target, query = '') => {
    const r = await httpGet(`${urls[target]}/health${query}`);
    return { status: r.status, body: JSON.parse(r.body) as unknown };
  };

  it('NOSPACE raised: 503 with the alarm as the reason; ?exclude=NOSPACE: 200; ?exclude=CORRUPT: still 503', async () => {
    const answers: Record<Target, unknown[]> = { svc: [], reference: [] };
    for (const target of TARGETS) {
      const status = JSON.parse((await postJson(`${urls[target]}/v3/maintenance/status`, {})).text) as { header: { member_id: string } };
      const raised = await postJson(`${urls[target]}/v3/maintenance/alarm`, { action: 'ACTIVATE', memberID: status.header.member_id, alarm: 'NOSPACE' });
      expect(raised.status, `${target}: ${raised.text}`).to.equal(200);
      for (const q of ['', '?exclude=NOSPACE', '?exclude=CORRUPT', '?exclude=CORRUPT&exclude=NOSPACE']) answers[target].push({ q, ...(await health(target, q)) });
    }
    expect(answers.svc).to.deep.equal(answers.reference);
    expect(answers.svc[0]).to.deep.include({ status: 503 });
    expect(answers.svc[1]).to.deep.include({ status: 200 });
    expect(answers.svc[2]).to.deep.include({ status: 503 });
    expect(answers.svc[3]).to.deep.include({ status: 200 });
  });
});
