// Response headers: every answer carries the cluster and member ids, the raft term and (mostly) a revision.
import protobuf from 'protobufjs';
import type { HeaderFacts } from '../../core/interfaces.js';
import type { Outgoing } from '../../wire/index.js';

export class Headers {
  /** The ids as protobuf 64-bit values, made once: a decimal string would be parsed again for every answer. */
  private readonly clusterId: protobuf.Long;
  private readonly memberId: protobuf.Long;

  constructor(private readonly facts: HeaderFacts) {
    this.clusterId = toLong(facts.clusterId);
    this.memberId = toLong(facts.memberId);
  }

  header(revision?: number): Outgoing<'etcdserverpb.ResponseHeader'> {
    const f = this.facts;
    return { cluster_id: this.clusterId, member_id: this.memberId, revision: revision ?? f.revision(), raft_term: f.term };
  }

  /** Membership answers carry no revision in the reference. */
  clusterHeader(): Outgoing<'etcdserverpb.ResponseHeader'> {
    return { cluster_id: this.clusterId, member_id: this.memberId, raft_term: this.facts.term };
  }
}

/** An unsigned 64-bit protobuf value (the Long class protobufjs uses). */
function toLong(v: bigint): protobuf.Long {
  const L = protobuf.util.Long as unknown as { fromString(s: string, unsigned: boolean): protobuf.Long };
  return L.fromString(v.toString(), true);
}
