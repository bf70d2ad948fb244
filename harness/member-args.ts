// The command line that places one member of a cluster on its URLs: the same flags for svc and the reference.

export interface MemberPlacement {
  name: string;
  dataDir: string;
  /** Listened on and advertised. */
  clientUrl: string;
  /** Listened on. */
  peerUrl: string;
  /** The peer URL the other members dial (a fault proxy in front of peerUrl, say); default peerUrl. */
  advertisedPeerUrl?: string;
  initialCluster: string;
  token: string;
  state: 'new' | 'existing';
}

/** --name, --data-dir, the client and peer URLs, and the --initial-cluster* flags of one member. */
export function memberArgs(m: MemberPlacement): string[] {
  return [
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=${m.clientUrl}`,
    `--advertise-client-urls=${m.clientUrl}`,
    `--listen-peer-urls=${m.peerUrl}`,
    `--initial-advertise-peer-urls=${m.advertisedPeerUrl ?? m.peerUrl}`,
    `--initial-cluster=${m.initialCluster}`,
    `--initial-cluster-token=${m.token}`,
    `--initial-cluster-state=${m.state}`,
  ];
}
