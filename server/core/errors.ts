// Errors a client can see, with the reference's gRPC status codes and message texts, so that clients written
// for the reference (which compare messages and codes) react correctly to svc.

/** gRPC status codes (the numbers are the gRPC standard's). */
export const Code = {
  OK: 0, Canceled: 1, Unknown: 2, InvalidArgument: 3, DeadlineExceeded: 4, NotFound: 5, AlreadyExists: 6,
  PermissionDenied: 7, ResourceExhausted: 8, FailedPrecondition: 9, Aborted: 10, OutOfRange: 11,
  Unimplemented: 12, Internal: 13, Unavailable: 14, DataLoss: 15, Unauthenticated: 16,
} as const;

export class ServerError extends Error {
  constructor(readonly grpcCode: number, message: string, readonly httpStatus = httpStatusFor(grpcCode)) {
    super(message);
    this.name = 'ServerError';
  }
}

function httpStatusFor(code: number): number {
  switch (code) {
    case Code.InvalidArgument: case Code.OutOfRange: case Code.FailedPrecondition: return 400;
    case Code.Unauthenticated: return 401;
    case Code.PermissionDenied: return 403;
    case Code.NotFound: return 404;
    case Code.AlreadyExists: case Code.Aborted: return 409;
    case Code.ResourceExhausted: return 429;
    case Code.Unimplemented: return 501;
    case Code.Unavailable: return 503;
    case Code.DeadlineExceeded: return 504;
    default: return 500;
  }
}

const e = (code: number, msg: string) => () => new ServerError(code, msg);

