// The typed service modules name exactly the unary methods of the service definitions: the compiler checks each
// module against the generated method table (server/wire/messages.ts), and this test checks the table's unary
// methods against the definitions loaded from the .proto files.
import { expect } from 'chai';
import { SERVICES, serviceDefinition, type ServiceName } from '../../../server/wire/index.js';
import { unaryMethods, type KvService, type LockService, type UnaryHandler } from '../../../server/api/v3/service-methods.js';

describe('v3 service method lists', () => {
  for (const fq of Object.keys(SERVICES) as ServiceName[]) {
    it(`${fq}: the unary methods of the definition`, () => {
      const def = serviceDefinition(fq);
      const unary = Object.entries(def).filter(([, m]) => !m.requestStream && !m.responseStream).map(([n]) => n);
      expect(unaryMethods(fq).sort()).to.deep.equal(unary.sort());
    });
  }
});

// Compile-time: a service module with a misspelled or a missing method does not build (tsc fails on an unused
// expect-error directive, so these lines prove the compiler refuses both).
const h: UnaryHandler = async () => ({});
// @ts-expect-error: misspelled method
export const misspelled: KvService = { Range: h, Put: h, DeleteRange: h, Txn: h, Compcat: h };
// @ts-expect-error: missing method
export const missing: KvService = { Range: h, Put: h, DeleteRange: h, Txn: h };
// @ts-expect-error: a streaming method is not a unary one (Watch is served by streams.ts)
export const streaming: KvService = { Range: h, Put: h, DeleteRange: h, Txn: h, Compact: h, Watch: h };
export const lock: LockService = { Lock: h, Unlock: h };

// Compile-time: a handler is given its request message and answers its response message, field by field.
// @ts-expect-error: an answer field of the wrong type (kvs is a list of KeyValue)
export const wrongAnswer: KvService['Range'] = async () => ({ kvs: 'x' });
// @ts-expect-error: a request field read under a name the message does not have (the wire's is range_end)
export const wrongField: KvService['Range'] = async (req) => ({ count: req.rangeEnd });
// @ts-expect-error: a 64-bit request field is a decimal string, not a bigint
export const wrongInt: KvService['Put'] = async (req) => ({ header: { revision: req.lease === 0n ? 0 : 1 } });
export const typed: KvService['Range'] = async (req) => ({ count: req.limit ?? 0, kvs: [{ key: req.key, lease: 0 }] });
