// The cluster's membership and version: the "internal store" beside the v3 data. It changes only by applying
// committed log entries (conf changes, attribute and version writes) and is saved inside consensus snapshots,
// so every member holds the same view at the same log index.
import { idHex } from './ids.js';
import { Errors } from '../core/errors.js';
import { NO_DOWNGRADE, type DowngradeInfo } from './downgrade.js';

export interface Member {
  id: bigint;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

/** The paths of the reference's internal store; they appear in log records. */
export const MEMBERS_PREFIX = '/0/members';
/** Learners a cluster may have at once unless --max-learners says otherwise (the reference's default). */
export const MAX_LEARNERS = 1;
export const attributesPath = (id: bigint) => `${MEMBERS_PREFIX}/${idHex(id)}/attributes`;

export interface MembershipJSON {
  clusterId: string;
  members: Array<{ id: string; name: string; peerURLs: string[]; clientURLs: string[]; isLearner: boolean }>;
  removed: string[];
  version?: string;
  downgrade?: DowngradeInfo;
}

export class Membership {
  readonly members = new Map<bigint, Member>();
  readonly removed = new Set<bigint>();
  /** The applied cluster version ("3.4"); undefined until the first decision. */
  version: string | undefined;
  /** The downgrade job (Maintenance.Downgrade ENABLE / CANCEL, applied from the log). */
  downgrade: DowngradeInfo = NO_DOWNGRADE;

  constructor(public clusterId: bigint) {}

  member(id: bigint): Member | undefined {
    return this.members.get(id);
  }

  list(): Member[] {
    return [...this.members.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  voters(): Member[] {
    return this.list().filter((m) => !m.isLearner);
  }

  memberByName(name: string): Member | undefined {
    return this.list().find((m) => m.name === name);
  }

  /** Check a membership change before proposing it; throws the reference's errors. */
  validateAdd(id: bigint, peerURLs: string[], isLearner: boolean, maxLearners = MAX_LEARNERS): void {
    // The reference answers "member not found" for an ID removed before.
    if (this.removed.has(id)) throw Errors.memberNotFound();
    if (this.members.has(id)) throw Errors.memberExist();
    const taken = new Set(this.list().flatMap((m) => m.peerURLs));
    if (peerURLs.some((u) => taken.has(u))) throw Errors.peerURLExist();
    if (isLearner && this.list().filter((m) => m.isLearner).length >= maxLearners) throw Errors.tooManyLearners();
  }

  validateRemove(id: bigint): void {
    if (!this.members.has(id)) throw Errors.memberNotFound();
  }

  validateUpdate(id: bigint, peerURLs: string[]): void {
    if (!this.members.has(id)) throw Errors.memberNotFound();
    const taken = new Set(this.list().filter((m) => m.id !== id).flatMap((m) => m.peerURLs));
    if (peerURLs.some((u) => taken.has(u))) throw Errors.peerURLExist();
  }

  validatePromote(id: bigint): void {
    const m = this.members.get(id);
    if (!m) throw Errors.memberNotFound();
    if (!m.isLearner) throw Errors.memberNotLearner();
  }

  add(m: Member): void {
    if (this.removed.has(m.id)) return;
    this.members.set(m.id, { ...m });
  }

  remove(id: bigint): void {
    this.members.delete(id);
    this.removed.add(id);
  }

  updatePeerURLs(id: bigint, peerURLs: string[]): void {
    const m = this.members.get(id);
    if (m) m.peerURLs = [...peerURLs];
  }

  promote(id: bigint): void {
    const m = this.members.get(id);
    if (m) m.isLearner = false;
  }

  setAttributes(id: bigint, attrs: { name: string; clientURLs: string[] }): void {
    const m = this.members.get(id);
    if (m) {
      m.name = attrs.name;
      m.clientURLs = [...attrs.clientURLs];
    }
  }

  toJSON(): MembershipJSON {
    return {
      clusterId: idHex(this.clusterId),
      members: this.list().map((m) => ({ ...m, id: idHex(m.id) })),
      removed: [...this.removed].map(idHex),
      version: this.version,
      ...(this.downgrade.enabled ? { downgrade: this.downgrade } : {}),
    };
  }

  static fromJSON(j: MembershipJSON): Membership {
    const ms = new Membership(BigInt('0x' + j.clusterId));
    for (const m of j.members) ms.members.set(BigInt('0x' + m.id), { ...m, id: BigInt('0x' + m.id) });
    for (const r of j.removed) ms.removed.add(BigInt('0x' + r));
    ms.version = j.version;
    ms.downgrade = j.downgrade ?? NO_DOWNGRADE;
    return ms;
  }
}
