// Membership changes as the API asks for them, with the reference's checks before proposing: URLs and ids not
// taken, strict reconfiguration (--strict-reconfig-check), and a learner promoted only once it caught up.
import { ConfChangeType } from '../raft/types.js';
import { computeMemberId, idHex } from '../cluster/ids.js';
import type { Member, Membership } from '../cluster/membership.js';
import type { Logger } from '../log/logger.js';
import { peerRequest, type PeerTlsClient } from '../cluster/peer-http.js';
import { Code, Errors, ServerError, errorWithMessage } from './errors.js';
import type { MembershipChanges } from './interfaces.js';

/** How long a peer must have been connected before a member add counts it as healthy (the reference's HealthInterval). */
export const HEALTH_INTERVAL_MS = 5000;

export interface ReconfigDeps {
  memberId: bigint;
  logger: Logger;
  initialClusterToken: string;
  strictReconfigCheck: boolean;
  /** --max-learners (default 1). */
  maxLearners?: number;
  /** Which voters a member add needs this member connected to (the release table decides). */
  addMemberConnected: 'all-voters' | 'quorum-with-new';
  /** The applied membership (read at each call: a snapshot replaces it). */
  membership(): Membership;
  isLeader(): boolean;
  /** Replication progress of each member (the leader's view). */
  progress(): Map<bigint, { match: number }> | undefined;
  /** Since when the transport has been connected to a peer (undefined: not connected). */
  activeSince(id: bigint): number | undefined;
  proposeConfChange(type: ConfChangeType, nodeId: bigint, member: Partial<Member>): Promise<Member[]>;
  /** Asks the leader to promote a learner (only the leader knows whether it caught up). */
  promoteOnLeader(id: bigint): Promise<Member[]>;
  now?(): number;
}

export class Reconfig implements MembershipChanges {
  constructor(private readonly d: ReconfigDeps) {}

  private now(): number {
    return this.d.now ? this.d.now() : Date.now();
  }

  members(): Member[] {
    return this.d.membership().list();
  }

  async addMember(peerURLs: string[], isLearner: boolean): Promise<{ member: Member; members: Member[] }> {
    const id = computeMemberId(peerURLs, this.d.initialClusterToken, this.now());
    this.d.membership().validateAdd(id, peerURLs, isLearner, this.d.maxLearners);
    if (this.d.strictReconfigCheck) this.mayAddMember(isLearner, peerURLs);
    const member: Member = { id, name: '', peerURLs, clientURLs: [], isLearner };
    const members = await this.d.proposeConfChange(isLearner ? ConfChangeType.AddLearnerNode : ConfChangeType.AddNode, id, member);
    return { member, members };
  }

  /**
   * Strict reconfiguration, as the reference's mayAddMember: a voter is refused while too few voters have ever
   * started (published their name) to keep a quorum once it is added; then any member, learners included, is refused
   * unless this member has been connected for the health interval (5 s) to every voter (up to 3.5.27), or to a quorum
   * of the voters plus the new member, the new one counted as down (later patches).
   */
  private mayAddMember(isLearner: boolean, peerURLs: string[]): void {
    const { logger, memberId } = this.d;
    const voters = this.d.membership().voters();
    const requested = { 'local-member-id': idHex(memberId), 'requested-member-add': { peerURLs, isLearner } };
    if (!isLearner && !readyToAddVoter(voters)) {
      logger.warn('rejecting member add request; not enough healthy members', { ...requested, error: Errors.memberNotEnoughStarted().message });
      throw Errors.memberNotEnoughStarted();
    }
    const since = this.now() - HEALTH_INTERVAL_MS;
    const connected = voters.filter((m) => {
      if (m.id === memberId) return true;
      const t = this.d.activeSince(m.id);
      return t !== undefined && t < since;
    }).length;
    if (this.d.addMemberConnected === 'all-voters' && connected < voters.length) {
      logger.warn('rejecting member add request; local member has not been connected to all peers, reconfigure breaks active quorum', { ...requested, error: Errors.unhealthy().message });
      throw Errors.unhealthy();
    }
    if (this.d.addMemberConnected === 'quorum-with-new' && voters.length > 1 && connected < Math.floor((voters.length + 1) / 2) + 1) {
      logger.warn('rejecting member add request; local member has not been connected to majority peers, reconfigure breaks active quorum', { ...requested, error: Errors.unhealthy().message });
      throw Errors.unhealthy();
    }
  }

