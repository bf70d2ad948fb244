// The upgrade planner: desired spec + observation + recorded progress -> the single next step. Pure: no
// clock, no I/O; the same inputs always give the same step.
//
// Order of decisions (each one returns):
//  0. no members: createCluster. A quorum-loss recovery asked for or under way: its steps (recovery.ts); it ends
//     with recoverComplete where the cluster would be steady. Then (healing.ts, scaling.ts): a replacement under
//     way or a learner to promote, scaling's resume, a lost member to replace.
//  1. validate the target against the cluster version and the members' releases (refusals are `blocked`
//     with condition UpgradeBlocked, taken before anything is touched).
//  2. every member on the target: wait for the cluster version, then `complete` (this is the verification:
//     every /version shows the target for etcdserver and etcdcluster) or `steady`.
//  3. safety gate before any disruptive step: every member running and healthy, exactly one leader,
//     (one exception: a member that is not running at all, on another release than the target, is
//     restarted on the target when every other member is healthy: that takes nothing else down),
//     every follower's applied index within catchUpSlack() of the leader's as read BEFORE the followers' (one
//     observation, so the comparison is never against a leader index read later than a follower's); the slack
//     follows the write rate (a second of writes, at least CATCH_UP_SLACK entries). A member that cannot start on the target
//     gives `blocked` MemberFailedToStart (the others keep serving); any other unhealthy member a `wait` (but a due
//     `backup` is still taken from a healthy leader when nothing is under way: a degraded cluster needs one most).
//     Since every member must be healthy before a restart, at most one member is ever down, and a restart
//     only happens when the cluster keeps its quorum without that member (3+ members; a 1-member cluster
//     has no headroom and no other way to upgrade).
//  4. no verified snapshot recorded for this upgrade: preflight, then `snapshot` from the leader.
//  5. the spec's wait since the last restart (120 s when v2 data exceeds 50 MB), then members not on the
//     target in name order, followers first; the leader last, after `moveLeader` to the most up-to-date
//     member already on the target.
// `spec.upgrade.paused` turns the next disruptive step into `wait` Paused (naming that step).
//  6. every member on the target and the upgrade complete: a rollout of a configuration or certificate change
//     (members whose revisions differ from the runtime's target revision are restarted exactly like an upgrade's:
//     followers first in name order, the leader last after `moveLeader`, each only once every member is healthy
//     and caught up, `paused` honoured; restartMember carries the reason SpecChange or CertificateRenewed; a
//     version upgrade's restarts take the new configuration along), then scaling steps (scaling.ts), then
//     continuous backup's agent (started where none runs, restarted on a new configuration, stopped when
//     spec.backup.continuous is off, also while hibernated: before a backup, so one failing on its destination does
//     not keep the agent on the old one), then a due `backup` (an on-demand request not yet answered, else the latest spec.backup.schedule slot after the last one
//     taken: backup/schedule.ts dueBackup), then a due restore drill `verifyBackup` of the newest backup (a
//     request, else the latest spec.backup.verify slot: backup/verify.ts dueVerify), else `steady`. So a scheduled
//     or on-demand backup (or drill) never starts while an upgrade, a rollout or a scaling is under way; the
//     pre-upgrade backup is the `snapshot` step of rule 4.
//
// Break-glass, before all of the above: spec.replicas 0 hibernates (`hibernate` stops every running member, data kept;
// then `hibernated`, settled); a replica count on a hibernated cluster first wakes the same members (`wake`), scaling
// follows from there. A suspended cluster (o.suspended) gets every step planned as usual, but a mutating one becomes
// `wait Suspended` naming it: nothing is changed, status and Events still say what would come next.
//
// Resume after a crash is by observation: a restart counts as done when the member reports the target
// release (so it is never repeated); a restart recorded but not carried out (member still on the old
// release) is planned again; a snapshot begun but not recorded as verified is taken again.
import type { SvcClusterSpec } from '../api/types.js';
import { catchUpSlack } from './catch-up.js';
import { continueHealing, corruptionStep, replacementStep } from './healing.js';
import { resumeScaling, scaleAfterUpgrade, scaleStep } from './scaling.js';
import type { ObservedCluster, ObservedMember, RestartReason, Step, TargetRevision, UpgradeProgress } from './types.js';
import { describeStep, isMutating, lacking } from './steps.js';
import { compareVersions, minorIndex, minorOf, parseVersion, SUPPORTED_MINORS, isSupportedVersion } from '../api/versions.js';
import { releaseFor } from '../../server/releases.js';
import { remainingHops } from './upgrade-path.js';
import { dueBackup } from '../backup/schedule.js';
import { dueVerify, newestBackup } from '../backup/verify.js';
import { recoveryCompletion, recoveryStep } from './recovery.js';
import { maintenanceStep, startMaintenance, volumeStep } from './maintenance.js';

