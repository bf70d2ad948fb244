// Field-by-field comparison of our .proto files with the definitions compiled into the reference
// server binary. Go protobuf code registers each .proto file as a gzipped FileDescriptorProto;
// /usr/bin/etcd (3.4.23) therefore carries the exact wire schema of rpc.proto, kv.proto and
// auth.proto (and v3election.proto, v3lock.proto). Every message, field (name, number, type, label, type name), enum value and rpc of the
// reference must appear identically in ours. Ours may have more: the 3.5 additions (Downgrade,
// AuthStatus, MemberListRequest.linearizable, hashedPassword).

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync, constants as zc } from 'node:zlib';
import { expect } from 'chai';
import protobuf from 'protobufjs';
import { fileDescriptorProtos } from '../../../server/wire/index.js';
import { missingPrerequisite } from '../../../harness/etcdctl.js';

const ETCD_BIN = '/usr/bin/etcd';
const require = createRequire(import.meta.url);

type Obj = Record<string, unknown>;
interface FieldD { name: string; number: number; label?: string; type?: string; typeName?: string; oneofIndex?: number }
interface EnumD { name: string; value?: { name: string; number?: number }[] }
interface MsgD { name: string; field?: FieldD[]; nestedType?: MsgD[]; enumType?: EnumD[] }
interface MethodD { name: string; inputType: string; outputType: string; clientStreaming?: boolean; serverStreaming?: boolean }
interface FileD { name: string; package: string; messageType?: MsgD[]; enumType?: EnumD[]; service?: { name: string; method?: MethodD[] }[] }

const descriptorRoot = protobuf.Root.fromJSON(require('protobufjs/google/protobuf/descriptor.json'));
const FileDescriptorProto = descriptorRoot.lookupType('google.protobuf.FileDescriptorProto');

function decodeFile(buf: Uint8Array): FileD {
  return FileDescriptorProto.toObject(FileDescriptorProto.decode(buf), { enums: String, longs: Number }) as FileD;
}

/** The reference's registered descriptors of the given packages, found by scanning the binary. */
function referenceFiles(packages: string[]): Map<string, FileD> {
  const bin = readFileSync(ETCD_BIN);
  const magic = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0]); // gzip, no mtime: how Go embeds them
  const out = new Map<string, FileD>();
  for (let i = bin.indexOf(magic); i >= 0; i = bin.indexOf(magic, i + 1)) {
    let raw: Buffer;
    try {
      raw = gunzipSync(bin.subarray(i, i + 256 * 1024), { finishFlush: zc.Z_SYNC_FLUSH });
    } catch {
      continue;
    }
    let file: FileD;
    try {
      file = decodeFile(raw);
    } catch {
      continue;
    }
    if (packages.includes(file.package) && /(^|\/)(rpc|kv|auth|v3election|v3lock)\.proto$/.test(file.name)) out.set(file.package, file);
  }
  return out;
}

/** Our descriptors, from the Root the wire loader parsed (the same the server uses). */
function ourFiles(): Map<string, FileD> {
  const out = new Map<string, FileD>();
  for (const buf of fileDescriptorProtos()) {
    const f = decodeFile(buf);
    out.set(f.package, f);
  }
  return out;
}

function messages(prefix: string, list: MsgD[] = []): Map<string, MsgD> {
  const out = new Map<string, MsgD>();
  for (const m of list) {
    out.set(`${prefix}.${m.name}`, m);
    for (const [k, v] of messages(`${prefix}.${m.name}`, m.nestedType)) out.set(k, v);
  }
  return out;
}

function enums(prefix: string, file: { enumType?: EnumD[] }, msgs: Map<string, MsgD>): Map<string, Obj> {
  const out = new Map<string, Obj>();
  for (const e of file.enumType ?? []) out.set(`${prefix}.${e.name}`, values(e));
  for (const [name, m] of msgs) for (const e of m.enumType ?? []) out.set(`${name}.${e.name}`, values(e));
  return out;
}

function values(e: EnumD): Obj {
  return Object.fromEntries((e.value ?? []).map((v) => [v.name, v.number ?? 0]));
}

// protobufjs writes type references relative to the scope, protoc fully qualified: compare the
// final name (message and enum names are unique within these packages).
function simpleName(typeName: string | undefined): string {
  return (typeName ?? '').split('.').pop()!;
}

function fieldShape(f: FieldD): Obj {
  return { name: f.name, number: f.number, label: f.label, type: f.type, typeName: simpleName(f.typeName), oneof: f.oneofIndex !== undefined };
}

const PACKAGES = ['etcdserverpb', 'mvccpb', 'authpb', 'v3electionpb', 'v3lockpb'];

describe('gRPC definitions agree with the reference binary (etcd 3.4.23)', function () {
  let ref: Map<string, FileD>;
  let ours: Map<string, FileD>;

  before(function () {
    if (!existsSync(ETCD_BIN)) throw missingPrerequisite(ETCD_BIN);
    ref = referenceFiles(PACKAGES);
    ours = ourFiles();
    expect([...ref.keys()].sort(), 'descriptors found in the reference binary').to.deep.equal([...PACKAGES].sort());
  });

  for (const pkg of PACKAGES) {
    it(`${pkg}: every reference message, field and enum value is identical in ours`, function () {
      const refMsgs = messages(`.${pkg}`, ref.get(pkg)!.messageType);
      const ourMsgs = messages(`.${pkg}`, ours.get(pkg)!.messageType);
      expect(refMsgs.size).to.be.greaterThan(0);
      for (const [name, m] of refMsgs) {
        const mine = ourMsgs.get(name);
        expect(mine, `message ${name}`).to.not.equal(undefined);
        const byNumber = new Map((mine!.field ?? []).map((f) => [f.number, f]));
        for (const f of m.field ?? []) {
          const o = byNumber.get(f.number);
          expect(o, `${name} field ${f.number} (${f.name})`).to.not.equal(undefined);
          expect(fieldShape(o!), `${name}.${f.name}`).to.deep.equal(fieldShape(f));
        }
      }
      const refEnums = enums(`.${pkg}`, ref.get(pkg)!, refMsgs);
      const ourEnums = enums(`.${pkg}`, ours.get(pkg)!, ourMsgs);
      for (const [name, vals] of refEnums) {
        expect(ourEnums.get(name), `enum ${name}`).to.deep.include(vals);
      }
    });
  }

  const services: Array<[string, string[]]> = [
    ['etcdserverpb', ['Auth', 'Cluster', 'KV', 'Lease', 'Maintenance', 'Watch']],
    ['v3electionpb', ['Election']],
    ['v3lockpb', ['Lock']],
  ];
  for (const [pkg, names] of services) {
    it(`${pkg}: every reference service and rpc is identical in ours`, function () {
      const mine = new Map((ours.get(pkg)!.service ?? []).map((s) => [s.name, s]));
      const refServices = ref.get(pkg)!.service ?? [];
      expect(refServices.map((s) => s.name).sort()).to.deep.equal(names);
      for (const s of refServices) {
        const o = mine.get(s.name);
        expect(o, `service ${s.name}`).to.not.equal(undefined);
        const methods = new Map((o!.method ?? []).map((m) => [m.name, m]));
        for (const m of s.method ?? []) {
          const om = methods.get(m.name);
          expect(om, `${s.name}.${m.name}`).to.not.equal(undefined);
          const shape = (x: MethodD) => [simpleName(x.inputType), simpleName(x.outputType), !!x.clientStreaming, !!x.serverStreaming];
          expect(shape(om!), `${s.name}.${m.name}`).to.deep.equal(shape(m));
        }
      }
    });
  }
});
