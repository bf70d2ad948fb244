// The command line that places one member of a cluster on its URLs: the same flags for svc and the reference.
// It is the operator's own rendering (operator/api/member-config.ts), so the harness starts members exactly as
// both runtimes do; pass memberConfig(spec, release) to add what a spec decides.
export { memberArgs, memberConfig, type MemberConfig, type MemberPlacement } from '../operator/api/member-config.js';
