// The wire contract (server/wire): importing it reads and parses nothing, its one loader reads the .proto files
// once on first use, the generated typed messages match the .proto files, and the gRPC definitions it builds are
// the ones @grpc/proto-loader builds (same paths, streams, names and decoding).
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import type * as grpc from '@grpc/grpc-js';
import * as wire from '../../../server/wire/index.js';
import { messageType, serializer } from '../../../server/wire/loader.js';
import { messagesSourcePath, renderMessages } from '../../../server/wire/generate.js';
import type { ClientMethod } from '../../../server/client/connection.js';

type Loader = typeof import('../../../server/wire/loader.js');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

describe('wire contract (server/wire)', () => {
  it('reads nothing at import; the first use reads every .proto file once, later uses none', async () => {
    // a module instance of its own (the query makes it new), so what other tests loaded does not count
    const fresh = (await import(`../../../server/wire/loader.js?fresh=${Date.now()}`)) as Loader;
    expect(fresh.wireLoadStats()).to.deep.equal({ loads: 0, filesRead: [] });
    fresh.setProtoDir(wire.protoRoot());
    expect(fresh.wireLoadStats().loads, 'setProtoDir reads nothing').to.equal(0);
    const defs = fresh.serviceDefinitions();
    expect(Object.keys(defs).sort()).to.deep.equal(Object.keys(wire.serviceNames).sort());
    const after = fresh.wireLoadStats();
    expect(after.loads).to.equal(1);
    const read = after.filesRead.map((f) => relative(wire.protoRoot(), f)).sort();
    expect([...new Set(read)]).to.deep.equal([...wire.protoFiles].sort());
    fresh.loadClients();
    fresh.messageType('etcdserverpb.PutRequest');
    fresh.serviceDefinition('etcdserverpb.KV');
    expect(fresh.wireLoadStats(), 'the server, the clients and the gateway share the one load').to.deep.equal(after);
  });

  it('a missing proto folder is a clear error on first use, not at import', async () => {
    const fresh = (await import(`../../../server/wire/loader.js?missing=${Date.now()}`)) as Loader;
    fresh.setProtoDir('/nonexistent/svc-proto');
    expect(() => fresh.serviceDefinitions()).to.throw(fresh.ProtoLoadError, /cannot load the gRPC definitions from \/nonexistent\/svc-proto/);
  });

  it('messages.ts is what the generator makes from the .proto files', () => {
    const checkedIn = readFileSync(messagesSourcePath(), 'utf8');
    expect(checkedIn === renderMessages(wire.wireRoot()), 'server/wire/messages.ts is stale: run node dist/server/wire/generate.js').to.equal(true);
  });

  it('the typed method table names the methods, messages and streams of the service definitions', () => {
    const fqs = Object.keys(wire.SERVICES) as wire.ServiceName[];
    expect(fqs.sort()).to.deep.equal(Object.values(wire.serviceNames).sort());
    for (const fq of fqs) {
      const def = wire.serviceDefinition(fq);
      const table = wire.SERVICES[fq] as Record<string, wire.MethodInfo>;
      expect(Object.keys(table).sort(), fq).to.deep.equal(Object.keys(def).sort());
      for (const [name, info] of Object.entries(table)) {
        expect(def[name].requestStream, `${fq}.${name}`).to.equal(info.requestStream);
        expect(def[name].responseStream, `${fq}.${name}`).to.equal(info.responseStream);
        const method = wire.wireRoot().lookupService(fq).methods[name];
        expect(method.resolvedRequestType!.fullName, `${fq}.${name} request`).to.equal(`.${info.request}`);
        expect(method.resolvedResponseType!.fullName, `${fq}.${name} response`).to.equal(`.${info.response}`);
      }
    }
  });

  it('builds the definitions @grpc/proto-loader builds: paths, streams, names, encoding and decoding', () => {
    const theirs = protoLoader.loadSync([...wire.protoFiles], {
      keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [wire.protoRoot()],
    });
    const samples: Record<string, object> = {
      'etcdserverpb.PutRequest': { key: Buffer.from('k'), value: Buffer.from('v'), lease: '7587862072907010052', prev_kv: true },
      'etcdserverpb.TxnRequest': {
        compare: [{ result: 'GREATER', target: 'MOD', key: Buffer.from('a'), mod_revision: '5' }],
        success: [{ request_put: { key: Buffer.from('a'), value: Buffer.from('b') } }],
        failure: [{ request_range: { key: Buffer.from('a'), sort_order: 'DESCEND' } }],
      },
      'etcdserverpb.RangeResponse': {
        header: { cluster_id: '18446744073709551615', member_id: '1', revision: '9', raft_term: '2' },
        kvs: [{ key: Buffer.from('a'), value: Buffer.from('b'), create_revision: '3', mod_revision: '4', version: '2', lease: '0' }],
        more: false, count: '1',
      },
      'etcdserverpb.AlarmRequest': { action: 'DEACTIVATE', memberID: '42', alarm: 'NOSPACE' },
    };
    let checked = 0;
    let methods = 0;
    for (const fq of Object.values(wire.serviceNames)) {
      const ours = wire.serviceDefinition(fq);
      const ref = theirs[fq] as unknown as grpc.ServiceDefinition;
      expect(Object.keys(ours), fq).to.deep.equal(Object.keys(ref));
      for (const [name, m] of Object.entries(ref)) {
        methods++;
        const o = ours[name];
        expect({ path: o.path, requestStream: o.requestStream, responseStream: o.responseStream, originalName: o.originalName })
          .to.deep.equal({ path: m.path, requestStream: m.requestStream, responseStream: m.responseStream, originalName: m.originalName });
        const info = (wire.SERVICES[fq] as Record<string, wire.MethodInfo>)[name];
        for (const [side, type] of [['request', info.request], ['response', info.response]] as const) {
          const msg = samples[type] ?? {};
          const [ser, de, refSer, refDe] = side === 'request'
            ? [o.requestSerialize, o.requestDeserialize, m.requestSerialize, m.requestDeserialize]
            : [o.responseSerialize, o.responseDeserialize, m.responseSerialize, m.responseDeserialize];
          const bytes = ser(msg);
          expect(Buffer.compare(bytes, refSer(msg)), `${fq}.${name} ${side} encoding`).to.equal(0);
          expect(de(bytes), `${fq}.${name} ${side} decoding`).to.deep.equal(refDe(bytes));
          checked++;
        }
      }
    }
    expect(checked, 'both sides of every method').to.equal(2 * methods);
    expect(methods).to.be.greaterThan(40);
  });

  it('is the only loader: no other module parses .proto files or imports @grpc/proto-loader', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) {
          const text = readFileSync(p, 'utf8');
          if (/@grpc\/proto-loader|\.loadSync\(|protobuf\.(load|parse)\(|protobufjs\/ext/.test(text)) offenders.push(relative(ROOT, p));
        }
      }
    };
    for (const top of ['server', 'operator', 'harness', 'bench']) walk(join(ROOT, top));
    expect(offenders).to.deep.equal(['server/wire/loader.ts']);
  });
});

