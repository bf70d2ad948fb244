// One testbed shared by the test files of test/k8s (loaded with mocha --require): started by the first test that
// asks for it, stopped after all tests.
import { startTestbed, type Testbed } from './testbed.js';

let shared: Promise<Testbed> | undefined;

/** The shared testbed (work folder test/k8s/.work/k8s-tests, kubeconfig in it). */
export function sharedTestbed(): Promise<Testbed> {
  shared ??= startTestbed({ name: 'k8s-tests' });
  return shared;
}

/** Mocha root hooks. */
export const mochaHooks = {
  async afterAll(this: unknown): Promise<void> {
    if (shared) await (await shared.catch(() => undefined))?.stop();
  },
};
