// The Cluster service (etcdserverpb.Cluster): membership changes go through the core, which makes the
// reference's checks (URLs taken, strict reconfiguration, learner readiness) before proposing them.
import { Errors } from '../../core/errors.js';
import type { Member } from '../../cluster/membership.js';
import type { MembershipChanges, ReadBarrier } from '../../core/interfaces.js';
import type { AuthGate } from './auth-gate.js';
import type { Headers } from './headers.js';
import type { Outgoing } from '../../wire/index.js';
import type { ClusterService } from './service-methods.js';

export interface ClusterDeps {
  membership: MembershipChanges;
  barrier: ReadBarrier;
  gate: AuthGate;
  headers: Headers;
}

const memberToPb = (m: Member): Outgoing<'etcdserverpb.Member'> => ({ ID: m.id.toString(), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: m.isLearner });
const membersPb = (list: Member[]): Array<Outgoing<'etcdserverpb.Member'>> => list.map(memberToPb);

export function clusterService(d: ClusterDeps): ClusterService {
  const { gate, headers, membership } = d;
  return {
    MemberAdd: async (req, meta) => {
      gate.requireAdmin(meta);
      const peerURLs = req.peerURLs ?? [];
      if (peerURLs.length === 0 || peerURLs.some((u) => !isMemberUrl(u))) throw Errors.memberBadURLs();
      const { member, members } = await membership.addMember(peerURLs, !!req.isLearner);
      return { header: headers.clusterHeader(), member: memberToPb(member), members: membersPb(members) };
    },

    MemberRemove: async (req, meta) => {
      gate.requireAdmin(meta);
      const list = await membership.removeMember(BigInt(req.ID ?? 0));
      return { header: headers.clusterHeader(), members: membersPb(list) };
    },

    MemberUpdate: async (req, meta) => {
      gate.requireAdmin(meta);
      const id = BigInt(req.ID ?? 0);
      const peerURLs = req.peerURLs ?? [];
      if (peerURLs.length === 0 || peerURLs.some((u) => !isMemberUrl(u))) throw Errors.memberBadURLs();
      const list = await membership.updateMember(id, peerURLs);
      return { header: headers.clusterHeader(), members: membersPb(list) };
    },

    MemberList: async (req) => {
      if (req.linearizable) await d.barrier.linearizableReadNotify();
      return { header: headers.clusterHeader(), members: membersPb(membership.members()) };
    },

    MemberPromote: async (req, meta) => {
      gate.requireAdmin(meta);
      const list = await membership.promoteMember(BigInt(req.ID ?? 0));
      return { header: headers.clusterHeader(), members: membersPb(list) };
    },
  };
}

/**
 * The reference's rule for member URLs: http or https with host:port and no path, or a unix socket (unix,
 * unixs) of any form.
 */
export function isMemberUrl(text: string): boolean {
  const m = /^([a-z]+):\/\/([^/?#]*)([^?#]*)/.exec(text.trim());
  if (!m) return false;
  const [, scheme, authority, path] = m;
  if (scheme === 'unix' || scheme === 'unixs') return true;
  if (scheme !== 'http' && scheme !== 'https') return false;
  return path === '' && /^(?:[^@]*@)?(?:\[[^\]]*\]|[^:[\]]*):\d*$/.test(authority);
}
