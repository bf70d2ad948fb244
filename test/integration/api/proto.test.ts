// Wire compatibility of server/wire/proto: a gRPC server built from our definitions, with canned
// answers, is driven by the REAL reference client (etcdctl 3.4.23). If a field number or type were
// wrong, etcdctl would print a wrong value, a zero, or fail to decode.

import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { loadClients, serviceDefinitions } from '../../../server/wire/index.js';
import { etcdctl } from '../../../harness/etcdctl.js';

const {
  auth: authService,
  cluster: clusterService,
  health: healthService,
  election: electionService,
  lock: lockService,
  kv: kvService,
  lease: leaseService,
  maintenance: maintenanceService,
  watch: watchService,
} = serviceDefinitions();

// Values above 2^53 prove 64-bit fields survive without rounding.
const CLUSTER_ID = '14841639068965178418';
const MEMBER_ID = '10276657743932975437';
const LEASE_ID = '7587862072907010052';
const header = { cluster_id: CLUSTER_ID, member_id: MEMBER_ID, revision: 7, raft_term: 3 };

type Any = Record<string, unknown>;

describe('gRPC definitions (server/wire/proto) against the real etcdctl', function () {
  let server: grpc.Server;
  let endpoint: string;
  const seen: Record<string, Any[]> = {};
  const snapshotContent = randomBytes(3 * 512); // whole "pages"; the digest is appended on the wire
  let tmp: string;

  function record(method: string, req: Any) {
    (seen[method] ??= []).push(req);
  }

  before(async function () {
    tmp = mkdtempSync(join(tmpdir(), 'svc-proto-'));
    server = new grpc.Server();
    server.addService(kvService, {
      Put(call: grpc.ServerUnaryCall<Any, Any>, cb: grpc.sendUnaryData<Any>) {
        record('Put', call.request);
        cb(null, { header });
      },
      Range(call: grpc.ServerUnaryCall<Any, Any>, cb: grpc.sendUnaryData<Any>) {
        record('Range', call.request);
        cb(null, {
          header,
          kvs: [
            {
              key: Buffer.from('foo'),
              value: Buffer.from('bar'),
              create_revision: 5,
              mod_revision: 7,
              version: 2,
              lease: LEASE_ID,
            },
          ],
          count: 1,
        });
      },
    });
    server.addService(maintenanceService, {
      Status(call: grpc.ServerUnaryCall<Any, Any>, cb: grpc.sendUnaryData<Any>) {
        record('Status', call.request);
        cb(null, {
          header,
          version: '3.5.21',
          dbSize: 24576,
          leader: MEMBER_ID,
          raftIndex: 42,
          raftTerm: 3,
          raftAppliedIndex: 41,
          errors: ['memberID:1 alarm:NOSPACE'],
          dbSizeInUse: 12288,
          isLearner: false,
        });
      },
      Snapshot(call: grpc.ServerWritableStream<Any, Any>) {
        record('Snapshot', call.request);
        const wire = Buffer.concat([snapshotContent, createHash('sha256').update(snapshotContent).digest()]);
        // Uneven chunks, so the client has to reassemble.
        const chunk = 700;
        for (let off = 0; off < wire.length; off += chunk) {
          const blob = wire.subarray(off, off + chunk);
          call.write({ header, remaining_bytes: wire.length - off - blob.length, blob });
        }
        call.end();
      },
    });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err) return reject(err);
        endpoint = `127.0.0.1:${port}`;
        resolve();
      }),
    );
  });

  after(async function () {
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    rmSync(tmp, { recursive: true, force: true });
  });

  it('exports every service with the reference method names', function () {
    expect(Object.keys(kvService).sort()).to.deep.equal(['Compact', 'DeleteRange', 'Put', 'Range', 'Txn']);
    expect(Object.keys(watchService)).to.deep.equal(['Watch']);
    expect(Object.keys(leaseService).sort()).to.deep.equal([
      'LeaseGrant',
      'LeaseKeepAlive',
      'LeaseLeases',
      'LeaseRevoke',
      'LeaseTimeToLive',
    ]);
    expect(Object.keys(clusterService).sort()).to.deep.equal([
      'MemberAdd',
      'MemberList',
      'MemberPromote',
      'MemberRemove',
      'MemberUpdate',
    ]);
    expect(Object.keys(maintenanceService).sort()).to.deep.equal([
      'Alarm',
      'Defragment',
      'Downgrade',
      'Hash',
      'HashKV',
      'MoveLeader',
      'Snapshot',
      'Status',
    ]);
    expect(Object.keys(authService)).to.include.members(['AuthEnable', 'AuthDisable', 'AuthStatus', 'Authenticate']);
    expect(Object.keys(authService)).to.have.length(17);
    expect(Object.keys(healthService).sort()).to.deep.equal(['Check', 'Watch']);
    expect(Object.keys(electionService).sort()).to.deep.equal(['Campaign', 'Leader', 'Observe', 'Proclaim', 'Resign']);
    expect(electionService.Observe.responseStream).to.equal(true);
    expect(electionService.Campaign.path).to.equal('/v3electionpb.Election/Campaign');
    expect(Object.keys(lockService).sort()).to.deep.equal(['Lock', 'Unlock']);
    expect(lockService.Lock.path).to.equal('/v3lockpb.Lock/Lock');
    expect(kvService.Range.path).to.equal('/etcdserverpb.KV/Range');
    expect(watchService.Watch.requestStream && watchService.Watch.responseStream).to.equal(true);
    expect(maintenanceService.Snapshot.responseStream).to.equal(true);
    expect(healthService.Check.path).to.equal('/grpc.health.v1.Health/Check');
  });

  it('etcdctl put prints OK, and the request decodes with our options', async function () {
    const r = await etcdctl(['put', 'foo', 'bar'], { endpoints: [endpoint] });
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal('OK\n');
    const req = seen.Put.at(-1)!;
    expect(Buffer.isBuffer(req.key)).to.equal(true);
    expect((req.key as Buffer).toString()).to.equal('foo');
    expect((req.value as Buffer).toString()).to.equal('bar');
    // longs: String and defaults: true -> absent int64 reads as "0", absent bools as false
    expect(req.lease).to.equal('0');
    expect(req.prev_kv).to.equal(false);
    expect(req.ignore_lease).to.equal(false);
  });

  it('etcdctl get prints the key and value', async function () {
    const r = await etcdctl(['get', 'foo'], { endpoints: [endpoint] });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal('foo\nbar\n');
    const req = seen.Range.at(-1)!;
    expect((req.key as Buffer).toString()).to.equal('foo');
    expect((req.range_end as Buffer).length).to.equal(0);
    expect(req.sort_order).to.equal('NONE'); // enums: String
    expect(req.revision).to.equal('0');
  });

  it('etcdctl get -w json shows every header and key-value field, 64-bit values intact', async function () {
    const r = await etcdctl(['-w', 'json', 'get', 'foo'], { endpoints: [endpoint] });
    expect(r.code, r.stderr).to.equal(0);
    // Parse the raw text: JSON.parse would round the 64-bit numbers.
    const text = r.stdout.trim();
    expect(text).to.contain(
      `"header":{"cluster_id":${CLUSTER_ID},"member_id":${MEMBER_ID},"revision":7,"raft_term":3}`,
    );
    expect(text).to.contain(
      `"kvs":[{"key":"Zm9v","create_revision":5,"mod_revision":7,"version":2,"value":"YmFy","lease":${LEASE_ID}}]`,
    );
    expect(text).to.contain('"count":1');
  });

  it('etcdctl endpoint status -w json decodes Maintenance.Status', async function () {
    const r = await etcdctl(['-w', 'json', 'endpoint', 'status'], { endpoints: [endpoint] });
    expect(r.code, r.stderr).to.equal(0);
    const text = r.stdout.trim();
    expect(text).to.contain(`"Endpoint":"${endpoint}"`);
    expect(text).to.contain(`"header":{"cluster_id":${CLUSTER_ID},"member_id":${MEMBER_ID},"revision":7,"raft_term":3}`);
    expect(text).to.contain(`"version":"3.5.21","dbSize":24576,"leader":${MEMBER_ID},"raftIndex":42,"raftTerm":3`);
    expect(text).to.contain('"raftAppliedIndex":41');
    expect(text).to.contain('"errors":["memberID:1 alarm:NOSPACE"]');
    expect(text).to.contain('"dbSizeInUse":12288');
  });

  it('etcdctl snapshot save receives the streamed chunks and the sha256 trailer', async function () {
    const file = join(tmp, 'snap.db');
    const r = await etcdctl(['snapshot', 'save', file], { endpoints: [endpoint] });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain(`Snapshot saved at ${file}`);
    expect(existsSync(`${file}.part`)).to.equal(false);
    const saved = readFileSync(file);
    expect(saved.length % 512).to.equal(32);
    expect(saved.subarray(0, snapshotContent.length).equals(snapshotContent)).to.equal(true);
    expect(saved.subarray(snapshotContent.length).equals(createHash('sha256').update(snapshotContent).digest())).to.equal(
      true,
    );
  });

  it('loadClients() talks to the same server (our own client path)', async function () {
    const { KV } = loadClients();
    const client = new KV(endpoint, grpc.credentials.createInsecure());
    try {
      const res = await new Promise<Any>((resolve, reject) =>
        client.Range({ key: Buffer.from('foo') }, (err: Error | null, value: Any) => (err ? reject(err) : resolve(value))),
      );
      expect((res.header as Any).cluster_id).to.equal(CLUSTER_ID);
      expect((res.header as Any).revision).to.equal('7');
      const kv = (res.kvs as Any[])[0];
      expect(kv.lease).to.equal(LEASE_ID);
      expect((kv.value as Buffer).toString()).to.equal('bar');
      expect(res.more).to.equal(false);
    } finally {
      client.close();
    }
  });
});
