// The reference's own client, etcdctl 3.4.23, against a 3-member svc cluster and a 3-member reference cluster:
// the same commands give the same output, values aside (ids, revisions, durations and sizes normalised).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdctl, ETCDCTL_BIN } from '../../../harness/etcdctl.js';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { sleep } from '../../../harness/process.js';

interface Target {
  name: string;
  endpoints: string[];
}

/** Values differ between systems and runs; the shape of the output must not. */
function normalise(text: string): string {
  return text
    // etcdctl prints ids with %16x: an id with a leading zero nibble comes space-padded
    .replace(/( *)\b(?=[0-9a-f]*[0-9])[0-9a-f]{6,16}\b/g, (_m, pad: string) => `${pad ? ' ' : ''}ID`)
    .replace(/took = [0-9.]+[µmn]?s/g, 'took = D')
    .replace(/TTL\(\d+s?\)/g, 'TTL(N)')
    .replace(/remaining\(-?\d+s\)/g, 'remaining(N)')
    .replace(/127\.0\.0\.1:\d+/g, 'HOST')
    .replace(/\/[^\s]*\/snap\.db/g, 'FILE');
}

describe('etcdctl 3.4.23 against svc and against the reference, side by side', function () {
  this.timeout(240000);
  let svc: SvcCluster | undefined;
  let ref: ReferenceCluster | undefined;
  let dir: string;
  const targets: Target[] = [];
  printLogsOnFailure(() => [svc]);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-etcdctl-'));
    [svc, ref] = await Promise.all([startSvcCluster({ size: 3, version: '3.4.34' }), startReferenceCluster({ size: 3 })]);
    targets.push({ name: 'svc', endpoints: svc.members.map((m) => m.endpoint) }, { name: 'reference', endpoints: ref.endpoints });
  });
  after(async () => {
    await Promise.all([svc?.close(), ref?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Run the same command against both systems; return the normalised outputs. */
  async function both(args: string[], opts: { one?: boolean; input?: string } = {}): Promise<Record<string, { code: number; out: string; err: string }>> {
    const res: Record<string, { code: number; out: string; err: string }> = {};
    for (const t of targets) {
      const r = await etcdctl(args, { endpoints: opts.one ? [t.endpoints[0]] : t.endpoints, input: opts.input });
      res[t.name] = { code: r.code, out: normalise(r.stdout), err: normalise(r.stderr).split('\n').filter((l) => !l.includes('retry_interceptor')).join('\n') };
    }
    return res;
  }

  function same(r: Record<string, { code: number; out: string }>, what: string): void {
    expect(r.svc.code, `${what}: exit code`).to.equal(r.reference.code);
    expect(r.svc.out, what).to.equal(r.reference.out);
  }

  it('put, get, del, txn', async () => {
    same(await both(['put', 'cmp/a', '1']), 'put');
    same(await both(['get', 'cmp/a']), 'get');
    same(await both(['get', 'cmp/', '--prefix', '--keys-only']), 'get --prefix --keys-only');
    same(await both(['put', 'cmp/a', '2', '--prev-kv']), 'put --prev-kv');
    const txn = 'value("cmp/a") = "2"\n\nput cmp/b yes\n\nput cmp/b no\n\n';
    same(await both(['txn'], { input: txn }), 'txn');
    same(await both(['get', 'cmp/b', '--print-value-only']), 'txn result');
    same(await both(['del', 'cmp/', '--prefix']), 'del --prefix');
    same(await both(['get', 'cmp/', '--prefix']), 'get after del');
  });

  it('endpoint health, endpoint status, member list, alarm list', async () => {
    const h = await both(['endpoint', 'health']);
    expect(h.svc.code).to.equal(0);
    // Endpoints answer in any order: compare the sorted lines.
    expect(h.svc.err.split('\n').filter(Boolean).sort()).to.deep.equal(h.reference.err.split('\n').filter(Boolean).sort());
    const st = await both(['endpoint', 'status', '-w', 'json']);
    const keys = (s: string) => (JSON.parse(s) as Array<{ Status: Record<string, unknown> }>).map((e) => Object.keys(e.Status).sort().join(','));
    expect(keys(st.svc.out)).to.deep.equal(keys(st.reference.out));
    const ml = await both(['member', 'list']);
    expect(ml.svc.out.split('\n').filter(Boolean).map((l) => l.split(', ').length)).to.deep.equal(ml.reference.out.split('\n').filter(Boolean).map((l) => l.split(', ').length));
    same(await both(['alarm', 'list']), 'alarm list');
  });

  it('watch: events arrive', async () => {
    const outs: string[] = [];
    for (const t of targets) {
      const child = spawn(ETCDCTL_BIN, [`--endpoints=${t.endpoints[0]}`, 'watch', 'w/', '--prefix'], { env: { ...process.env, ETCDCTL_API: '3' } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await sleep(700);
      await etcdctl(['put', 'w/1', 'x'], { endpoints: t.endpoints });
      await etcdctl(['del', 'w/1'], { endpoints: t.endpoints });
      const deadline = Date.now() + 10000;
      while (!out.includes('DELETE') && Date.now() < deadline) await sleep(100);
      child.kill('SIGINT');
      expect(out, t.name).to.match(/^PUT\nw\/1\nx\nDELETE\nw\/1\n/);
      outs.push(out);
    }
    expect(outs[0]).to.equal(outs[1]);
  });

  it('lease grant, keep-alive --once, timetolive, expiry deletes the key', async () => {
    for (const t of targets) {
      const g = await etcdctl(['lease', 'grant', '3'], { endpoints: t.endpoints });
      expect(normalise(g.stdout), t.name).to.equal('lease ID granted with TTL(N)\n');
      const id = g.stdout.split(' ')[1];
      expect((await etcdctl(['put', 'lk', 'v', `--lease=${id}`], { endpoints: t.endpoints })).stdout).to.equal('OK\n');
      const ka = await etcdctl(['lease', 'keep-alive', '--once', id], { endpoints: t.endpoints });
      expect(normalise(ka.stdout), t.name).to.equal('lease ID keepalived with TTL(N)\n');
      const ttl = await etcdctl(['lease', 'timetolive', id, '--keys'], { endpoints: [t.endpoints[1]] });
      expect(normalise(ttl.stdout), t.name).to.equal('lease ID granted with TTL(N), remaining(N), attached keys([lk])\n');
      const deadline = Date.now() + 15000;
      let left = 'lk';
      while (left !== '' && Date.now() < deadline) {
        await sleep(500);
        left = (await etcdctl(['get', 'lk', '--print-value-only'], { endpoints: t.endpoints })).stdout.trim();
      }
      expect(left, `${t.name}: the key of an expired lease is deleted`).to.equal('');
    }
  });

  it('member add and remove, move-leader, snapshot save', async () => {
    const tails: number[] = [];
    for (const [i, t] of targets.entries()) {
      const peer = `http://127.0.0.1:${29990 + i}`;
      // Both refuse an add until connected to every voter for 5 s ("unhealthy cluster"): wait that out.
      let add = await etcdctl(['member', 'add', `extra${i}`, `--peer-urls=${peer}`], { endpoints: t.endpoints });
      for (let n = 0; n < 30 && add.code !== 0 && add.stderr.includes('etcdserver: unhealthy cluster'); n++) {
        await sleep(500);
        add = await etcdctl(['member', 'add', `extra${i}`, `--peer-urls=${peer}`], { endpoints: t.endpoints });
      }
      expect(add.code, `${t.name}: ${add.stderr}`).to.equal(0);
      expect(normalise(add.stdout).split('\n')[0], t.name).to.equal('Member ID added to cluster ID');
      // etcdctl prints ids with %16x: an id with a leading zero nibble is padded with spaces
      const id = /^Member\s+([0-9a-f]+)\s/.exec(add.stdout)?.[1] ?? '';
      const rm = await etcdctl(['member', 'remove', id], { endpoints: t.endpoints });
      expect(normalise(rm.stdout), `${t.name}: ${rm.stderr}`).to.equal('Member ID removed from cluster ID\n');

      // 64-bit ids lose precision as JSON numbers: read them from the text.
      const raw = (await etcdctl(['endpoint', 'status', '-w', 'json'], { endpoints: t.endpoints })).stdout;
      const status = [...raw.matchAll(/"Endpoint":"([^"]+)".*?"member_id":(\d+).*?"leader":(\d+)/g)].map((m) => ({ endpoint: m[1], id: BigInt(m[2]), leader: BigInt(m[3]) }));
      const leader = status.find((x) => x.id === x.leader)!;
      const target = status.find((x) => x !== leader)!;
      const mv = await etcdctl(['move-leader', target.id.toString(16)], { endpoints: [leader.endpoint] });
      expect(normalise(mv.stdout), `${t.name}: ${mv.stderr}`).to.equal('Leadership transferred from ID to ID\n');

      const file = join(dir, `${t.name}-snap.db`);
      const snap = await etcdctl(['snapshot', 'save', file], { endpoints: [t.endpoints[0]] });
      expect(snap.code, `${t.name}: ${snap.stderr}`).to.equal(0);
      expect(snap.stdout.trim().split('\n').pop()).to.equal(`Snapshot saved at ${file}`);
      tails.push(statSync(file).size % 512);
    }
    // Whole pages, plus the same trailer (if any) in both files.
    expect(tails[0]).to.equal(tails[1]);
  });

  it('auth: a root user, auth enable, a token-authenticated request, auth disable', async () => {
    for (const t of targets) {
      const run = (args: string[]) => etcdctl(args, { endpoints: t.endpoints });
      expect((await run(['user', 'add', 'root:rootpw'])).stdout, t.name).to.equal('User root created\n');
      expect((await run(['user', 'grant-role', 'root', 'root'])).stdout, t.name).to.equal('Role root is granted to user root\n');
      expect((await run(['auth', 'enable'])).stdout, t.name).to.equal('Authentication Enabled\n');
      const denied = await run(['get', 'x']);
      expect(denied.code, t.name).to.not.equal(0);
      expect(denied.stderr, t.name).to.include('etcdserver: user name is empty');
      expect((await run(['--user', 'root:rootpw', 'put', 'x', 'y'])).stdout, t.name).to.equal('OK\n');
      expect((await run(['--user', 'root:rootpw', 'auth', 'disable'])).stdout, t.name).to.equal('Authentication Disabled\n');
      expect((await run(['user', 'delete', 'root'])).stdout, t.name).to.equal('User root deleted\n');
    }
  });
});
