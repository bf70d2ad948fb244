// Thousands of seeded random schedules across 1, 3 and 5 members with faults (drops, duplicates,
// reordering, partitions, crashes and restarts from persisted state, snapshots and compaction,
// leadership transfers, reads). Safety is checked after every Ready, liveness after healing.
// Scale with RAFT_SIM_SCHEDULES (default 10000) and pick another seed range with RAFT_SIM_SEED.

import { expect } from 'chai';
import { replayCommand, runSchedule } from './sim.js';

const total = Number(process.env.RAFT_SIM_SCHEDULES ?? 10000);
const base = Number(process.env.RAFT_SIM_SEED ?? 1);

const plan = [
  { nodes: 1, share: 0.2, steps: 60 },
  { nodes: 3, share: 0.4, steps: 120 },
  { nodes: 5, share: 0.4, steps: 120 },
];

describe('raft: seeded simulation', function () {
  this.timeout(600_000);
  for (const { nodes, share, steps } of plan) {
    const count = Math.max(1, Math.round(total * share));
    it(`${count} schedules with ${nodes} member(s), ${steps} ticks each, stay safe and live`, () => {
      const agg = { proposals: 0, committed: 0, readsServed: 0, snapshots: 0, crashes: 0, elections: 0 };
      for (let i = 0; i < count; i++) {
        const seed = base + i;
        let res;
        try {
          res = runSchedule(seed, nodes, steps);
        } catch (e) {
          const err = e as Error;
          throw new Error(`schedule failed: seed ${seed}, ${nodes} nodes: ${err.message}\n  replay: ${replayCommand(seed, nodes, steps)}\n${err.stack ?? ''}`, { cause: e });
        }
        agg.proposals += res.stats.proposals;
        agg.committed += res.stats.proposals - res.stats.dropProposals;
        agg.readsServed += res.stats.readsServed;
        agg.snapshots += res.stats.snapshots;
        agg.crashes += res.stats.crashes;
        agg.elections += res.stats.elections;
      }
      // The workload must have exercised what it claims to.
      expect(agg.committed).to.be.greaterThan(count);
      expect(agg.readsServed).to.be.greaterThan(0);
      expect(agg.snapshots).to.be.greaterThan(0);
      expect(agg.elections).to.be.at.least(count);
      if (nodes > 1) expect(agg.crashes).to.be.greaterThan(0);
    });
  }
});
