// `upgrade-plan`: the hops from the release a cluster runs to a target, and the checks each hop begins with, read
// from one observation by the planner's own rules; it never acts. `svc-operator local upgrade-plan` and
// `kubectl svc upgrade-plan` print the same text.
import { withDefaults } from '../api/validate.js';
import type { SvcClusterSpec } from '../api/types.js';
import { hopPrerequisite, laterHopRefusal, plan, validateTarget } from '../planner/plan.js';
import { describeStep } from '../planner/steps.js';
import type { ObservedCluster, UpgradeProgress } from '../planner/types.js';
import { pathStart, upgradePath } from '../planner/upgrade-path.js';
import { releaseFor } from '../../server/releases.js';
import { minorOf } from '../api/versions.js';

/** The plan's text for `name` toward `target` (spec.version when not given), and whether nothing refuses it. */
export function upgradePlanText(name: string, spec: SvcClusterSpec, observed: ObservedCluster, progress: UpgradeProgress | undefined, target = spec.version): { text: string; ok: boolean } {
  const start = pathStart(observed);
  if (start === undefined) return { text: `${name} has no members yet; it is created on ${target}\n`, ok: true };
  const hops = upgradePath(start, target);
  if (hops.length === 1 && hops[0] === start) return { text: `${name} runs ${start}: nothing to upgrade\n`, ok: true };
  const lines = [`${name}: ${start} -> ${target} in ${hops.length} hop${hops.length > 1 ? 's' : ''}, each a rolling upgrade (health checked, a snapshot from the leader, the followers, leadership moved, the leader last, /version verified)`];
  let from = start;
  for (const [i, hop] of hops.entries()) {
    const line = releaseFor(hop);
    const why = minorOf(hop) === minorOf(from)
      ? (i + 1 < hops.length && minorOf(hops[i + 1]) !== minorOf(hop) ? `a patch hop: ${minorOf(hops[i + 1])} is reached only from ${hop} or later` : 'a patch change')
      : `a new minor line${line.upgradeRefusesCustomV2Data ? ' (it refuses custom v2 data)' : ''}`;
    lines.push(`  ${i + 1}. ${from} -> ${hop}   ${why}`);
    from = hop;
  }
  const wanted = withDefaults({ ...spec, version: target });
  const first = { ...wanted, version: hops[0] };
  const refusal = validateTarget(first, observed) ?? laterHopRefusal(hops, observed) ?? hopPrerequisite(hops[0], observed, observed.members);
  lines.push(refusal ? `checks now: REFUSED (${refusal.kind === 'blocked' ? refusal.code : refusal.kind}): ${'reason' in refusal ? refusal.reason : describeStep(refusal)}` : 'checks now: passed (no alarm raised, every member on a patch its next line accepts, no custom v2 data where a line refuses it, authentication allowed on every hop)');
  if (!refusal) lines.push(`first step: ${describeStep(plan(wanted, observed, progress))}`);
  lines.push('nothing was changed (a plan only)');
  return { text: `${lines.join('\n')}\n`, ok: refusal === undefined };
}
