// The typed service modules name exactly the unary methods of the loaded service definitions: the compiler checks
// each module against its list, and this test checks the lists against the .proto files.
import { expect } from 'chai';
import { serviceDefinitions, serviceNames } from '../../../server/api/grpc-services.js';
import { UNARY_METHODS, type KvService, type UnaryHandler } from '../../../server/api/v3/service-methods.js';

describe('v3 service method lists', () => {
  const defs = serviceDefinitions();
  const byName = new Map(Object.entries(serviceNames).map(([key, fq]) => [fq as string, defs[key as keyof typeof defs]]));
  for (const [fq, methods] of Object.entries(UNARY_METHODS)) {
    it(`${fq}: the unary methods of the definition`, () => {
      const def = byName.get(fq);
      expect(def, fq).to.not.equal(undefined);
      const unary = Object.entries(def!).filter(([, m]) => !m.requestStream && !m.responseStream).map(([n]) => n);
      expect([...methods].sort()).to.deep.equal(unary.sort());
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
