// The SvcCluster resource: types (the single source of the CRD schema) and validation.
export * from './types.js';
export { parseSvcCluster, specProblems, updateProblems, withDefaults, ValidationError } from './validate.js';
export { quantityBytes } from './quantity.js';
