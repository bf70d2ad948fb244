// What the engine asks of members: the MemberClient's calls it uses, as a type, so that unit tests can drive
// the engine with a simulated cluster instead of real members.
import type { MemberClient } from '../members/index.js';

export type MemberApi = Pick<MemberClient, 'version' | 'healthy' | 'isLeader' | 'status' | 'authEnabled' | 'memberList' | 'memberAdd' | 'memberRemove' | 'memberPromote' | 'moveLeader' | 'snapshot'> &
  // (the corruption handling's calls: a simulated cluster without alarms leaves them out)
  Partial<Pick<MemberClient, 'alarms' | 'hashKV' | 'disarmAlarm'>> &
  // (maintenance's: compaction and defragmentation)
  Partial<Pick<MemberClient, 'compact' | 'defragment'>>;