/** The error catalogue; each entry makes a fresh error (stack traces point at the caller). */
export const Errors = {
  emptyKey: e(Code.InvalidArgument, 'etcdserver: key is not provided'),
  valueProvided: e(Code.InvalidArgument, 'etcdserver: value is provided'),
  leaseProvided: e(Code.InvalidArgument, 'etcdserver: lease is provided'),
  tooManyOps: e(Code.InvalidArgument, 'etcdserver: too many operations in txn request'),
  duplicateKey: e(Code.InvalidArgument, 'etcdserver: duplicate key given in txn request'),
  compacted: e(Code.OutOfRange, 'etcdserver: mvcc: required revision has been compacted'),
  futureRev: e(Code.OutOfRange, 'etcdserver: mvcc: required revision is a future revision'),
  noSpace: e(Code.ResourceExhausted, 'etcdserver: mvcc: database space exceeded'),
  leaseNotFound: e(Code.NotFound, 'etcdserver: requested lease not found'),
  leaseExist: e(Code.FailedPrecondition, 'etcdserver: lease already exists'),
  leaseTTLTooLarge: e(Code.OutOfRange, 'etcdserver: too large lease TTL'),
  memberExist: e(Code.FailedPrecondition, 'etcdserver: member ID already exist'),
  peerURLExist: e(Code.FailedPrecondition, 'etcdserver: Peer URLs already exists'),
  memberNotEnoughStarted: e(Code.FailedPrecondition, 'etcdserver: re-configuration failed due to not enough started members'),
  memberBadURLs: e(Code.InvalidArgument, 'etcdserver: given member URLs are invalid'),
  memberNotFound: e(Code.NotFound, 'etcdserver: member not found'),
  memberNotLearner: e(Code.FailedPrecondition, 'etcdserver: can only promote a learner member'),
  learnerNotReady: e(Code.FailedPrecondition, 'etcdserver: can only promote a learner member which is in sync with leader'),
  tooManyLearners: e(Code.FailedPrecondition, 'etcdserver: too many learner members in cluster'),
  requestTooLarge: e(Code.InvalidArgument, 'etcdserver: request is too large'),
  tooManyRequests: e(Code.ResourceExhausted, 'etcdserver: too many requests'),
  rootUserNotExist: e(Code.FailedPrecondition, 'etcdserver: root user does not exist'),
  rootRoleNotExist: e(Code.FailedPrecondition, 'etcdserver: root user does not have root role'),
  userAlreadyExist: e(Code.FailedPrecondition, 'etcdserver: user name already exists'),
  userEmpty: e(Code.InvalidArgument, 'etcdserver: user name is empty'),
  userNotFound: e(Code.FailedPrecondition, 'etcdserver: user name not found'),
  roleAlreadyExist: e(Code.FailedPrecondition, 'etcdserver: role name already exists'),
  roleNotFound: e(Code.FailedPrecondition, 'etcdserver: role name not found'),
  roleEmpty: e(Code.InvalidArgument, 'etcdserver: role name is empty'),
  authFailed: e(Code.InvalidArgument, 'etcdserver: authentication failed, invalid user ID or password'),
  permissionDenied: e(Code.PermissionDenied, 'etcdserver: permission denied'),
  roleNotGranted: e(Code.FailedPrecondition, 'etcdserver: role is not granted to the user'),
  permissionNotGranted: e(Code.FailedPrecondition, 'etcdserver: permission is not granted to the role'),
  authNotEnabled: e(Code.FailedPrecondition, 'etcdserver: authentication is not enabled'),
  invalidAuthToken: e(Code.Unauthenticated, 'etcdserver: invalid auth token'),
  authOldRevision: e(Code.InvalidArgument, 'etcdserver: revision of auth store is old'),
  invalidAuthMgmt: e(Code.InvalidArgument, 'etcdserver: invalid auth management'),
  noLeader: e(Code.Unavailable, 'etcdserver: no leader'),
  notLeader: e(Code.FailedPrecondition, 'etcdserver: not leader'),
  leaderChanged: e(Code.Unavailable, 'etcdserver: leader changed'),
  notCapable: e(Code.Unavailable, 'etcdserver: not capable'),
  stopped: e(Code.Unavailable, 'etcdserver: server stopped'),
  timeout: e(Code.Unavailable, 'etcdserver: request timed out'),
  timeoutDueToLeaderFail: e(Code.Unavailable, 'etcdserver: request timed out, possibly due to previous leader failure'),
  timeoutLeaderTransfer: e(Code.Unavailable, 'etcdserver: request timed out, leader transfer took too long'),
  unhealthy: e(Code.Unavailable, 'etcdserver: unhealthy cluster'),
  corrupt: e(Code.DataLoss, 'etcdserver: corrupt cluster'),
  notSupportedForLearner: e(Code.Unavailable, 'etcdserver: rpc not supported for learner'),
  unknownMethod: e(Code.Unknown, 'etcdserver: unknown method'),
  downgradeWrongFormat: e(Code.InvalidArgument, 'etcdserver: wrong downgrade target version format'),
  downgradeNoClusterVersion: e(Code.FailedPrecondition, 'etcdserver: cluster version not found during downgrade'),
  downgradeInvalidTarget: e(Code.InvalidArgument, 'etcdserver: invalid downgrade target version'),
  downgradeInProgress: e(Code.FailedPrecondition, 'etcdserver: cluster has a downgrade job in progress'),
  noInflightDowngrade: e(Code.FailedPrecondition, 'etcdserver: no inflight downgrade job'),
  badLeaderTransferee: e(Code.FailedPrecondition, 'etcdserver: bad leader transferee'),
  /** A release feature asked for before the cluster version enables it. */
  unavailableUntil: (feature: string, version: string) =>
    new ServerError(Code.Unavailable, `etcdserver: ${feature} is unavailable until the cluster version is ${version}`),
};

/** The catalogue's error with this message (an answer relayed from another member), or an Unavailable one. */
export function errorWithMessage(message: string): ServerError {
  for (const make of Object.values(Errors)) {
    if (make.length > 0) continue;
    const err = (make as () => ServerError)();
    if (err.message === message) return err;
  }
  return new ServerError(Code.Unavailable, message);
}
