// Response headers: every answer carries the cluster and member ids, the raft term and (mostly) a revision.
import type { HeaderFacts } from '../../core/interfaces.js';
import type { Pb } from './convert.js';

export class Headers {
  constructor(private readonly facts: HeaderFacts) {}

  header(revision?: number): Pb {
    const f = this.facts;
    return { cluster_id: f.clusterIdLong, member_id: f.memberIdLong, revision: revision ?? f.revision(), raft_term: f.term };
  }

  /** Membership answers carry no revision in the reference. */
  clusterHeader(): Pb {
    const f = this.facts;
    return { cluster_id: f.clusterIdLong, member_id: f.memberIdLong, raft_term: f.term };
  }
}
