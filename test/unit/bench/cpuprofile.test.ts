import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summariseProfile } from '../../../bench/lib/cpuprofile.js';

// A hand-made profile: (root) -> grpc-js handler -> node http2 -> native writev, (root) -> node http2 read
// (started by the loop, no caller of ours), (root) -> our WAL -> native fdatasync, plus GC and idle.
function profile(): object {
  const f = (id: number, functionName: string, url: string, hitCount: number, children: number[] = []) => ({
    id, callFrame: { functionName, url, lineNumber: 0, columnNumber: 0 }, hitCount, children,
  });
  return {
    startTime: 0, endTime: 100,
    nodes: [
      f(1, '(root)', '', 0, [2, 5, 7, 9, 10]),
      f(2, 'sendUnaryMessage', 'file:///x/node_modules/@grpc/grpc-js/build/src/server-call.js', 1, [3]),
      f(3, 'respond', 'node:internal/http2/core', 3, [4]),
      f(4, 'writev', '', 2),
      f(5, 'onStreamRead', 'node:internal/stream_base_commons', 0, [6]),
      f(6, 'processHeaders', 'node:internal/http2/core', 4),
      f(7, 'datasync', 'file:///x/dist/server/storage/wal.js', 1, [8]),
      f(8, 'fdatasync', '', 5),
      f(9, '(garbage collector)', '', 2),
      f(10, '(idle)', '', 2),
    ],
  };
}

describe('bench CPU profile summary', () => {
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'svc-prof-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('charges node internals and native code to the nearest caller of ours or a dependency', () => {
    const file = join(dir, 'p.cpuprofile');
    writeFileSync(file, JSON.stringify(profile()));
    const s = summariseProfile(file, '/x');
    const share = (rows: Array<{ area: string; selfPct: number }>, area: string) => rows.find((r) => r.area === area)?.selfPct ?? 0;
    // 20 samples: grpc-js 1+3+2, node http2 read 4 (no caller of ours), WAL 1+5, GC 2, idle 2
    expect(share(s.byCaller, 'dependency @grpc/grpc-js')).to.equal(30);
    expect(share(s.byCaller, 'node stream_base_commons')).to.equal(0);
    expect(share(s.byCaller, 'node http2')).to.equal(20);
    expect(share(s.byCaller, 'server/storage')).to.equal(30);
    expect(share(s.byCaller, '(garbage collector)')).to.equal(10);
    expect(share(s.byCaller, '(idle)')).to.equal(10);
    // by where the code lives, node's HTTP/2 module is one area
    expect(share(s.byArea, 'node http2')).to.equal(35);
    expect(share(s.byArea, '(native)')).to.equal(35);
  });
});
