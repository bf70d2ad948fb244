// svc/adt: the interval tree used for watch ranges and permission ranges. It is an interface; create one with
// newIntervalTree() (the implementation is not exported).
export { newIntervalTree, type IntervalTree, type Interval, type IntervalValue } from '../mvcc/adt/interval-tree.js';
