// fast-check generates explicit fault schedules (and shrinks a failing one to a minimal list of
// actions): whatever the schedule, safety holds throughout and the healed cluster makes progress.

import fc from 'fast-check';
import { Cluster, checkLiveness, optionsFor } from './sim.js';

/** What an action on one node does, by its kind. */
const ON_NODE = {
  propose: (c: Cluster, id: bigint) => c.propose(id),
  read: (c: Cluster, id: bigint) => c.readIndex(id),
  crash: (c: Cluster, id: bigint) => c.crash(id),
  restart: (c: Cluster, id: bigint) => c.restart(id),
};

type Action =
  | { kind: 'tick'; n: number }
  | { kind: keyof typeof ON_NODE; node: number }
  | { kind: 'partition'; cut: number; shift: number }
  | { kind: 'heal' }
  | { kind: 'snapshot'; node: number; keep: number }
  | { kind: 'transfer'; to: number };

const node = fc.integer({ min: 0, max: 4 });
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('tick' as const), n: fc.integer({ min: 1, max: 15 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('propose' as const), node }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('read' as const), node }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('partition' as const), cut: fc.integer({ min: 1, max: 4 }), shift: node }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heal' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), node }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), node }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('snapshot' as const), node, keep: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('transfer' as const), to: node }) },
);

function run(seed: number, nodes: number, actions: Action[]): void {
  const c = new Cluster(optionsFor(seed, nodes));
  const id = (i: number) => c.ids[i % nodes];
  for (const a of actions) {
    switch (a.kind) {
      case 'tick':
        c.runTicks(a.n);
        break;
      case 'propose':
      case 'read':
      case 'crash':
      case 'restart':
        ON_NODE[a.kind](c, id(a.node));
        break;
      case 'partition': {
        const rot = c.ids.map((_, i) => id(i + a.shift));
        const cut = Math.min(a.cut, nodes - 1);
        if (cut > 0) c.partition([rot.slice(0, cut), rot.slice(cut)]);
        break;
      }
      case 'heal':
        c.heal();
        break;
      case 'snapshot':
        c.snapshotAndCompact(id(a.node), a.keep);
        break;
      case 'transfer': {
        const l = c.leader();
        if (l !== undefined && id(a.to) !== l) c.raw(l).transferLeader(id(a.to));
        break;
      }
    }
  }
  checkLiveness(c);
}

describe('raft: property over generated fault schedules (fast-check)', function () {
  this.timeout(120_000);
  it('any schedule of faults keeps the log safe, and the healed cluster commits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0x7fffffff }), fc.constantFrom(1, 3, 5), fc.array(action, { maxLength: 60 }), (seed, nodes, actions) => {
        run(seed, nodes, actions);
      }),
      { numRuns: Number(process.env.RAFT_PROPERTY_RUNS ?? 1000), seed: Number(process.env.RAFT_PROPERTY_SEED ?? 42) },
    );
  });
});
