// svc as release 3.6.16 and 3.7.3, side by side with the reference binaries of those releases (one member each):
// /version with the storage version, /livez and /readyz, the v2 API gone, the flags the release removed and the
// warnings of the ones it deprecated, --feature-gates errors, the feature-gate metric; then a 3.5 svc member
// restarted as 3.6, whose storage version follows the cluster version to 3.6.0 (seen by the reference's etcdctl 3.6).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, waitFor, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { REFERENCE_VERSIONS, referenceBin, type ReferenceLine } from '../../../harness/reference-cluster.js';
import { spawnSingleMember, startSideBySide, TARGETS, type SingleMember, type Target } from '../../../harness/side-by-side.js';
import { memberArgs } from '../../../harness/member-args.js';
import { runSvc, spawnSvc } from '../../../harness/svc-cluster.js';

/** Exit status and stderr of the reference etcd of `line` with `args`. */
function runReference(line: ReferenceLine, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(referenceBin(line, 'etcd'), args, { timeout: 30000, encoding: 'utf8' }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stderr });
    });
  });
}

/** Both refuse `args` before starting: the same exit status, and stderr of both holds `text`. */
async function expectBothRefuse(line: ReferenceLine, dir: string, args: string[], text: string): Promise<void> {
  const full = [`--data-dir=${join(dir, `refused-${Math.random().toString(36).slice(2)}`)}`, ...args];
  const [svc, ref] = await Promise.all([runSvc(full, { version: REFERENCE_VERSIONS[line] }), runReference(line, full)]);
  expect(ref.stderr, 'reference').to.include(text);
  expect(svc.stderr, 'svc').to.include(text);
  expect({ svc: svc.code, reference: ref.code }).to.deep.equal({ svc: 2, reference: 2 });
}

/** The series of a metric family as "name{labels} value" lines with the product prefix removed, sorted. */
function series(metrics: string, family: string): string[] {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith(`${family}{`) || l.startsWith(`${family} `))
    .map((l) => l.replace(/^(etcd|svc)_/, ''))
    .sort();
}

const LINES: Array<{ line: ReferenceLine; removed: Array<[string, string]>; deprecated?: [string, string] }> = [
  {
    line: '3.6',
    removed: [['--enable-v2', '-enable-v2'], ['--proxy=on', '-proxy'], ['--experimental-enable-v2v3=/x', '-experimental-enable-v2v3']],
    deprecated: ['--experimental-warning-apply-duration=200ms', "--experimental-warning-apply-duration is deprecated in v3.6 and will be decommissioned in v3.7. Use '--warning-apply-duration' instead."],
  },
  {
    line: '3.7',
    removed: [['--enable-v2', '-enable-v2'], ['--experimental-initial-corrupt-check', '-experimental-initial-corrupt-check'], ['--discovery=http://127.0.0.1:1/x', '-discovery']],
  },
];

for (const { line, removed, deprecated } of LINES) {
  const version = REFERENCE_VERSIONS[line];
  describe(`svc as ${version} side by side with the reference ${version}`, function () {
    this.timeout(120000);
    let dir: string;
    const procs: LoggedProcess[] = [];
    let m: Record<Target, SingleMember>;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), `svc-r${line}-`));
      m = await startSideBySide({ dir, tag: `r${line}`, procs, line, flags: deprecated ? [deprecated[0]] : [] });
    });
    after(async () => {
      for (const p of procs) await p.stop('SIGKILL', 5000);
      rmSync(dir, { recursive: true, force: true });
    });

    it('/version: server, cluster and storage version, in that order, once the monitors ran', async () => {
      const want = `{"etcdserver":"${version}","etcdcluster":"${line}.0","storage":"${line}.0"}`;
      for (const t of TARGETS) {
        const body = await waitFor(`${t} /version`, async () => {
          const r = await httpGet(`${m[t].clientUrl}/version`);
          return r.body === want ? r.body : undefined;
        }, 30000);
        expect(body, t).to.equal(want);
      }
    });

    it('/livez and /readyz answer ok; ?verbose lists the same checks', async () => {
      for (const path of ['/livez', '/readyz', '/livez?verbose', '/readyz?verbose', '/readyz/non_learner', '/readyz?exclude=linearizable_read&verbose']) {
        const out = {} as Record<Target, { status: number; lines: string[] }>;
        for (const t of TARGETS) {
          const r = await httpGet(`${m[t].clientUrl}${path}`);
          out[t] = { status: r.status, lines: r.body.split('\n').sort() };
        }
        expect(out.svc, path).to.deep.equal(out.reference);
        expect(out.svc.status, path).to.equal(200);
      }
    });

    it('the v2 API is gone: /v2/keys is 404 page not found', async () => {
      for (const t of TARGETS) {
        const r = await httpGet(`${m[t].clientUrl}/v2/keys/foo`);
        expect({ status: r.status, body: r.body }, t).to.deep.equal({ status: 404, body: '404 page not found\n' });
      }
    });

    it('flags the release removed are refused as undefined flags, exit status 2', async () => {
      for (const [flag, shown] of removed) await expectBothRefuse(line, dir, [flag], `flag provided but not defined: ${shown}`);
    });

    it('--feature-gates: an unknown gate, a gate without value and a bad value are refused with the reference texts', async () => {
      await expectBothRefuse(line, dir, ['--feature-gates=Foo=true'], 'invalid value "Foo=true" for flag -feature-gates: unrecognized feature gate: Foo');
      await expectBothRefuse(line, dir, ['--feature-gates=InitialCorruptCheck'], 'missing bool value for InitialCorruptCheck');
      await expectBothRefuse(line, dir, ['--feature-gates=InitialCorruptCheck=maybe'], 'invalid value of InitialCorruptCheck=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax');
    });

    it('/metrics: the feature gates with their stage and value; the v2 HTTP metrics absent', async () => {
      const text = {} as Record<Target, string>;
      for (const t of TARGETS) text[t] = (await httpGet(`${m[t].clientUrl}/metrics`)).body;
      const gates = { svc: series(text.svc, 'svc_server_feature_enabled'), reference: series(text.reference, 'etcd_server_feature_enabled') };
      expect(gates.svc).to.deep.equal(gates.reference);
      expect(gates.svc).to.include('server_feature_enabled{name="TxnModeWriteWithSharedBuffer",stage="BETA"} 1');
      for (const gone of ['etcd_http_received_total', 'etcd_proxy_requests_total', 'etcd_debugging_mvcc_range_total']) {
        expect(text.reference, gone).to.not.include(`${gone}`);
        expect(text.svc, gone).to.not.include(gone.replace(/^etcd_/, 'svc_'));
      }
    });

    if (deprecated) {
      it("3.6's deprecation warning of an experimental flag", () => {
        for (const t of TARGETS) expect(m[t].proc.log(), t).to.include(JSON.stringify(deprecated[1]).slice(1, -1));
      });
    }
  });
}

