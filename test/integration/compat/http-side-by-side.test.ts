// The HTTP surface of svc 3.4 next to the reference (etcd 3.4.23), both as 3-member clusters on loopback, asked
// the same questions: /version, /health, the method rule of /version, the metric families operators use (same
// type and help text, `svc_` for `etcd_`), the v3 gateway's put/range answers and its errors for bad input.
// Values that must differ (ids, revisions, the exact patch release, Go's vs our parser messages) are set aside;
// JSON keys, value types and status codes must agree.
import { expect } from 'chai';
import { startReferenceCluster } from '../../../harness/reference-cluster.js';
import { useClustersSideBySide } from '../../../harness/side-by-side.js';
import { b64, postJson, startSvcCluster } from '../../../harness/svc-cluster.js';
import { httpGet, sleep } from '../../../harness/process.js';

/** The JSON's structure with leaf values replaced by their kind; uint64 strings (the gateway's int64s) kept apart. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])]));
  }
  if (typeof v === 'string') return /^-?\d+$/.test(v) ? 'int64-string' : 'string';
  return typeof v;
}

/** A copy of the JSON without any `header` member, at any depth. */
function withoutHeaders(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutHeaders);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as object).filter(([k]) => k !== 'header').map(([k, x]) => [k, withoutHeaders(x)]));
  }
  return v;
}

interface Family {
  type: string;
  help: string;
}

/** `# HELP` and `# TYPE` of every metric family in a Prometheus text exposition, by name. */
function families(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const line of text.split('\n')) {
    const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (!m) continue;
    const f = out.get(m[2]) ?? { type: '', help: '' };
    if (m[1] === 'HELP') f.help = m[3];
    else f.type = m[3];
    out.set(m[2], f);
  }
  return out;
}

const COMPARED = /^etcd_(server_is_leader|server_has_leader|cluster_version|server_version|server_proposals_.*|mvcc_.*|debugging_mvcc_(db_total_size_in_bytes|put_total|delete_total|txn_total|range_total))$/;

async function decidedVersion(url: string): Promise<Record<string, unknown>> {
  for (let t = 0; ; t++) {
    const v = JSON.parse((await httpGet(`${url}/version`)).body) as Record<string, unknown>;
    if (v.etcdcluster !== 'not_decided' || t > 100) return v;
    await sleep(200);
  }
}

