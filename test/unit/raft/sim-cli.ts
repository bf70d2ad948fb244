// Replays one simulator schedule: node dist/test/unit/raft/sim-cli.js --seed N --nodes 3 [--steps K] [--verbose]

import { runSchedule } from './sim.js';

/** Parses argv and runs the schedule; exit code 1 on an invariant failure. */
function main(argv: string[]): number {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const seed = Number(arg('--seed') ?? '1');
  const nodes = Number(arg('--nodes') ?? '3');
  const steps = Number(arg('--steps') ?? '100');
  const verbose = argv.includes('--verbose');
  if (!Number.isInteger(seed) || ![1, 2, 3, 4, 5, 6, 7].includes(nodes) || !Number.isInteger(steps)) {
    process.stderr.write('usage: sim-cli --seed N --nodes 1..7 [--steps K] [--verbose]\n');
    return 2;
  }
  try {
    const res = runSchedule(seed, nodes, steps, verbose ? (l) => process.stdout.write(l + '\n') : undefined);
    const { trace: _t, ...opts } = res.options;
    process.stdout.write(`ok seed=${seed} nodes=${nodes} steps=${steps} ${JSON.stringify(opts)}\n${JSON.stringify(res.stats)} leader after heal in ${res.leaderTicks} ticks\n`);
    return 0;
  } catch (e) {
    process.stdout.write(`FAIL seed=${seed} nodes=${nodes} steps=${steps}: ${(e as Error).stack}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
