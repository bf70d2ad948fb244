// The SvcCluster resource: types (the single source of the CRD schema) and validation.
export * from './types.js';
export { parseSvcCluster, specProblems, unknownFields, updateProblems, withDefaults, ValidationError } from './validate.js';
export { memberArgs, memberConfig, type MemberConfig, type MemberPlacement } from './member-config.js';
export { quantityBytes } from './quantity.js';
