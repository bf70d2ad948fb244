// One testbed shared by the test files of test/k8s (loaded with mocha --require): started before the first test
// (its own time limit: a first start imports the images), stopped after all tests.
import { startTestbed, type Testbed } from './testbed.js';

let shared: Promise<Testbed> | undefined;

/** The shared testbed (work folder test/k8s/.work/k8s-tests, kubeconfig in it). */
export function sharedTestbed(): Promise<Testbed> {
  shared ??= startTestbed({ name: 'k8s-tests' });
  return shared;
}

/** Mocha root hooks. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(15 * 60_000);
    await sharedTestbed();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(5 * 60_000);
    if (shared) await (await shared.catch(() => undefined))?.stop();
  },
};
