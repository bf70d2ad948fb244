// Leadership transfer: MoveLeader, and handing leadership to the best voter when the leader stops.
import { idHex } from '../cluster/ids.js';
import type { Member } from '../cluster/membership.js';
import type { Logger } from '../log/logger.js';
import { Errors } from './errors.js';
import { formatDuration, sleep } from './lifecycle.js';

export interface LeadershipDeps {
  memberId: bigint;
  logger: Logger;
  tickMs: number;
  electionMs: number;
  node: {
    readonly lead: bigint;
    isLeader(): boolean;
    transferLeader(to: bigint): void;
    progress(): Map<bigint, { match: number }> | undefined;
    kick(): void;
  };
  member(id: bigint): Member | undefined;
  voters(): Member[];
  /** Since when the transport has been connected to a peer (undefined: not connected). */
  activeSince(id: bigint): number | undefined;
}

export class LeadershipTransfer {
  constructor(private readonly d: LeadershipDeps) {}

  /** Move leadership to `to`, waiting until it took over. */
  async moveLeader(to: bigint, timeoutMs = this.d.electionMs * 7): Promise<void> {
    const { node } = this.d;
    if (!node.isLeader()) throw Errors.notLeader();
    const m = this.d.member(to);
    if (!m || m.isLearner) throw Errors.badLeaderTransferee();
    if (to === this.d.memberId) return;
    node.transferLeader(to);
    node.kick();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (node.lead !== 0n && node.lead !== this.d.memberId) return;
      await sleep(this.d.tickMs);
    }
    throw Errors.timeoutLeaderTransfer();
  }

  /** The voting member with the longest log (ties: connected longest) to hand leadership to. */
  pickTransferee(): bigint | undefined {
    const progress = this.d.node.progress();
    let best: { id: bigint; match: number; since: number } | undefined;
    for (const m of this.d.voters()) {
      if (m.id === this.d.memberId) continue;
      const match = progress?.get(m.id)?.match ?? 0;
      const since = this.d.activeSince(m.id);
      if (since === undefined) continue;
      if (!best || match > best.match || (match === best.match && since < best.since)) best = { id: m.id, match, since };
    }
    return best?.id;
  }

  /** The leader stops: hand leadership over first, as the reference does (failures are logged, not fatal). */
  async transferOnStop(): Promise<void> {
    const { logger, memberId, node } = this.d;
    const fields = { 'local-member-id': idHex(memberId) };
    if (!node.isLeader()) {
      logger.info('skipped leadership transfer; local server is not leader', { ...fields, 'current-leader-member-id': idHex(node.lead) });
      return;
    }
    if (this.d.voters().length <= 1) {
      logger.info('skipped leadership transfer for single voting member cluster', fields);
      return;
    }
    const to = this.pickTransferee();
    if (to === undefined) {
      logger.warn('leadership transfer failed', { ...fields, error: 'no active voting member to transfer to' });
      return;
    }
    const start = process.hrtime.bigint();
    logger.info('leadership transfer starting', { ...fields, 'current-leader-member-id': idHex(memberId), 'transferee-member-id': idHex(to) });
    try {
      await this.moveLeader(to, 7000);
      const took = Number(process.hrtime.bigint() - start) / 1e6;
      logger.info('leadership transfer finished', { ...fields, 'old-leader-member-id': idHex(memberId), 'new-leader-member-id': idHex(node.lead), took: formatDuration(took) });
    } catch (e) {
      logger.warn('leadership transfer failed', { ...fields, error: (e as Error).message });
    }
  }
}