export { CATCH_UP_SECONDS, CATCH_UP_SLACK, catchUpSlack } from './catch-up.js';
/** v2 data above this needs the 2-minute wait between members (the seed's limit). */
export const V2_SLOW_BYTES = 50 * 1024 * 1024;
/** v2 data at or above this needs spec.upgrade.acknowledgeLargeV2Data before an upgrade starts. */
export const V2_ACK_BYTES = 100 * 1024 * 1024;
/** The seed's wait between members when v2 data is large. */
export const V2_WAIT_MS = 120_000;

const byName = (a: ObservedMember, b: ObservedMember) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The cluster version as the leader reports it (else the highest any member reports; order-independent); undefined when not decided. */
export function observedClusterVersion(o: ObservedCluster): string | undefined {
  const decided = (v: string | undefined) => (minorIndex(v) >= 0 ? v : undefined);
  const highest = (ms: ObservedMember[]) => ms.map((m) => decided(m.clusterVersion)).filter((v): v is string => v !== undefined).sort(compareVersions).at(-1);
  return highest(o.members.filter((m) => m.leader)) ?? highest(o.members);
}

/** The release a member is known to be on: what it reports, else what it is configured as. */
function releaseOf(m: ObservedMember): string {
  return m.release ?? m.configuredVersion;
}

function blocked(code: Extract<Step, { kind: 'blocked' }>['code'], reason: string): Step {
  return { kind: 'blocked', code, reason, condition: 'UpgradeBlocked' };
}

function wait(code: Extract<Step, { kind: 'wait' }>['code'], reason: string): Step {
  return { kind: 'wait', code, reason };
}

/** Refusals of the target, or undefined when the target may be pursued. */
export function validateTarget(spec: SvcClusterSpec, o: ObservedCluster): Step | undefined {
  const target = spec.version;
  if (!isSupportedVersion(target)) return blocked('UnsupportedVersion', `version ${target} is not of a supported release line (${SUPPORTED_MINORS.join(', ')})`);
  const t = minorIndex(target);
  const cv = observedClusterVersion(o);
  const memberMinors = o.members.map((m) => minorIndex(releaseOf(m)));
  const lowest = Math.min(...memberMinors);
  // The cluster version when undecided: the lowest member release bounds it from above.
  const c = cv !== undefined ? minorIndex(cv) : lowest;
  if (t > c + 1) {
    const path = SUPPORTED_MINORS.slice(c, t + 1).join(' -> ');
    return blocked('SkipMinor', `cannot go from cluster version ${SUPPORTED_MINORS[c]} to ${minorOf(target)}: upgrade one minor release at a time (${path})`);
  }
  if (t < c || t < lowest) {
    return blocked(
      'DowngradeAfterCompletion',
      `cannot downgrade to ${target}: every member already runs ${SUPPORTED_MINORS[Math.max(c, lowest)]} or newer and the cluster version is ${cv ?? 'not decided'}; ` +
        'a downgrade is only possible while a member still runs the older release; restore the pre-upgrade snapshot instead',
    );
  }
  return lowest < t ? authRefusal(target, o) : undefined;
}

/** A hop onto a line that refuses members from below while authentication is on (3.5: the WAL format of
 *  authentication entries changed), or undefined. */
