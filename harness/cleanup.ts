// Ending what a suite started, for the things useSvcClusters does not manage (reference clusters, restored
// clusters, single processes, embedded members, clients).

/** Something a test starts and must end: close() when it has one, else stop(). */
export type Stoppable = { close(): unknown } | { stop(): unknown };

/**
 * Mocha fixture: `const stopLater = useCleanup();`, then `const ref = stopLater(await startReferenceCluster())`
 * in a test. Everything handed to it is ended after the suite (or, with `{ closeAfter: 'each' }`, after each
 * test), the newest first.
 */
export function useCleanup(o: { closeAfter?: 'each' | 'all' } = {}): <T extends Stoppable>(x: T) => T {
  const open: Stoppable[] = [];
  const endAll = async () => {
    for (const x of open.splice(0).reverse()) await ('close' in x ? x.close() : x.stop());
  };
  if (o.closeAfter === 'each') afterEach(endAll);
  else after(endAll);
  return (x) => {
    open.push(x);
    return x;
  };
}
