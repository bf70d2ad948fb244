// A committed entry a member cannot decode must stop the member, never be skipped: skipping it would let the
// member's store diverge from the others' (chaos finding F6).
import { expect } from 'chai';
import { join } from 'node:path';
import { newConfig, startEmbedded } from '../../../server/embed/index.js';
import { freePorts } from '../../../harness/ports.js';
import { useCleanup } from '../../../harness/cleanup.js';
import { useTempDir } from '../../../harness/temp-dir.js';

describe('a committed entry that cannot be decoded', function () {
  this.timeout(30000);
  const stopLater = useCleanup();
  const tmp = useTempDir('svc-undecodable-');

  it('stops the member with a fatal error naming the index', async () => {
    const [client, peer] = await freePorts(2);
    const c = newConfig('3.5.21');
    Object.assign(c, {
      name: 'u1', dataDir: join(tmp.path, 'u1'), logOutputs: [join(tmp.path, 'u1.log')],
      listenClientUrls: [`http://127.0.0.1:${client}`], advertiseClientUrls: [`http://127.0.0.1:${client}`],
      listenPeerUrls: [`http://127.0.0.1:${peer}`], initialAdvertisePeerUrls: [`http://127.0.0.1:${peer}`],
      initialCluster: `u1=http://127.0.0.1:${peer}`,
    });
    const m = stopLater(await startEmbedded(c));
    await m.ready;
    const server = m.member.server;
    const fatal = new Promise<Error>((resolve) => server.onFatal(resolve));
    const before = server.kv.rev();
    server.raft.propose(Buffer.from([0xff, 0x00, 0x13, 0x37]));
    server.kick();
    const e = await fatal;
    expect(e.message).to.match(/cannot decode the committed entry at index \d+/);
    expect(server.isStopped()).to.equal(true);
    expect(server.kv.rev()).to.equal(before);
  });
});
