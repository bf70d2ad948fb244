// Writes messages.ts, the typed messages of the wire contract, from the .proto files: one TypeScript shape per
// message as the loader decodes it (loader.ts), and the method table of every service. Run after changing a
// .proto: `npm run build && node dist/server/wire/generate.js` (rewrites server/wire/messages.ts; the unit
// test test/unit/wire/wire.test.ts fails while the two differ).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';
import { wireRoot } from './loader.js';

const LONGS = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const NUMBERS = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'double', 'float']);

const fq = (o: protobuf.ReflectionObject) => o.fullName.replace(/^\./, '');

function scalar(type: string): string {
  if (LONGS.has(type)) return 'string';
  if (NUMBERS.has(type)) return 'number';
  if (type === 'bool') return 'boolean';
  if (type === 'string') return 'string';
  if (type === 'bytes') return 'Buffer';
  throw new Error(`unknown scalar type ${type}`);
}

function fieldType(f: protobuf.Field): { ts: string; message: boolean } {
  const t = f.resolvedType;
  if (t instanceof protobuf.Type) return { ts: `Messages['${fq(t)}']`, message: true };
  if (t instanceof protobuf.Enum) return { ts: Object.keys(t.values).map((v) => `'${v}'`).join(' | '), message: false };
  return { ts: scalar(f.type), message: false };
}

/** A field as the encoder takes it (see Encodable in the output). */
function encodableType(f: protobuf.Field): string {
  const t = f.resolvedType;
  if (t instanceof protobuf.Type) return `Encodable['${fq(t)}'] | null`;
  if (t instanceof protobuf.Enum) return Object.keys(t.values).map((v) => `'${v}'`).join(' | ');
  if (LONGS.has(f.type)) return 'Int64';
  if (f.type === 'bytes') return 'Uint8Array';
  return scalar(f.type);
}

function collect(ns: protobuf.NamespaceBase, types: protobuf.Type[], services: protobuf.Service[]): void {
  for (const o of ns.nestedArray) {
    if (o instanceof protobuf.Type) types.push(o);
    else if (o instanceof protobuf.Service) services.push(o);
    if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) collect(o, types, services);
  }
}

/** The members of an interface of every message: one line per field (`line`), then any `extra` lines of its own. */
function renderFields(out: string[], types: protobuf.Type[], line: (f: protobuf.Field) => string, extra: (t: protobuf.Type) => string[] = () => []): void {
  for (const t of types) {
    if (t.fieldsArray.length === 0) {
      out.push(`  '${fq(t)}': Record<string, never>;`);
      continue;
    }
    out.push(`  '${fq(t)}': {`, ...t.fieldsArray.map((f) => `    ${line(f)}`), ...extra(t).map((l) => `    ${l}`), '  };');
  }
}

/** The text of messages.ts for a loaded Root. */
export function renderMessages(root: protobuf.Root): string {
  const types: protobuf.Type[] = [];
  const services: protobuf.Service[] = [];
  collect(root, types, services);
  const byName = (a: protobuf.ReflectionObject, b: protobuf.ReflectionObject) => (fq(a) < fq(b) ? -1 : fq(a) > fq(b) ? 1 : 0);
  types.sort(byName);
  services.sort(byName);
  const out: string[] = [
    '// Generated from server/wire/proto by server/wire/generate.ts: do not edit (see its header to regenerate).',
    '// Each message twice: as the loader decodes it (Messages: proto field names, 64-bit integers as decimal strings,',
    '// bytes as Buffer, enums as names, absent messages as null, only the oneof member that was sent plus a property',
    '// naming it), and as the encoder takes it (Encodable: what a server answers and a client sends).',
    "import type { Long } from 'protobufjs';",
    '',
    '/** Every message by its fully qualified name. */',
    'export interface Messages {',
  ];
  renderFields(out, types, (f) => {
    const { ts, message } = fieldType(f);
    if (f.map) return `${f.name}: Record<string, ${ts}>;`;
    if (f.repeated) return `${f.name}: Array<${ts}>;`;
    if (f.partOf) return `${f.name}?: ${ts};`;
    return `${f.name}: ${ts}${message ? ' | null' : ''};`;
  }, (t) => t.oneofsArray.map((o) => `${o.name}?: ${o.oneof.map((n) => `'${n}'`).join(' | ')};`));
  out.push('}', '', 'export type MessageName = keyof Messages;', '');
  out.push(
    '/** A 64-bit integer as the encoder takes it: a number (exact up to 2^53), a decimal string or a protobufjs Long. */',
    'export type Int64 = number | string | Long;',
    '',
    '/**',
    ' * Every message as the encoder takes it: every field optional (absent is the zero value), 64-bit integers as',
    ' * Int64, bytes as any Uint8Array, enums by name, a oneof by the one member that is set.',
    ' */',
    'export interface Encodable {',
  );
  renderFields(out, types, (f) => {
    const ts = encodableType(f);
    if (f.map) return `${f.name}?: Record<string, ${ts}>;`;
    if (f.repeated) return `${f.name}?: Array<${ts.replace(/ \| null$/, '')}>;`;
    return `${f.name}?: ${ts};`;
  });
  out.push('}', '');
  out.push('/** Every service by its fully qualified name: its methods, their messages and which side streams. */');
  out.push('export const SERVICES = {');
  for (const s of services) {
    out.push(`  '${fq(s)}': {`);
    for (const m of s.methodsArray) {
      out.push(`    ${m.name}: { request: '${fq(m.resolvedRequestType!)}', response: '${fq(m.resolvedResponseType!)}', requestStream: ${!!m.requestStream}, responseStream: ${!!m.responseStream} },`);
    }
    out.push('  },');
  }
  out.push('} as const satisfies Record<string, Record<string, MethodInfo>>;', '');
  out.push(
    '/** One method of a service. */',
    'export interface MethodInfo {',
    '  readonly request: MessageName;',
    '  readonly response: MessageName;',
    '  readonly requestStream: boolean;',
    '  readonly responseStream: boolean;',
    '}',
    '',
    'export type ServiceName = keyof typeof SERVICES;',
    '',
    '/** The unary methods of a service (neither side streams). */',
    'export type UnaryMethod<S extends ServiceName> = {',
    "  [M in keyof (typeof SERVICES)[S]]: (typeof SERVICES)[S][M] extends { requestStream: false; responseStream: false } ? M : never;",
    '}[keyof (typeof SERVICES)[S]] & string;',
    '',
    '/** The decoded request and response of a method. */',
    "export type RequestOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { request: infer R extends MessageName } ? Messages[R] : never;",
    "export type ResponseOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { response: infer R extends MessageName } ? Messages[R] : never;",
    '',
    '/** The request and response of a method as the encoder takes them (what a client sends, what a server answers). */',
    "export type EncodableRequestOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { request: infer R extends MessageName } ? Encodable[R] : never;",
    "export type EncodableResponseOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { response: infer R extends MessageName } ? Encodable[R] : never;",
    '',
  );
  return out.join('\n');
}

/** Where messages.ts is in the source tree (the compiled module is in <outDir>/server/wire/). */
export function messagesSourcePath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return join(here, '..', '..', '..', 'server', 'wire', 'messages.ts');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = messagesSourcePath();
  writeFileSync(file, renderMessages(wireRoot()));
  process.stdout.write(`wrote ${file}\n`);
}
