// The offline commands on a member's data dir, side by side with the reference 3.5's etcdutl on the same history:
// `svcctl snapshot status <data-dir>` (etcdutl: `snapshot status <data-dir>/member/snap/db`) and
// `svcctl defrag --data-dir` (etcdutl: `defrag --data-dir`). Each tool refuses the other's data dir, svcctl with a
// message that names the tool to use; svcctl refuses a data dir a member is running on.
import { expect } from 'chai';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { freePorts } from '../../../harness/ports.js';
import { memberArgs } from '../../../harness/member-args.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { spawnSingleMember, TARGETS, type Target } from '../../../harness/side-by-side.js';
import { useCleanup } from '../../../harness/cleanup.js';
import { useTempDir } from '../../../harness/temp-dir.js';
import { keySpace, type KeySpace } from '../snapshot/helpers.js';
import { svcctl } from './run-svcctl.js';

interface Status {
  hash: number;
  revision: number;
  totalKey: number;
  totalSize: number;
}

async function etcdutl(args: string[]) {
  return etcdctl(args, { bin: ref35('etcdutl'), timeoutMs: 60000 });
}

/** The same history on a member: 400 large values written and deleted, the history compacted, a few keys kept. */
async function workload(endpoint: string): Promise<void> {
  const ctl = async (args: string[], input?: string) => {
    const r = await etcdctl(args, { endpoints: [endpoint], input });
    expect(r.code, `etcdctl ${args.join(' ')}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const big = 'x'.repeat(8000);
  for (let t = 0; t < 4; t++) {
    const puts = Array.from({ length: 100 }, (_, i) => `put big/${t}/${i} ${big}`).join('\n');
    await ctl(['txn'], `\n${puts}\n\n\n`);
  }
  await ctl(['put', 'keep/a', '1']);
  await ctl(['put', 'keep/b', '2']);
  await ctl(['del', 'big/', '--prefix']);
  const rev = JSON.parse(await ctl(['get', 'keep/a', '-w', 'json'])) as { header: { revision: number } };
  await ctl(['compact', String(rev.header.revision), '--physical']);
  await ctl(['put', 'keep/c', '3']);
}

/** Output with the values taken out: what is left are the columns and the layout. */
function shape(out: string): string {
  // sizes first; then numbers and hashes alike (a hash printed in decimal, or in hex with digits only, is a number)
  return out.replace(/\d+(\.\d+)? ?[kMG]?B\b/g, 'S').replace(/\b(?:[0-9a-f]{6,8}|\d+)\b/g, 'N').replace(/-+/g, '-').replace(/ +/g, ' ');
}

describe('svcctl offline commands on a data dir, side by side with etcdutl 3.5', function () {
  this.timeout(120000);
  const stopLater = useCleanup({ closeAfter: 'each' });
  const tmp = useTempDir('svc-offline-');

  it('snapshot status and defrag --data-dir: the same revision and columns as etcdutl; each refuses what is not its own; svc serves it all after', async () => {
    const dirs = {} as Record<Target, string>;
    const spaces = {} as Record<Target, KeySpace>;
    const ports = {} as Record<Target, number[]>;
    const procs = {} as Record<Target, LoggedProcess>;
    for (const target of TARGETS) {
      ports[target] = await freePorts(2);
      const m = spawnSingleMember(target, { dir: tmp.path, name: target, clientPort: ports[target][0], peerPort: ports[target][1] });
      procs[target] = m.proc;
      stopLater({ stop: () => m.proc.stop('SIGKILL', 5000) });
      await waitForHttp(`${m.clientUrl}/health`, { timeoutMs: 30000, process: m.proc });
      dirs[target] = join(tmp.path, `${target}.data`);
      await workload(`127.0.0.1:${ports[target][0]}`);
      spaces[target] = await keySpace(`127.0.0.1:${ports[target][0]}`);
    }
    expect(spaces.svc).to.deep.equal(spaces.reference);

    // a member runs on it: refused (etcdutl would wait for the db's lock)
    const busy = await svcctl(['defrag', `--data-dir=${dirs.svc}`]);
    expect(busy.code).to.equal(1);
    expect(busy.stderr).to.match(/Error: data dir .* is in use by a running member \(wal: .* is locked by pid \d+.*\): stop the member first, or defragment it while it runs/);

    for (const target of TARGETS) await procs[target].stop('SIGTERM', 10000);
    const refDb = join(dirs.reference, 'member', 'snap', 'db');
    const svcDb = join(dirs.svc, 'member', 'snap', 'db');

    const status = async (target: Target, w: string) => {
      const r = target === 'svc' ? await svcctl(['snapshot', 'status', dirs.svc, '-w', w]) : await etcdutl(['snapshot', 'status', refDb, '-w', w]);
      expect(r.code, r.stderr).to.equal(0);
      return r.stdout;
    };
    const before = JSON.parse(await status('svc', 'json')) as Status;
    const refBefore = JSON.parse(await status('reference', 'json')) as Status;
    expect(before.revision).to.equal(refBefore.revision).and.to.equal(spaces.svc.revision);
    expect(before.totalSize).to.equal(statSync(svcDb).size);
    for (const w of ['table', 'simple', 'fields']) expect(shape(await status('svc', w)), `-w ${w}`).to.equal(shape(await status('reference', w)));
    // the db file itself, as etcdutl is given it, reads the same
    expect(JSON.parse((await svcctl(['snapshot', 'status', svcDb, '-w', 'json'])).stdout)).to.deep.equal(before);

    // offline defrag: both shrink their db, and the data stays
    const ref = await etcdutl(['defrag', `--data-dir=${dirs.reference}`]);
    expect(ref.code, ref.stderr).to.equal(0);
    expect(statSync(refDb).size).to.be.lessThan(refBefore.totalSize);
    const ours = await svcctl(['defrag', `--data-dir=${dirs.svc}`]);
    expect(ours.code, ours.stderr).to.equal(0);
    expect(ours.stdout).to.equal(`Finished defragmenting data dir ${dirs.svc} (db size ${before.totalSize} -> ${statSync(svcDb).size} bytes)\n`);
    expect(statSync(svcDb).size).to.be.lessThan(before.totalSize);
    const after = JSON.parse(await status('svc', 'json')) as Status;
    expect({ ...after, totalSize: 0 }).to.deep.equal({ ...before, totalSize: 0 });

    // each tool refuses the other's data dir
    const theirs = await etcdutl(['snapshot', 'status', svcDb]);
    expect(theirs.code).to.not.equal(0);
    expect(theirs.stderr).to.match(/invalid database/);
    const theirDefrag = await etcdutl(['defrag', `--data-dir=${dirs.svc}`]);
    expect(theirDefrag.code).to.not.equal(0);
    expect(theirDefrag.stderr).to.match(/invalid database/);
    for (const args of [['snapshot', 'status', dirs.reference], ['defrag', `--data-dir=${dirs.reference}`]]) {
      const r = await svcctl(args);
      expect(r.code, args.join(' ')).to.equal(1);
      expect(r.stderr).to.equal(`Error: ${dirs.reference} is a data dir of the reference (etcd), in its own format: use the reference's etcdutl on it, or start svc on it once (svc converts it into its format)\n`);
    }
    const none = await svcctl(['defrag', `--data-dir=${tmp.path}`]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.match(/holds no member database .*: is it a member's data dir\?/);

    // svc starts on its defragmented data dir and serves what it served before
    const clientUrl = `http://127.0.0.1:${ports.svc[0]}`;
    const peerUrl = `http://127.0.0.1:${ports.svc[1]}`;
    const args = memberArgs({ name: 'm', dataDir: dirs.svc, clientUrl, peerUrl, initialCluster: `m=${peerUrl}`, token: 'side-by-side', state: 'new' });
    const again = spawnSvc(args, { logFile: join(tmp.path, 'svc-again.log'), name: 'svc-again' });
    stopLater({ stop: () => again.stop('SIGKILL', 5000) });
    await waitForHttp(`${clientUrl}/health`, { timeoutMs: 30000, process: again });
    expect(await keySpace(`127.0.0.1:${ports.svc[0]}`)).to.deep.equal(spaces.svc);
  });
});
