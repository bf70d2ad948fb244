import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newConfig, startEmbedded, EmbedConfigError, type EmbedConfig, type EmbeddedMember } from '../../../server/embed/index.js';
import { freePorts } from '../../../harness/ports.js';

async function clusterConfigs(n: number, version: string, dir: string): Promise<EmbedConfig[]> {
  const ports = await freePorts(2 * n);
  const names = Array.from({ length: n }, (_, i) => `e${i + 1}`);
  const peer = (i: number) => `http://127.0.0.1:${ports[2 * i + 1]}`;
  const initialCluster = names.map((nm, i) => `${nm}=${peer(i)}`).join(',');
  return names.map((name, i) => {
    const c = newConfig(version);
    c.name = name;
    c.dataDir = join(dir, name);
    c.listenClientUrls = [`http://127.0.0.1:${ports[2 * i]}`];
    c.advertiseClientUrls = c.listenClientUrls;
    c.listenPeerUrls = [peer(i)];
    c.initialAdvertisePeerUrls = [peer(i)];
    c.initialCluster = initialCluster;
    c.initialClusterToken = 'embed-test';
    if (c.logOutputs) c.logOutputs = [join(dir, `${name}.log`)];
    return c;
  });
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return Number(line?.split(' ')[1]);
}

describe('svc/embed', function () {
  this.timeout(60000);
  let dir: string;
  let members: EmbeddedMember[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-embed-'));
  });
  afterEach(async () => {
    await Promise.all(members.map((m) => m.close()));
    members = [];
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses the 3.3 field names (logOutput, snapCount, setupLogging) under 3.3', () => {
    const c = newConfig('3.3.27');
    expect(c.logOutput).to.equal('default');
    expect(c.snapCount).to.equal(100000);
    expect(c.setupLogging).to.be.a('function');
    expect(c).to.not.have.property('logOutputs');
    expect(c).to.not.have.property('snapshotCount');
  });

  it('uses logOutputs and snapshotCount from 3.4, without setupLogging', () => {
    for (const v of ['3.4.34', '3.5.21']) {
      const c = newConfig(v);
      expect(c.logOutputs).to.deep.equal(['default']);
      expect(c.snapshotCount).to.equal(100000);
      expect(c).to.not.have.property('setupLogging');
    }
  });

  it('refuses the old field names under 3.4+ with a message naming the new field', async () => {
    const [c] = await clusterConfigs(1, '3.4.34', dir);
    const bad = { ...c, snapCount: 5 };
    const err = await startEmbedded(bad).then(() => null, (e: Error) => e);
    expect(err).to.be.instanceOf(EmbedConfigError);
    expect(err!.message).to.match(/snapCount was renamed snapshotCount/);
    const bad2 = { ...c, logOutput: 'stderr' };
    const err2 = await startEmbedded(bad2).then(() => null, (e: Error) => e);
    expect(err2!.message).to.match(/logOutput was renamed logOutputs/);
  });

  it('runs three embedded members in one process as one cluster, and close() of the leader hands leadership over', async () => {
    const cfgs = await clusterConfigs(3, '3.4.34', dir);
    members = await Promise.all(cfgs.map((c) => startEmbedded(c)));
    await Promise.all(members.map((m) => m.ready));
    const put = await fetch(`${members[0].clientURLs[0]}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('k').toString('base64'), value: Buffer.from('v').toString('base64') }) });
    expect(put.status).to.equal(200);
    for (const m of members) {
      const r = await (await fetch(`${m.clientURLs[0]}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('k').toString('base64') }) })).json() as { kvs: Array<{ value: string }> };
      expect(Buffer.from(r.kvs[0].value, 'base64').toString()).to.equal('v');
    }
    const leaders = await Promise.all(members.map((m) => metric(m.clientURLs[0], 'svc_server_is_leader')));
    expect(leaders.filter((x) => x === 1)).to.have.length(1);
    const li = leaders.indexOf(1);
    const leader = members[li];
    const termBefore = leader.member.server.term;
    await leader.close();
    members.splice(li, 1);
    const newLeaders = await Promise.all(members.map((m) => metric(m.clientURLs[0], 'svc_server_is_leader')));
    expect(newLeaders.filter((x) => x === 1)).to.have.length(1);
    expect(Math.max(...members.map((m) => m.member.server.term))).to.be.greaterThan(termBefore);
  });

  it('takes the corruption-check fields: a restarted member checks its peers before serving, the leader checks periodically', async () => {
    const configs = (await clusterConfigs(2, '3.5.21', dir)).map((c) => ({ ...c, experimentalInitialCorruptCheck: true, experimentalCorruptCheckTimeMs: 200 }));
    members = await Promise.all(configs.map((c) => startEmbedded(c)));
    await Promise.all(members.map((m) => m.ready));
    await members[1].close();
    members[1] = await startEmbedded(configs[1]);
    await members[1].ready;
    const log = () => members.map((_, i) => readFileSync(join(dir, `e${i + 1}.log`), 'utf8')).join('\n');
    expect(log()).to.contain('"msg":"initial corruption checking passed; no corruption"');
    for (let t = Date.now(); !log().includes('"number-of-peers-checked":1') && Date.now() - t < 5000;) await new Promise((r) => setTimeout(r, 100));
    expect(log()).to.contain('"msg":"finished peer corruption check","number-of-peers-checked":1');
  });
});
