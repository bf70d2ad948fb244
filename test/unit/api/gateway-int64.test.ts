// Every 64-bit integer field of every request message the JSON gateway accepts (found by walking the proto
// descriptors the server loads, from each route's request type down through nested messages) arrives exactly,
// whether the body gives it as a JSON number or a string; a number outside the field's range is refused with
// the reference's error text.
import { expect } from 'chai';
import fc from 'fast-check';
import protobufjs from 'protobufjs';
import { GATEWAY_ROUTES, GATEWAY_STREAMS, GatewayInputError, JsonNumber, jsonToMessage, parseGatewayJson } from '../../../server/api/gateway.js';
import { messageType } from '../../../server/wire/index.js';

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

interface Field64 {
  request: string;
  /** Field names from the request message down to the 64-bit field; a repeated message is one element. */
  path: Array<{ name: string; repeated: boolean }>;
  type: string;
}

/** The 64-bit fields reachable from `type`, each message type visited once per path (TxnRequest nests itself). */
function fields64(request: string, type: protobufjs.Type, prefix: Field64['path'] = [], seen = new Set<string>()): Field64[] {
  const out: Field64[] = [];
  for (const f of type.fieldsArray) {
    f.resolve();
    const path = [...prefix, { name: f.name, repeated: f.repeated }];
    if (f.resolvedType instanceof protobufjs.Type) {
      if (!seen.has(f.resolvedType.fullName)) out.push(...fields64(request, f.resolvedType, path, new Set([...seen, type.fullName])));
    } else if (INT64.has(f.type) && !f.repeated) {
      out.push({ request, path, type: f.type });
    }
  }
  return out;
}

const requests = [...new Set([...Object.values(GATEWAY_ROUTES), ...Object.values(GATEWAY_STREAMS)].map((r) => r.request))];
const all = requests.flatMap((r) => fields64(r, messageType(r)));

/** The body's JSON text with `literal` at `path`. */
function body(path: Field64['path'], literal: string): string {
  let text = literal;
  for (let i = path.length - 1; i >= 0; i--) {
    text = `{${JSON.stringify(path[i].name)}: ${text}}`;
    if (i > 0 && path[i - 1].repeated) text = `[${text}]`;
  }
  return text;
}

function valueAt(msg: Record<string, unknown>, path: Field64['path']): unknown {
  let v: unknown = msg;
  for (const p of path) {
    v = (v as Record<string, unknown>)[p.name];
    if (p.repeated) v = (v as unknown[])[0];
  }
  return v;
}

const range = (type: string): [bigint, bigint] => (type.startsWith('u') || type === 'fixed64' ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n]);

describe('api/gateway: 64-bit integers in request bodies', () => {
  it('finds the 64-bit fields of the requests in the proto descriptors (lease IDs, revisions, member IDs)', () => {
    const names = all.map((f) => `${f.request}.${f.path.map((p) => p.name).join('.')}`);
    expect(names).to.include.members([
      'etcdserverpb.LeaseGrantRequest.ID', 'etcdserverpb.RangeRequest.revision', 'etcdserverpb.MemberRemoveRequest.ID',
      'v3electionpb.CampaignRequest.lease', 'etcdserverpb.TxnRequest.compare.mod_revision',
      'etcdserverpb.TxnRequest.success.request_put.lease', 'etcdserverpb.WatchRequest.create_request.start_revision',
    ]);
    expect(all.length).to.be.greaterThan(30);
  });

  for (const f of all) {
    const name = `${f.request}.${f.path.map((p) => p.name).join('.')}`;
    it(`${name} (${f.type}): exact as a number or a string, refused out of range`, () => {
      const [lo, hi] = range(f.type);
      const value = fc.oneof(fc.bigInt({ min: lo, max: hi }), fc.constantFrom(lo, hi, 0n, 2n ** 53n + 1n, hi - 1n));
      fc.assert(
        fc.property(value, fc.boolean(), (v, quoted) => {
          const msg = jsonToMessage(f.request, parseGatewayJson(body(f.path, quoted ? `"${v}"` : String(v))));
          expect(valueAt(msg as Record<string, unknown>, f.path)).to.equal(String(v));
        }),
        { numRuns: 40 },
      );
      const go = f.type.startsWith('u') || f.type === 'fixed64' ? 'uint64' : 'int64';
      for (const out of [hi + 1n, lo - 1n]) {
        expect(() => jsonToMessage(f.request, parseGatewayJson(body(f.path, String(out))))).to.throw(GatewayInputError, `json: cannot unmarshal number ${out} into Go value of type ${go}`);
      }
    });
  }

  it('reads JSON as JSON.parse does apart from numbers, and refuses what JSON.parse refuses', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v, null, 1);
        const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, y: unknown) => (y instanceof JsonNumber ? Number(y.text) : y)));
        expect(plain(parseGatewayJson(text))).to.deep.equal(JSON.parse(text));
      }),
      { numRuns: 200 },
    );
    for (const bad of ['{', '{"a":1,}', '[1 2]', '01', '"\\x"']) expect(() => parseGatewayJson(bad), bad).to.throw(SyntaxError);
  });
});