describe('HTTP side by side: svc 3.4 and the reference 3.4', function () {
  this.timeout(120000);
  const pair = useClustersSideBySide(() => [startSvcCluster({ size: 3, version: '3.4.34' }), startReferenceCluster({ size: 3 })]);

  const both = () => [
    { who: 'svc', url: pair.svc.members[1].clientURL },
    { who: 'reference', url: pair.ref.members[1].clientUrl },
  ];

  it('GET /version: the same fields, a major.minor.patch server and a major.minor.0 cluster version', async () => {
    for (const { who, url } of both()) {
      const res = await httpGet(`${url}/version`);
      expect(res.status, who).to.equal(200);
      expect(res.headers['content-type'], who).to.match(/^application\/json/);
      const v = await decidedVersion(url);
      expect(Object.keys(v).sort(), who).to.deep.equal(['etcdcluster', 'etcdserver']);
      expect(v.etcdserver, who).to.match(/^3\.4\.\d+$/);
      expect(v.etcdcluster, who).to.equal('3.4.0');
    }
  });

  it('POST /version: 405 with Allow: GET', async () => {
    for (const { who, url } of both()) {
      const res = await postJson(`${url}/version`, {});
      expect(res.status, who).to.equal(405);
      const allow = await new Promise<string | undefined>((resolve, reject) => {
        void import('node:http').then(({ request }) => {
          const req = request(`${url}/version`, { method: 'POST', agent: false }, (r) => {
            r.resume();
            resolve(r.headers.allow);
          });
          req.on('error', reject);
          req.end();
        });
      });
      expect(allow, who).to.equal('GET');
    }
  });

  it('GET /health: 200 with the same body', async () => {
    const bodies: unknown[] = [];
    for (const { who, url } of both()) {
      const res = await httpGet(`${url}/health`);
      expect(res.status, who).to.equal(200);
      bodies.push(JSON.parse(res.body));
    }
    expect(bodies[0], 'svc /health body').to.deep.equal(bodies[1]);
  });

  it('GET /metrics: every compared reference family exists in svc as svc_* with the same type and help', async () => {
    const [ours, theirs] = await Promise.all(both().map(async ({ url }) => families((await httpGet(`${url}/metrics`)).body)));
    const compared = [...theirs.keys()].filter((n) => COMPARED.test(n));
    expect(compared.length, 'reference families compared').to.be.greaterThan(15);
    const problems: string[] = [];
    for (const name of compared) {
      const want = theirs.get(name)!;
      const svcName = name.replace(/^etcd_/, 'svc_');
      const got = ours.get(svcName);
      if (!got) problems.push(`${svcName}: missing`);
      else {
        if (got.type !== want.type) problems.push(`${svcName}: TYPE ${got.type}, reference ${want.type}`);
        if (got.help !== want.help) problems.push(`${svcName}: HELP "${got.help}", reference "${want.help}"`);
      }
    }
    expect(problems).to.deep.equal([]);
    // And no family leaks the reference's prefix.
    expect([...ours.keys()].filter((n) => n.startsWith('etcd_'))).to.deep.equal([]);
  });

  it('POST /v3/kv/put and /v3/kv/range: the same JSON keys and value kinds', async () => {
    const key = b64('sbs/key');
    const requests: Array<[string, unknown]> = [
      ['/v3/kv/put', { key, value: b64('one') }],
      ['/v3/kv/put', { key, value: b64('two'), prev_kv: true }],
      ['/v3/kv/range', { key }],
      ['/v3/kv/range', { key, serializable: true }],
      ['/v3/kv/range', { key: b64('sbs/'), range_end: b64('sbs0') }],
      ['/v3/kv/range', { key: b64('sbs/'), range_end: b64('sbs0'), count_only: true }],
      ['/v3/kv/range', { key: b64('sbs/absent') }],
      ['/v3/kv/deleterange', { key, prev_kv: true }],
    ];
    for (const [path, body] of requests) {
      const [ours, theirs] = await Promise.all(both().map(({ url }) => postJson(`${url}${path}`, body)));
      expect(ours.status, `${path} ${JSON.stringify(body)}: svc ${ours.text}`).to.equal(theirs.status);
      expect(shape(ours.body), `${path} ${JSON.stringify(body)}\n svc: ${ours.text}\n ref: ${theirs.text}`).to.deep.equal(shape(theirs.body));
    }
  });

  it('other gateway answers: txn, status, member list, alarms, leases have the same JSON keys and value kinds', async () => {
    const key = b64('sbs/txn');
    const requests: Array<[string, unknown]> = [
      ['/v3/kv/txn', { compare: [{ key, target: 'VERSION', result: 'EQUAL', version: '0' }], success: [{ request_put: { key, value: b64('t') } }], failure: [{ request_range: { key } }] }],
      ['/v3/kv/txn', { compare: [{ key, target: 'VERSION', result: 'EQUAL', version: '0' }], success: [{ request_put: { key, value: b64('t') } }], failure: [{ request_range: { key } }] }],
      ['/v3/maintenance/status', {}],
      ['/v3/maintenance/alarm', { action: 'GET' }],
      ['/v3/cluster/member/list', {}],
      ['/v3/lease/grant', { TTL: '60', ID: '4242' }],
      ['/v3/lease/timetolive', { ID: '4242', keys: true }],
      ['/v3/lease/leases', {}],
      ['/v3/lease/revoke', { ID: '4242' }],
    ];
    // Response headers are set aside here: the reference fills them unevenly (only `revision` inside txn
    // responses, no revision in member list, no header at all in an empty alarm list); svc fills them fully.
    const problems: string[] = [];
    for (const [path, body] of requests) {
      const [ours, theirs] = await Promise.all(both().map(({ url }) => postJson(`${url}${path}`, body)));
      if (ours.status !== theirs.status) problems.push(`${path}: status ${ours.status}, reference ${theirs.status}`);
      const a = JSON.stringify(shape(withoutHeaders(ours.body)));
      const b = JSON.stringify(shape(withoutHeaders(theirs.body)));
      if (a !== b) problems.push(`${path} ${JSON.stringify(body)}\n  svc: ${ours.text}\n  ref: ${theirs.text}`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('gateway errors: malformed JSON and bad base64 are 400 with {error, message, code}', async () => {
    const bad: Array<[string, string]> = [
      ['/v3/kv/put', '{bad'],
      ['/v3/kv/put', JSON.stringify({ key: '!!!', value: b64('v') })],
      ['/v3/kv/range', JSON.stringify({ key: 'not base64 ~' })],
    ];
    for (const [path, body] of bad) {
      const [ours, theirs] = await Promise.all(both().map(({ url }) => postJson(`${url}${path}`, body)));
      const what = `${path} ${body}\n svc: ${ours.text}\n ref: ${theirs.text}`;
      expect(theirs.status, what).to.equal(400);
      expect(ours.status, what).to.equal(400);
      expect(Object.keys(ours.body).sort(), what).to.deep.equal(['code', 'error', 'message']);
      expect(shape(ours.body), what).to.deep.equal(shape(theirs.body));
      expect(ours.body.code, what).to.equal(theirs.body.code);
      expect(ours.body.error, what).to.equal(ours.body.message);
    }
  });
});