// Compile-time: the client library names methods from the same table (tsc fails on an unused expect-error).
export const clientMethod: ClientMethod = 'HashKV';
// @ts-expect-error: no service the client calls has this method
export const clientTypo: ClientMethod = 'Rnage';
// @ts-expect-error: a streaming method is not called as a unary one
export const clientStream: ClientMethod = 'LeaseKeepAlive';

describe('wire serializer: plain objects encoded without fromObject where no enum is reachable', () => {
  const header = { cluster_id: '14841639068965178418', member_id: 10276657743932975437n.toString(), revision: 42, raft_term: 3 };
  const kv = (i: number, lease: string | number) => ({ key: Buffer.from(`k${i}`), create_revision: 2 ** 40 + i, mod_revision: '9007199254740993', version: 1, value: Buffer.from('v'.repeat(i)), lease });
  const same = (name: string, obj: object) => {
    const t = messageType(name);
    expect(serializer(t)(obj), name).to.deep.equal(Buffer.from(t.encode(t.fromObject(obj)).finish()));
  };

  it('a range, put and txn answer: the same bytes as encode(fromObject(...))', () => {
    same('etcdserverpb.RangeResponse', { header, kvs: [kv(1, 0), kv(2, '-7587862072907324676'), kv(3, '7587862072907324676')], more: true, count: 3 });
    same('etcdserverpb.PutResponse', { header, prev_kv: kv(4, 0) });
    same('etcdserverpb.TxnResponse', { header, succeeded: true, responses: [{ response_range: { header, kvs: [kv(5, 0)], count: 1 } }, { response_put: { header } }] });
    same('etcdserverpb.RangeResponse', { header, kvs: [] });
  });

  it('an answer with an enum (a watch event "PUT") still goes through fromObject', () => {
    const t = messageType('etcdserverpb.WatchResponse');
    const out = serializer(t)({ header, watch_id: 1, events: [{ type: 'DELETE', kv: kv(1, 0) }] });
    const back = t.toObject(t.decode(out), { enums: String, longs: String }) as { events: Array<{ type: string }> };
    expect(back.events[0].type).to.equal('DELETE');
  });
});
