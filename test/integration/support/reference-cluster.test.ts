// The reference-cluster helper itself: three real etcd 3.4.23 members come up healthy, etcdctl
// reads and writes through them, and stop() leaves neither processes nor files behind.

import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet } from '../../../harness/process.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('test support: reference cluster (etcd 3.4.23)', function () {
  let cluster: ReferenceCluster | undefined;

  after(async function () {
    await cluster?.stop();
  });

  it('freePorts never hands out the same port twice', async function () {
    const a = await freePorts(20);
    const b = await freePorts(20);
    expect(new Set([...a, ...b]).size).to.equal(40);
    for (const p of [...a, ...b]) expect(p).to.be.within(20000, 31999);
  });

  it('starts 3 healthy members, serves etcdctl put/get, and stop() removes everything', async function () {
    cluster = await startReferenceCluster({ size: 3 });
    expect(cluster.members).to.have.length(3);
    expect(cluster.endpoints).to.have.length(3);
    for (const url of cluster.clientUrls) {
      const h = await httpGet(`${url}/health`);
      expect(h.status).to.equal(200);
      expect(JSON.parse(h.body)).to.deep.equal({ health: 'true' });
    }
    const put = await cluster.etcdctl(['put', 'greeting', 'hello']);
    expect(put.code, put.stderr).to.equal(0);
    expect(put.stdout).to.equal('OK\n');
    // read from one particular member: the value was replicated
    const get = await cluster.etcdctl(['get', 'greeting'], { endpoints: [cluster.endpoints[2]] });
    expect(get.code, get.stderr).to.equal(0);
    expect(get.stdout).to.equal('greeting\nhello\n');
    const members = await cluster.etcdctl(['member', 'list']);
    expect(members.stdout.trim().split('\n')).to.have.length(3);
    for (const m of cluster.members) expect(members.stdout).to.contain(m.peerUrl);
    const version = await httpGet(`${cluster.clientUrls[0]}/version`);
    expect(JSON.parse(version.body).etcdserver).to.equal('3.4.23');

    const pids = cluster.members.map((m) => m.process.pid);
    const dir = cluster.dir;
    expect(pids.every(alive)).to.equal(true);
    await cluster.stop();
    cluster = undefined;
    expect(pids.some(alive)).to.equal(false);
    expect(existsSync(dir)).to.equal(false);
  });
});
