// How the operator shows a member ID: as etcdctl and svcctl print it.

/**
 * A member ID in lower-case hex without `0x` (etcdctl's `member list`, svcctl's), from the decimal string the
 * observation keeps (as the gateway and the client library write uint64s). Anything not decimal is shown as given.
 */
export function hexMemberId(id: string | undefined): string {
  if (id === undefined) return '?';
  return /^\d+$/.test(id) ? BigInt(id).toString(16) : id;
}