describe('svc 3.5.21 restarted as 3.6.16: the storage version follows the cluster version', function () {
  this.timeout(120000);
  let dir: string;
  const procs: LoggedProcess[] = [];
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('3.5 has no storage in /version; as 3.6 the monitor raises cluster and storage version to 3.6, and etcdctl 3.6 shows it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-roll36-'));
    const [clientPort, peerPort] = await freePorts(2);
    const m35 = spawnSingleMember('svc', { dir, name: 'm', clientPort, peerPort });
    procs.push(m35.proc);
    await waitForHttp(`${m35.clientUrl}/health`, { timeoutMs: 30000, process: m35.proc });
    const v35 = await waitFor('cluster version 3.5', async () => {
      const r = await httpGet(`${m35.clientUrl}/version`);
      return r.body.includes('"etcdcluster":"3.5.0"') ? r.body : undefined;
    }, 30000);
    expect(v35).to.equal('{"etcdserver":"3.5.21","etcdcluster":"3.5.0"}');
    const put = await etcdctl(['put', 'k', 'v'], { endpoints: [m35.clientUrl], bin: referenceBin('3.6', 'etcdctl') });
    expect(put.code, put.stderr).to.equal(0);
    await m35.proc.stop('SIGTERM', 10000);

    // the same data dir, now as 3.6 (spawnSingleMember makes a fresh dir: start by hand on the old one)
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const args = memberArgs({ name: 'm', dataDir: join(dir, 'm.data'), clientUrl: m35.clientUrl, peerUrl, initialCluster: `m=${peerUrl}`, token: 'side-by-side', state: 'new' });
    const m36 = spawnSvc(args, { logFile: join(dir, 'm36.log'), name: 'm36', version: '3.6.16' });
    procs.push(m36);
    await waitForHttp(`${m35.clientUrl}/health`, { timeoutMs: 30000, process: m36 });
    const v36 = await waitFor('storage version 3.6.0', async () => {
      const r = await httpGet(`${m35.clientUrl}/version`);
      return r.body.includes('"storage":"3.6.0"') ? r.body : undefined;
    }, 30000);
    expect(v36).to.equal('{"etcdserver":"3.6.16","etcdcluster":"3.6.0","storage":"3.6.0"}');
    expect(m36.log()).to.match(/"msg":"updating cluster version using v3 API","from":"3.5","to":"3.6"/);
    expect(m36.log()).to.match(/"msg":"updated storage version","new-storage-version":"3.6.0"/);

    const status = await etcdctl(['endpoint', 'status', '-w', 'json'], { endpoints: [m35.clientUrl], bin: referenceBin('3.6', 'etcdctl') });
    expect(status.code, status.stderr).to.equal(0);
    const st = (JSON.parse(status.stdout) as Array<{ Status: { storageVersion?: string; dbSizeQuota?: number; version: string } }>)[0].Status;
    expect({ storageVersion: st.storageVersion, dbSizeQuota: st.dbSizeQuota, version: st.version }).to.deep.equal({ storageVersion: '3.6.0', dbSizeQuota: 2147483648, version: '3.6.16' });
    const get = await etcdctl(['get', 'k', '--print-value-only'], { endpoints: [m35.clientUrl], bin: referenceBin('3.6', 'etcdctl') });
    expect(get.stdout.trim()).to.equal('v');
  });
});
