// The spec's only way back after an upgrade: a snapshot saved from a cluster restores into a new cluster.
import { expect } from 'chai';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { useCleanup } from '../../../harness/cleanup.js';
import { spawnSvc, useSvcClusters } from '../../../harness/svc-cluster.js';
import { waitForHttp } from '../../../harness/process.js';
import { freePorts } from '../../../harness/ports.js';
import { useTempDir } from '../../../harness/temp-dir.js';
import { svcctl } from '../snapshot/helpers.js';

const run = (args: string[]) => svcctl(args, { SVC_VERSION: '3.4.34' });

describe('snapshot save and restore', function () {
  this.timeout(120000);
  const stopLater = useCleanup();
  const clusters = useSvcClusters({ closeAfter: 'all' });
  const tmp = useTempDir('svc-restore-');

  it('restores a snapshot saved from a 3.4 cluster into a new cluster with every key intact', async () => {
    const cluster = await clusters.start({ size: 3, version: '3.4.34' });
    for (let i = 0; i < 50; i++) await cluster.put(i % 3, `r/${i}`, `v${i}`);
    const leader = await cluster.leader();
    const file = join(tmp.path, 'backup.db');
    const saved = await run(['--endpoints', cluster.members[leader].endpoint, 'snapshot', 'save', file]);
    expect(saved.code, saved.err).to.equal(0);
    expect(saved.out).to.contain(`Snapshot saved at ${file}`);
    expect(statSync(file).size % 512).to.equal(32);
    expect(existsSync(`${file}.part`)).to.equal(false);

    const [client, peer] = await freePorts(2);
    const dataDir = join(tmp.path, 'restored');
    const peerURL = `http://127.0.0.1:${peer}`;
    const restoreArgs = ['snapshot', 'restore', file, '--name', 'r1', '--data-dir', dataDir, '--initial-cluster', `r1=${peerURL}`, '--initial-advertise-peer-urls', peerURL, '--initial-cluster-token', 'restored'];
    const r = await run(restoreArgs);
    expect(r.code, r.err).to.equal(0);
    expect(r.out).to.match(/Snapshot restored to /);
    // A second restore into the same data dir is refused: nothing is overwritten.
    const again = await run(restoreArgs);
    expect(again.code).to.equal(1);
    expect(again.err).to.match(/exists; refusing to overwrite/);

    const clientURL = `http://127.0.0.1:${client}`;
    stopLater(spawnSvc(['--name', 'r1', '--data-dir', dataDir, '--listen-client-urls', clientURL, '--advertise-client-urls', clientURL, '--listen-peer-urls', peerURL, '--initial-advertise-peer-urls', peerURL, '--initial-cluster', `r1=${peerURL}`, '--initial-cluster-token', 'restored'], { logFile: join(tmp.path, 'r1.log'), version: '3.4.34', name: 'r1' }));
    await waitForHttp(`${clientURL}/health`, { timeoutMs: 30000 });
    const got = await run(['--endpoints', `127.0.0.1:${client}`, 'get', 'r/', '--prefix', '--print-value-only']);
    expect(got.code, got.err).to.equal(0);
    const values = got.out.trim().split('\n').sort();
    expect(values).to.have.length(50);
    expect(values).to.include('v0').and.include('v49');
    const put = await run(['--endpoints', `127.0.0.1:${client}`, 'put', 'after', 'restore']);
    expect(put.out.trim()).to.equal('OK');
  });

  it('refuses a file whose sha256 does not match', async () => {
    const bad = join(tmp.path, 'bad.db');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bad, Buffer.alloc(512 + 32, 7));
    const r = await run(['snapshot', 'restore', bad, '--name', 'x', '--data-dir', join(tmp.path, 'bad-restore')]);
    expect(r.code).to.equal(1);
    expect(r.err).to.match(/corrupt: its sha256 does not match/);
    expect(existsSync(join(tmp.path, 'bad-restore'))).to.equal(false);
  });
});