function authRefusal(hop: string, o: ObservedCluster, target = hop): Step | undefined {
  if (!releaseFor(hop).refusesAuthUpgradeFromBelow) return undefined;
  if (o.authEnabled === true) {
    const via = hop === target ? '' : ` (through ${hop} on the way)`;
    return blocked('AuthEnabledUpgradeTo35', `cannot upgrade to ${target}${via}: authentication is enabled, and a rolling upgrade from 3.4 or older to 3.5 is not supported with authentication on (3.5 changes the WAL format of authentication entries)`);
  }
  if (o.authEnabled === undefined) return wait('AuthUnknown', `cannot tell whether authentication is enabled (required before upgrading to ${minorOf(hop)})`);
  return undefined;
}

/** A later hop of the path that will be refused: said before the first hop begins, so no journey stops half-way. */
export function laterHopRefusal(hops: string[], o: ObservedCluster): Step | undefined {
  for (let i = 1; i < hops.length; i++) {
    if (minorOf(hops[i]) === minorOf(hops[i - 1])) continue;
    const refusal = authRefusal(hops[i], o, hops.at(-1));
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * The single next step. See the top of this file for the rules, and scaling.ts for spec.replicas: a scaling
 * step begun before is finished first; new scaling steps only once no upgrade is under way.
 */
export function plan(spec: SvcClusterSpec, o: ObservedCluster, progress: UpgradeProgress | undefined): Step {
  const step = planUnsuspended(spec, o, progress);
  // the step table says what each step needs: one the runtime cannot take is never planned
  const missing = lacking(step, o.capabilities);
  if (missing.length > 0) {
    return { kind: 'blocked', code: 'UnsupportedByRuntime', condition: 'RuntimeUnsupported', reason: `the next step (${describeStep(step)}) needs what this runtime cannot do (${missing.join(', ')}); nothing was changed: run the cluster where it can (svc-operator local or the Kubernetes operator)` };
  }
  return o.suspended && isMutating(step) ? suspendedWait(step) : step;
}

/** What a suspended cluster shows instead of `step`: the wait, naming the step that resuming lets happen. */
export function suspendedWait(step: Step): Step {
  return wait('Suspended', `reconciling is suspended (break-glass: annotation svc.dev/reconcile: suspended, or \`svc-operator local suspend\`); nothing is changed until it is resumed (\`kubectl svc resume\`, \`svc-operator local resume\`); next step then: ${describeStep(step)}`);
}

/** Hibernation (spec.replicas 0) and waking, before every other rule; undefined when neither applies. */
export function hibernationStep(spec: SvcClusterSpec, o: ObservedCluster): Step | undefined {
  const names = o.members.map((m) => m.name).sort();
  if (spec.replicas === 0) {
    const running = o.members.filter((m) => m.running).map((m) => m.name).sort();
    if (running.length > 0) return { kind: 'hibernate', members: running };
    return (o.members.length > 0 ? agentStep(o) : undefined) ?? { kind: 'hibernated', members: o.members.length };
  }
  if (o.hibernated && names.length > 0) return { kind: 'wake', members: names };
  return undefined;
}

/** Continuous backup's agent as the spec asks, where the cluster would be steady (or asleep): started, restarted, stopped. */
export function agentStep(o: ObservedCluster): Step | undefined {
  const a = o.agent;
  if (!a) return undefined;
  if (a.wanted === undefined) return a.running ? { kind: 'stopBackupAgent' } : undefined;
  if (!a.running) return { kind: 'startBackupAgent', reason: 'NotRunning' };
  return a.current !== a.wanted ? { kind: 'startBackupAgent', reason: 'ConfigChanged' } : undefined;
}

function planUnsuspended(wanted: SvcClusterSpec, o: ObservedCluster, progress: UpgradeProgress | undefined): Step {
  // a target more than one hop away is reached hop by hop (upgrade-path.ts): every rule below sees the current hop
  // (a hop under way stays the hop until it is verified complete: its members running it is not yet the end)
  const ahead = remainingHops(wanted, o);
  const inHop = progress !== undefined && progress.finishedAt === undefined && progress.hops?.at(-1) === wanted.version && progress.to !== wanted.version;
  const hops = inHop ? [progress.to, ...ahead.filter((h) => compareVersions(h, progress.to) > 0)] : ahead;
  const spec = hops[0] === wanted.version ? wanted : { ...wanted, version: hops[0] };
  const hibernation = hibernationStep(spec, o);
  if (hibernation) return hibernation;
  // a quorum-loss recovery asked for (never automatic) comes before every other rule (recovery.ts); the member
  // list and the runtime disagree on purpose while it runs
  const recovering = o.members.length > 0 ? recoveryStep(o) : undefined;
  if (recovering) return recovering;
  // a replacement under way and learners first: scaling's resume would take a member removed for its replacement
  // for one to retire
  const healing = continueHealing(o);
  if (healing) return healing;
  const resumed = resumeScaling(o);
  if (resumed) return resumed;
  const replace = replacementStep(o);
  if (replace) return replace;
  const corrupt = corruptionStep(o);
  if (corrupt) return corrupt;
  // a maintenance round under way, or NOSPACE relief (maintenance.ts); a larger spec.storage.size: grown in place,
  // or refused with nothing changed; growing is one way out of a NOSPACE relief that could not make the data fit
  const maintain = maintenanceStep(spec, o);
  const grow = volumeStep(spec, o);
  if (maintain && !(maintain.kind === 'blocked' && grow)) return maintain;
  if (grow) return grow;
  const underWay = progress !== undefined && progress.to === spec.version && progress.finishedAt === undefined;
  const step = (hops.length > 1 && !underWay ? laterHopRefusal(hops, o) : undefined) ?? planSteps(spec, o, progress, hops);
  const onTarget = (m: ObservedMember) => m.configuredVersion === spec.version && (m.release === undefined || m.release === spec.version);
  const upgrading = !o.members.every(onTarget) || (progress !== undefined && progress.to === spec.version && progress.finishedAt === undefined);
  return upgrading ? scaleAfterUpgrade(spec, o, step) : step;
}

function planSteps(spec: SvcClusterSpec, o: ObservedCluster, progress: UpgradeProgress | undefined, hops: string[]): Step {
  const target = spec.version;
  const members = [...o.members].sort(byName);
  if (members.length === 0) return { kind: 'createCluster', version: target, replicas: spec.replicas };
  // Progress toward another target, or finished, is history: this target starts over (with its own snapshot).
  const cur = progress && progress.to === target && progress.finishedAt === undefined ? progress : undefined;
  const paused = spec.upgrade?.paused === true;
  const gate = (step: Step): Step => (paused ? wait('Paused', `spec.upgrade.paused is true; next step: ${stepLine(step)}`) : step);

  const onTarget = (m: ObservedMember) => m.configuredVersion === target && m.release === target;
  if (!members.every(onTarget)) {
    const refusal = validateTarget(spec, o);
    if (refusal) return refusal;
  }

  // Members must be healthy before any step (and in the steady state this is what we report).
  const failed = members.find((m) => m.configuredVersion === target && m.release !== target && m.failure !== undefined);
  if (failed) {
    // upgrade wording only while an upgrade is under way; else the member failed, and its data is intact (a lost
    // member is replaced before this: healing.ts)
    const upgrading = cur !== undefined || members.some((m) => m !== failed && releaseOf(m) !== target);
    if (upgrading) return blocked('MemberFailedToStart', `member ${failed.name} cannot run ${target}: ${failed.failure}; the other members keep serving; fix the cause (or set spec.version back) and the upgrade resumes`);
    return {
      kind: 'blocked', code: 'MemberFailedToStart', condition: 'MemberFailed',
      reason: `member ${failed.name} is not running (no upgrade under way): ${failed.failure}; the other members keep serving; its data is intact, so it is restarted, never replaced: fix the cause, then it is started again (local: \`svc-operator local apply\`; Kubernetes: the kubelet restarts its pod)`,
    };
  }
  const down = members.find((m) => !m.running || !m.healthy);
  const others = members.filter((m) => m !== down);
  if (down && !down.running && down.configuredVersion !== target && others.every((m) => m.running && m.healthy) && others.filter((m) => m.leader).length === 1) {
    // A dead member left on another release (e.g. one that could not start on a release the spec has
    // since moved away from): starting it on the target takes nothing else down.
    return gate({ kind: 'restartMember', member: down.name, version: target, reason: 'VersionChange' });
  }
  if (down) {
    // a backup reads the leader only: a member down does not hold it back (a degraded cluster needs one most)
    const backup = degradedBackup(spec, o, members, cur);
    if (backup) return backup;
    if (down.configuredVersion === target && down.running && (cur !== undefined || down.release !== target)) return wait('MemberStarting', `member ${down.name} is starting on ${target}; waiting for it to report healthy`);
    return wait('MemberUnhealthy', `member ${down.name} is ${down.running ? 'not healthy' : 'not running'}${down.failure ? ` (${down.failure})` : ''}; waiting for it to recover before the next step`);
  }
  const leaders = members.filter((m) => m.leader);
  if (leaders.length !== 1) return wait('NoLeader', leaders.length === 0 ? 'no member reports being the leader' : `${leaders.length} members report being the leader; waiting for one`);
  const leader = leaders[0];
  // the leader's index as read before the followers' (observe.ts), else its own
  const ref = o.catchUp?.leaderIndex ?? leader.appliedIndex;
  const slack = catchUpSlack(o);
  const lagging = members.find((m) => m.appliedIndex === undefined || ref === undefined || (m !== leader && ref - m.appliedIndex > slack));
  const catchingUp = lagging && wait('CatchingUp', `member ${lagging.name} is catching up (applied ${lagging.appliedIndex ?? '?'}, leader ${ref ?? '?'}, allowed gap ${slack})`);

  if (members.every(onTarget)) {
    const behind = members.find((m) => minorOf(m.clusterVersion) !== minorOf(target));
    if (behind) return wait('ClusterVersionPending', `every member runs ${target}; member ${behind.name} reports cluster version ${behind.clusterVersion ?? 'unknown'} (waiting for ${minorOf(target)})`);
    if (cur && cur.finishedAt === undefined) return { kind: 'complete', from: cur.from, to: target };
    // A follower behind under writes gates the next change; with nothing to change the cluster is as specified
    // (so Ready and Reconciling do not flap with the write load).
    const next = rolloutStep(target, o, members, leader, gate) ?? scaleStep(spec, o, leader);
    if (!next) return recoveryCompletion(o) ?? agentStep(o) ?? backupStep(spec, o, leader) ?? verifyStep(spec, o) ?? startMaintenance(spec, o) ?? { kind: 'steady', version: target };
    return catchingUp && isMutating(next) ? catchingUp : next;
  }
  if (catchingUp) return catchingUp;

  const notOnTarget = members.filter((m) => !onTarget(m));
  const from = notOnTarget.map(releaseOf).sort(compareVersions)[0];
  if (!cur || !cur.snapshot) {
    // Preflight: one release across the members, unless the target is one of theirs (resuming or rolling
    // back an upgrade whose members are mixed).
    const releases = new Set(members.map(releaseOf));
    if (releases.size > 1 && !releases.has(target)) {
      return blocked('MixedReleases', `members run several releases (${[...releases].sort(compareVersions).join(', ')}); set spec.version to one of them first`);
    }
    if (!cur && (o.v2DataBytes ?? 0) >= V2_ACK_BYTES && spec.upgrade?.acknowledgeLargeV2Data !== true) {
      return blocked('LargeV2DataNotAcknowledged', `v2 data is about ${Math.round((o.v2DataBytes ?? 0) / 1048576)} MB (100 MB or more): the one-time catch-up may take long; set spec.upgrade.acknowledgeLargeV2Data: true to proceed`);
    }
    const missing = cur ? undefined : hopPrerequisite(target, o, members);
    if (missing) return missing;
    return gate({ kind: 'snapshot', member: leader.name, from, to: target, ...(hops.length > 1 ? { hops } : {}) });
  }

  const waitMs = Math.max((spec.upgrade?.waitBetweenMembersSeconds ?? 0) * 1000, (o.v2DataBytes ?? 0) > V2_SLOW_BYTES ? V2_WAIT_MS : 0);
  const lastRestart = Math.max(0, ...Object.values(cur.restarts));
  if (waitMs > 0 && lastRestart > 0 && o.now - lastRestart < waitMs) {
    return wait('WaitBetweenMembers', `waiting ${Math.ceil((waitMs - (o.now - lastRestart)) / 1000)} s more before the next member (wait between members ${Math.round(waitMs / 1000)} s)`);
  }
  const follower = notOnTarget.find((m) => !m.leader);
  if (follower) return gate({ kind: 'restartMember', member: follower.name, version: target, reason: 'VersionChange' });
  // Only the leader is left. Hand leadership to the most up-to-date member already on the target.
  const candidates = members.filter((m) => m !== leader && onTarget(m)).sort((a, b) => (b.appliedIndex ?? 0) - (a.appliedIndex ?? 0) || byName(a, b));
  if (candidates.length === 0) return gate({ kind: 'restartMember', member: leader.name, version: target, reason: 'VersionChange' });
  return gate({ kind: 'moveLeader', from: leader.name, to: candidates[0].name, toId: candidates[0].id });
}

/**
 * The reference's upgrade-guide checks before a hop begins (upgrade_3_6, upgrade_3_7), or undefined when all pass:
 * no alarm raised; for a new minor line also every member on the lowest patch the line accepts, and no custom v2 data
 * where the line refuses it. Nothing is changed by a refusal. (A learner is promoted by the healing rules, which come
 * first: the hop waits for it.)
 */
export function hopPrerequisite(target: string, o: ObservedCluster, members: ObservedMember[]): Step | undefined {
  const raised = [...(o.noSpace ? ['NOSPACE'] : []), ...(o.corruption ? ['CORRUPT'] : [])];
  if (raised.length > 0) return blocked('AlarmRaised', `cannot begin the upgrade to ${target}: the ${raised.join(' and ')} alarm is raised; the upgrade begins once it is disarmed (svc-operator local alarm list / kubectl svc alarm list show it)`);
  const newLine = members.some((m) => minorOf(releaseOf(m)) !== minorOf(target));
  if (!newLine) return undefined;
  const line = releaseFor(target);
  const below = members.find((m) => minorOf(releaseOf(m)) !== line.minor && (parseVersion(releaseOf(m))?.patch ?? 0) < line.fromPreviousMinPatch);
  if (below) {
    const prev = minorOf(releaseOf(below));
    return blocked('BelowMinimumPatch', `cannot begin the upgrade to ${target}: member ${below.name} runs ${releaseOf(below)}, and ${line.minor} is reached only from ${prev}.${line.fromPreviousMinPatch} or later (the reference's upgrade guide); set spec.version to ${prev}.${line.fromPreviousMinPatch} first, or to ${target} from there`);
  }
  if (line.upgradeRefusesCustomV2Data && (o.v2DataBytes ?? 0) > 0) {
    return blocked('CustomV2Data', `cannot begin the upgrade to ${target}: the v2 store holds about ${o.v2DataBytes} bytes of keys (custom v2 data), which ${line.minor} refuses to start with; move them to the v3 API and delete them from the v2 store (svcctl with SVCCTL_API=2), then the upgrade begins`);
  }
  return undefined;
}

/**
 * A due backup on a cluster with a member down, when nothing is under way: one healthy leader, every member
 * configured on the target (an unanswering one counts), no upgrade unfinished, no rollout or scaling to go on.
 */
function degradedBackup(spec: SvcClusterSpec, o: ObservedCluster, members: ObservedMember[], cur: UpgradeProgress | undefined): Step | undefined {
  const leaders = members.filter((m) => m.leader && m.healthy);
  if (leaders.length !== 1 || cur !== undefined) return undefined;
  if (!members.every((m) => m.configuredVersion === spec.version && (m.release === undefined || m.release === spec.version))) return undefined;
  if (members.length !== spec.replicas || members.some((m) => restartReason(m, o.revision) !== undefined)) return undefined;
  return backupStep(spec, o, leaders[0]) ?? verifyStep(spec, o);
}

/** The scheduled or on-demand backup due now, from the leader (it only reads: a follower catching up does not matter). */
function backupStep(spec: SvcClusterSpec, o: ObservedCluster, leader: ObservedMember): Step | undefined {
  const b = o.backups;
  if (!b) return undefined;
  const due = dueBackup({ spec, request: b.request, backups: b.record, created: new Date(b.created), now: new Date(o.now) });
  if (!due) return undefined;
  return due.kind === 'on-demand'
    ? { kind: 'backup', reason: 'OnDemand', member: leader.name, id: due.token }
    : { kind: 'backup', reason: 'Scheduled', member: leader.name, id: due.slot.toISOString() };
}

/** The restore drill due now (after a due backup: the drill restores the newest one), when the runtime runs drills. */
function verifyStep(spec: SvcClusterSpec, o: ObservedCluster): Step | undefined {
  const b = o.backups;
  if (!b?.verifies) return undefined;
  const due = dueVerify({ spec, request: b.verifyRequest, backups: b.record, created: new Date(b.created), now: new Date(o.now) });
  if (!due) return undefined;
  const backup = newestBackup(b.record);
  return due.kind === 'on-demand'
    ? { kind: 'verifyBackup', reason: 'OnDemand', id: due.token, ...(backup ? { backup } : {}) }
    : { kind: 'verifyBackup', reason: 'Scheduled', id: due.slot.toISOString(), ...(backup ? { backup } : {}) };
}

/** Why member `m` must be restarted to run with `want`, or undefined when it runs with it (or cannot tell). */
export function restartReason(m: ObservedMember, want: TargetRevision | undefined): Exclude<RestartReason, 'VersionChange'> | undefined {
  if (!want) return undefined;
  if (m.configRevision !== undefined && m.configRevision !== want.config) return 'SpecChange';
  if (want.tls !== undefined && m.tlsRevision !== undefined && m.tlsRevision !== want.tls) return 'CertificateRenewed';
  if (want.restart && want.restart.members.includes(m.name) && m.restartToken !== want.restart.token) return 'RestartRequested';
  return undefined;
}

/** The next step of a rollout of a configuration or certificate change (a healthy cluster, one leader, caught up). */
function rolloutStep(version: string, o: ObservedCluster, members: ObservedMember[], leader: ObservedMember, gate: (s: Step) => Step): Step | undefined {
  const stale = members.filter((m) => restartReason(m, o.revision) !== undefined);
  if (stale.length === 0) return undefined;
  const follower = stale.find((m) => !m.leader);
  if (follower) return gate({ kind: 'restartMember', member: follower.name, version, reason: restartReason(follower, o.revision) });
  const reason = restartReason(leader, o.revision);
  const candidates = members.filter((m) => m !== leader && restartReason(m, o.revision) === undefined).sort((a, b) => (b.appliedIndex ?? 0) - (a.appliedIndex ?? 0) || byName(a, b));
  if (candidates.length === 0) return gate({ kind: 'restartMember', member: leader.name, version, reason });
  return gate({ kind: 'moveLeader', from: leader.name, to: candidates[0].name, toId: candidates[0].id });
}

function stepLine(step: Step): string {
  switch (step.kind) {
    case 'snapshot':
      return `snapshot from ${step.member}`;
    case 'restartMember':
      return `restart ${step.member} on ${step.version}${step.reason ? ` (${step.reason})` : ''}`;
    case 'moveLeader':
      return `move leadership from ${step.from} to ${step.to}`;
    default:
      return step.kind;
  }
}