  async removeMember(id: bigint): Promise<Member[]> {
    this.d.membership().validateRemove(id);
    return this.d.proposeConfChange(ConfChangeType.RemoveNode, id, {});
  }

  async updateMember(id: bigint, peerURLs: string[]): Promise<Member[]> {
    this.d.membership().validateUpdate(id, peerURLs);
    return this.d.proposeConfChange(ConfChangeType.UpdateNode, id, { peerURLs });
  }

  /**
   * A learner is promoted only by the leader, once its log is within 90% of the leader's; a follower hands the
   * request to the leader, as the reference does.
   */
  async promoteMember(id: bigint): Promise<Member[]> {
    this.d.membership().validatePromote(id);
    if (!this.d.isLeader()) return this.d.promoteOnLeader(id);
    const progress = this.d.progress();
    const learner = progress?.get(id);
    const leaderMatch = progress?.get(this.d.memberId)?.match ?? 0;
    if (!learner || learner.match < leaderMatch * 0.9) throw Errors.learnerNotReady();
    return this.d.proposeConfChange(ConfChangeType.AddNode, id, {});
  }
}

/**
 * Would the voters still have a quorum of started members with one more (not yet started) voter? A member has
 * started once it published its name. The reference's one exception: a second voter may join a 1-member cluster
 * (how a cluster restored from a snapshot on one member grows), although there is no quorum until it starts.
 */
export function readyToAddVoter(voters: Member[]): boolean {
  const members = voters.length + 1;
  const started = voters.filter((m) => m.name !== '').length;
  if (started === 1 && members === 2) return true;
  return started >= Math.floor(members / 2) + 1;
}

/** A follower's promotion request, sent to the leader's peer URLs; the leader's refusal comes back as it is. */
export async function promoteOnLeader(leader: Member | undefined, id: bigint, o: { timeoutMs: number; tls?: PeerTlsClient }): Promise<Member[]> {
  if (!leader) throw Errors.noLeader();
  const failures: string[] = [];
  for (const u of leader.peerURLs) {
    try {
      const res = await peerRequest(new URL(`/members/promote/${idHex(id)}`, u).toString(), { method: 'POST', timeoutMs: o.timeoutMs, tls: o.tls });
      const body = JSON.parse(res.body) as { error?: string; members?: Array<Omit<Member, 'id'> & { id: string }> };
      if (body.error !== undefined) throw errorWithMessage(body.error);
      return (body.members ?? []).map((m) => ({ ...m, id: BigInt('0x' + m.id) }));
    } catch (e) {
      if (e instanceof ServerError) throw e;
      failures.push(`${u}: ${(e as Error).message}`);
    }
  }
  throw new ServerError(Code.Unavailable, `etcdserver: cannot reach the leader ${idHex(leader.id)} to promote the learner (${failures.join('; ')}); retry`);
}

/** The leader's side of promoteOnLeader: the peer route's answer. */
export async function promoteForPeer(changes: MembershipChanges, idText: string): Promise<{ status: number; json: object }> {
  try {
    const members = await changes.promoteMember(BigInt('0x' + idText));
    return { status: 200, json: { members: members.map((m) => ({ ...m, id: idHex(m.id) })) } };
  } catch (e) {
    return { status: e instanceof ServerError ? e.httpStatus : 500, json: { error: (e as Error).message } };
  }
}
