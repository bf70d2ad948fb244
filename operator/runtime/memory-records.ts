// A record document held in memory (runtime.ts RecordStore): for a runtime driven without a place to store it (tests
// that drive a runtime directly, a dry run). Versions count the saves, as the local state file's do.
import type { ClusterRecords, ClusterRequests, RecordsDocument } from '../planner/records.js';
import { RuntimeError, type RecordStore } from './runtime.js';

/** A store over `records` and `requests`; `current()` is the document as it stands. */
export function memoryRecords(records: ClusterRecords = {}, requests: ClusterRequests = {}, cluster: RecordsDocument['cluster'] = { name: '', created: 0 }): RecordStore & { current(): RecordsDocument } {
  const doc: RecordsDocument = { records, requests, version: '0', cluster };
  return {
    current: () => doc,
    load: async () => ({ ...doc }),
    save: async (next, version) => {
      if (version !== doc.version) throw new RuntimeError('STATE_IO', `the records are at version ${doc.version}, not ${version}`);
      doc.records = next;
      doc.version = String(Number(doc.version) + 1);
      return doc.version;
    },
  };
}
