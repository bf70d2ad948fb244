// Maintenance on the real node: a defragmentation asked for through the svc.dev/maintenance-request annotation
// (what `kubectl svc defrag` writes) takes each member out of the client Service's EndpointSlice while its backend
// is rewritten and puts it back (the svc.dev/serving label the Service selects on), followers first and the leader
// last, with a MemberDefragmented Event carrying the bytes before and after, while a client keeps writing: no write
// fails, every key stays.
import { expect } from 'chai';
import type { SvcClusterStatus } from '../../operator/api/types.js';
import { BackgroundWriter } from '../../operator/workload/writer.js';
import { Client } from '../../server/client/index.js';
import { useOperator } from './operator/fixture.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-maint';

interface Stored { metadata: { annotations?: Record<string, string> }; status?: SvcClusterStatus }
interface Slice { endpoints?: Array<{ conditions?: { ready?: boolean }; targetRef?: { name?: string } }> }

describe('k8s: maintenance (defragmentation out of the client Service)', function () {
  this.timeout(300_000);
  const op = useOperator(NS);
  const name = 'kv';
  const get = async (): Promise<Stored> => JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'svcc', name, '-o', 'json'])) as Stored;
  const events = async (): Promise<Array<{ reason: string; message: string; type: string }>> =>
    (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: Array<{ reason: string; message: string; type: string }> }).items;
  const endpoints = [0, 1, 2].map((i) => `http://${name}-${i}.${name}.${NS}.svc:2379`);
  /** The pods the client Service's EndpointSlices list as ready. */
  const ready = async (): Promise<string[]> => {
    const slices = (JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'endpointslices', '-l', `kubernetes.io/service-name=${name}-client`, '-o', 'json'])) as { items: Slice[] }).items;
    return slices.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).map((e) => e.targetRef?.name ?? '')).sort();
  };
  const all = [0, 1, 2].map((i) => `${name}-${i}`);

  it('defragments every member on request, each out of the client Service\'s endpoints meanwhile and back after, followers first, no failed write', async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { version: '3.5.21', replicas: 3 } }));
    const before = await waitFor('Running 3/3', async () => {
      const s = (await get()).status;
      return s?.phase === 'Running' && s.ready === '3/3' && s.members?.every((m) => m.healthy) ? s : undefined;
    }, 200_000, 1000);
    await waitFor('every member in the client Service', async () => ((await ready()).join() === all.join() ? true : undefined), 60_000, 500);
    // the client Service selects on the serving label, which every member pod carries
    expect(JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'service', `${name}-client`, '-o', 'jsonpath={.spec.selector}'])) as Record<string, string>).to.include({ 'svc.dev/serving': 'true' });
    const c = await Client.connect({ endpoints, dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    try {
      // overwritten values: history to compact, file space to give back
      for (let i = 0; i < 40; i++) await c.put(`big/${i % 4}`, 'x'.repeat(32 * 1024));
    } finally {
      c.close();
    }
    const writer = new BackgroundWriter({ endpoints, prefix: 'load/', intervalMs: 20 });
    await writer.start();
    // what the client Service lists, read as fast as kubectl answers while the defragmentations run
    const seen: string[][] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) seen.push(await ready().catch(() => all));
    })();
    const from = op.logs.length;
    await op.tb.kubectl(['-n', NS, 'annotate', 'svcc', name, '--overwrite', `svc.dev/maintenance-request=${JSON.stringify({ token: 't1', action: 'defrag' })}`]);
    const done = await waitFor('three MemberDefragmented Events', async () => {
      const evs = (await events()).filter((e) => e.reason === 'MemberDefragmented');
      return evs.length >= 3 ? evs : undefined;
    }, 120_000, 1000);
    await waitFor('every member back in the client Service', async () => ((await ready()).join() === all.join() ? true : undefined), 60_000, 300);
    watching = false;
    await watcher;
    const stats = await writer.stop();

    // each member left the Service's endpoints at some point, and no two at once
    for (const m of all) expect(seen.some((s) => !s.includes(m)), `${m} never left the endpoints (${seen.length} readings)`).to.equal(true);
    expect(seen.every((s) => s.length >= 2), 'never more than one member out').to.equal(true);
    // followers first, the leader last (after leadership moved), each with its bytes
    const order = op.logs.slice(from).filter((l) => l.msg === 'step' && String(l.line).startsWith('defragment ')).map((l) => /defragment (\S+)/.exec(String(l.line))![1]);
    expect(new Set(order).size).to.equal(3);
    expect(order.at(-1), 'the leader last').to.equal(before.leader);
    for (const e of done) expect(e.message).to.match(/^member kv-\d defragmented \(Requested\): database file \d+ -> \d+ bytes/);
    const st = await get();
    expect(JSON.parse(st.metadata.annotations!['svc.dev/maintenance'])).to.deep.include({ lastRequest: 't1' });
    expect((await events()).filter((e) => e.type === 'Warning')).to.deep.equal([]);
    expect(stats.failed, stats.errors.join('\n')).to.equal(0);
    expect(stats.succeeded).to.be.above(0);
    const check = await Client.connect({ endpoints, dialTimeoutMs: 5000, commandTimeoutMs: 10_000 });
    try {
      for (let i = 0; i < 4; i++) expect((await check.get(`big/${i}`)).kvs).to.have.length(1);
    } finally {
      check.close();
    }
  });
});
