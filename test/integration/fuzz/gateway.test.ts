// Hostile input against a running member's JSON gateway (/v3/...): hand-picked bad requests, seeded
// random mutations of valid ones, and misbehaving connections. Every rejected request must get a clear
// 4xx error and leave the store revision where it was (no partial write); the member must survive.

import { expect } from 'chai';
import fc from 'fast-check';
import net from 'node:net';
import { sleep } from '../../../harness/process.js';
import { postJson, printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { b64, expectClearHttpError, expectMemberIntact, storeRevision } from './helpers.js';

const SEED = 20261121;

/** A nested txn `depth` levels deep whose innermost op is a put. */
function nestedTxn(depth: number): Record<string, unknown> {
  let op: Record<string, unknown> = { request_put: { key: b64('fz/deep'), value: b64('v') } };
  for (let i = 0; i < depth; i++) op = { request_txn: { success: [op] } };
  return (op.request_txn as Record<string, unknown>) ?? {};
}

describe('fuzz: HTTP gateway', function () {
  this.timeout(180000);
  let c: SvcCluster;
  before(async () => {
    c = await startSvcCluster({ size: 1 });
  });
  after(async () => {
    await c?.close();
  });
  printLogsOnFailure(() => [c]);

  /** Sends a raw body; asserts a clear 4xx and an unchanged revision. */
  const rejected = async (path: string, body: string | object, what: string) => {
    const before = await storeRevision(c);
    const a = await postJson(`${c.members[0].clientURL}${path}`, body, 20000);
    expectClearHttpError(a, what);
    expect(await storeRevision(c), `${what}: the revision moved: a rejected request wrote something`).to.equal(before);
    return a;
  };

  it('rejects hand-picked hostile requests with a clear error and writes nothing', async () => {
    const big = b64(Buffer.alloc(2 * 1024 * 1024, 'k'));
    const cases: Array<[string, string | object, string]> = [
      ['/v3/kv/put', { key: '!!!not base64!!!', value: b64('v') }, 'bad base64 key'],
      ['/v3/kv/put', { key: b64('fz/a'), value: 'ab$c' }, 'bad base64 value'],
      ['/v3/kv/put', { key: big, value: b64('v') }, 'a 2 MiB key'],
      ['/v3/kv/put', { key: b64('fz/a'), value: big }, 'a 2 MiB value'],
      ['/v3/kv/put', { key: '', value: b64('v') }, 'empty key'],
      ['/v3/kv/put', { key: b64('fz/a'), value: b64('v'), bogus: 1 }, 'unknown field'],
      ['/v3/kv/put', '{"key":"' + b64('fz/a') + '","__proto__":{"x":1}}', 'raw __proto__ field'],
      ['/v3/kv/put', { key: 12345, value: b64('v') }, 'key as a number'],
      ['/v3/kv/put', { key: b64('fz/a'), value: [1, 2] }, 'value as an array'],
      ['/v3/kv/put', { key: b64('fz/a'), lease: '18446744073709551616' }, 'lease beyond 64 bits (FINDINGS.md F3)'],
      ['/v3/kv/put', { key: b64('fz/a'), lease: 'twelve' }, 'lease not a number'],
      ['/v3/kv/put', { key: b64('fz/a'), lease: '12345' }, 'unknown lease'],
      ['/v3/kv/put', 'not json at all', 'invalid JSON'],
      ['/v3/kv/put', '{"key": "' + b64('fz/a') + '"', 'truncated JSON'],
      ['/v3/kv/put', '[]', 'an array body'],
      ['/v3/kv/put', '123', 'a number body'],
      ['/v3/kv/put', '"str"', 'a string body'],
      ['/v3/kv/put', '\u00ff\u00fe\u0000garbage', 'binary junk'],
      ['/v3/kv/range', { key: b64('fz/a'), revision: '999999999' }, 'future revision'],
      ['/v3/kv/range', { key: b64('fz/a'), revision: 'abc' }, 'revision not a number'],
      ['/v3/kv/range', { key: b64('fz/a'), sort_order: 'SIDEWAYS' }, 'unknown enum'],
      ['/v3/kv/compaction', { revision: '999999999' }, 'compaction in the future'],
      ['/v3/kv/txn', { success: Array.from({ length: 129 }, (_, i) => ({ request_put: { key: b64(`fz/t${i}`), value: b64('v') } })) }, '129 ops in a txn'],
      ['/v3/kv/txn', { success: [{ request_put: { key: b64('fz/d'), value: b64('1') } }, { request_put: { key: b64('fz/d'), value: b64('2') } }] }, 'duplicate keys in a txn'],
      ['/v3/kv/txn', { success: [{ request_put: { key: b64('fz/p1'), value: b64('1') } }, { request_put: { key: '%%%', value: b64('2') } }] }, 'a txn whose second op is malformed'],
      ['/v3/kv/txn', { success: [{ request_put: { key: b64('fz/p2'), value: b64('1') } }, { request_put: { key: '', value: b64('2') } }] }, 'a txn whose second op has no key'],
      ['/v3/kv/txn', { compare: [{ key: b64('fz/a'), target: 'NOPE', result: 'EQUAL' }], success: [] }, 'a compare with an unknown target'],
      ['/v3/kv/txn', { success: [{ request_put: { key: b64('fz/n') } }, { request_txn: { success: [{ request_put: { key: b64('fz/n') } }] } }] }, 'the same key put in a txn and its nested txn (FINDINGS.md F4)'],
      ['/v3/kv/deleterange', { key: '' }, 'delete without a key'],
      ['/v3/kv/nope', {}, 'an unknown method'],
    ];
    for (const [path, body, what] of cases) await rejected(path, body, what);
    // The valid neighbours of some of these do work (so the rejections above were about the input).
    expect((await postJson(`${c.members[0].clientURL}/v3/kv/put`, { key: b64('fz/a'), value: b64('v') })).status).to.equal(200);
    await expectMemberIntact(c);
  });

  it('answers invalid but harmless ranges without error or with a clear one', async () => {
    const cases: object[] = [
      { key: b64('z'), range_end: b64('a') }, // end before start
      { key: b64('a'), range_end: b64('a') }, // empty interval
      { key: b64('fz/'), limit: '-5' },
      { key: b64('fz/'), revision: '-3' },
      { key: b64('\u0000'), range_end: b64('\u0000'), keys_only: true, count_only: true },
      { key: b64('fz/'), range_end: b64('fz0'), min_mod_revision: '99', max_mod_revision: '1' },
    ];
    for (const body of cases) {
      const before = await storeRevision(c);
      const a = await postJson(`${c.members[0].clientURL}/v3/kv/range`, body);
      if (a.status !== 200) expectClearHttpError(a, JSON.stringify(body));
      expect(await storeRevision(c)).to.equal(before);
    }
    await expectMemberIntact(c);
  });

  it('survives deep txn nesting and deeply nested JSON', async () => {
    // Deep nesting is refused up front with a clear error and nothing written (FINDINGS.md F2).
    const depths = [8, 40, 50, 64, 500];
    for (const depth of depths) {
      const before = await storeRevision(c);
      const a = await postJson(`${c.members[0].clientURL}/v3/kv/txn`, nestedTxn(depth), 20000);
      if (a.status === 200) expect(await storeRevision(c)).to.equal(before + 1);
      else {
        expectClearHttpError(a, `txn nested ${depth} deep`);
        expect(await storeRevision(c)).to.equal(before);
      }
    }
    await rejected('/v3/kv/put', '['.repeat(200000) + ']'.repeat(200000), 'JSON nested 200000 deep');
    await rejected('/v3/kv/txn', '{"success":[' + '{"request_txn":{"success":['.repeat(20000) + ']}}'.repeat(20000) + ']}', 'txn JSON nested 20000 deep');
    await expectMemberIntact(c);
  });

  it('seeded random mutations of valid requests: a 2xx or a clear 4xx, never a partial write', async () => {
    const templates: Array<[string, Record<string, unknown>]> = [
      ['/v3/kv/put', { key: b64('fz/m'), value: b64('v'), prev_kv: true }],
      ['/v3/kv/range', { key: b64('fz/'), range_end: b64('fz0'), limit: '10' }],
      ['/v3/kv/deleterange', { key: b64('fz/m'), prev_kv: true }],
      [
        '/v3/kv/txn',
        {
          compare: [{ key: b64('fz/m'), target: 'VALUE', result: 'EQUAL', value: b64('v') }],
          success: [{ request_put: { key: b64('fz/m1'), value: b64('x') } }, { request_range: { key: b64('fz/m') } }],
          failure: [{ request_delete_range: { key: b64('fz/m1') } }],
        },
      ],
      ['/v3/lease/grant', { TTL: '30' }],
    ];
    const junk = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constantFrom('!!', '====', '-1', '18446744073709551616', 'NaN', '\u0000', 'A'.repeat(5000)),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
    );
    const mutation = fc.record({
      template: fc.nat(templates.length - 1),
      kind: fc.constantFrom('replace', 'drop', 'add', 'truncate', 'flip', 'nest-junk'),
      pathPick: fc.nat(),
      junk,
      cut: fc.nat(),
    });
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(mutation, async (m) => {
        const [path, tmpl] = templates[m.template];
        const doc = structuredClone(tmpl) as Record<string, unknown>;
        // every (object, key) pair in the document, to pick one to mutate
        const slots: Array<[Record<string, unknown>, string]> = [];
        const walk = (o: unknown) => {
          if (o && typeof o === 'object') for (const [k, v] of Object.entries(o)) {
            slots.push([o as Record<string, unknown>, k]);
            walk(v);
          }
        };
        walk(doc);
        const [obj, key] = slots[m.pathPick % slots.length];
        let text: string;
        switch (m.kind) {
          case 'replace':
            obj[key] = m.junk;
            text = JSON.stringify(doc);
            break;
          case 'drop':
            delete obj[key];
            text = JSON.stringify(doc);
            break;
          case 'add':
            obj[`x_${key}`] = m.junk;
            text = JSON.stringify(doc);
            break;
          case 'nest-junk':
            obj[key] = { [key]: m.junk };
            text = JSON.stringify(doc);
            break;
          case 'truncate': {
            const t = JSON.stringify(doc);
            text = t.slice(0, m.cut % t.length);
            break;
          }
          default: {
            const t = Buffer.from(JSON.stringify(doc));
            t[m.cut % t.length] ^= 1 << m.cut % 8;
            text = t.toString('latin1');
          }
        }
        const before = await storeRevision(c);
        const a = await postJson(`${c.members[0].clientURL}${path}`, text, 20000);
        if (a.status === 200) {
          accepted++;
          return;
        }
        refused++;
        expectClearHttpError(a, `${path} ${text.slice(0, 200)}`);
        expect(await storeRevision(c), `${path} ${text.slice(0, 200)} was refused but the revision moved`).to.equal(before);
      }),
      { numRuns: 250, seed: SEED },
    );
    expect(refused).to.be.greaterThan(0);
    expect(accepted).to.be.greaterThan(0);
    await expectMemberIntact(c);
  });

  it('slow, half-closed and abandoned connections do not take the member down', async () => {
    const port = Number(new URL(c.members[0].clientURL).port);
    const open = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
        s.on('error', reject);
      });
    const answer = (s: net.Socket, ms: number) =>
      new Promise<string>((resolve) => {
        let got = '';
        const t = setTimeout(() => resolve(got), ms);
        s.on('data', (d: Buffer) => (got += d.toString('latin1')));
        s.on('close', () => {
          clearTimeout(t);
          resolve(got);
        });
        s.on('error', () => undefined);
      });
    const body = JSON.stringify({ key: b64('fz/slow'), value: b64('v') });
    const request = `POST /v3/kv/put HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

    // 30 slowloris connections holding half a request each, while normal clients keep working
    const stuck = await Promise.all(Array.from({ length: 30 }, () => open()));
    for (const s of stuck) s.write('POST /v3/kv/put HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"key":');
    expect((await postJson(`${c.members[0].clientURL}/v3/kv/put`, { key: b64('fz/ok'), value: b64('v') })).status).to.equal(200);

    // a request sent one byte at a time
    const trickle = await open();
    const trickled = answer(trickle, 15000);
    const t0 = Date.now();
    for (const ch of request) {
      trickle.write(ch);
      await sleep(1);
    }
    const tr = await trickled;
    expect(tr, `trickled request: answer after ${Date.now() - t0} ms, socket destroyed=${trickle.destroyed}`).to.match(/^HTTP\/1\.1 200/);
    trickle.destroy();

    // a full request, then a half-close of our side: answered, or dropped as an aborted request (the
    // reference's Go server also treats a client's FIN as a disconnect); the connection must not hang
    const half = await open();
    const halfAnswer = answer(half, 10000);
    half.end(request);
    const h = await halfAnswer;
    if (h) expect(h).to.match(/^HTTP\/1\.1 200/);
    expect(half.destroyed || h !== '', 'a half-closed connection was left hanging').to.equal(true);

    // a body shorter than its Content-Length, then half-closed: refused or dropped, nothing written
    await sleep(1000); // the half-closed request above may still be landing
    const before = await storeRevision(c);
    const short = await open();
    const shortAnswer = answer(short, 10000);
    short.end(`POST /v3/kv/put HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n${body}`);
    const got = await shortAnswer;
    if (got) expect(got).to.match(/^HTTP\/1\.1 4\d\d/);
    expect(await storeRevision(c)).to.equal(before);

    // a reset in the middle of a body
    const reset = await open();
    reset.write(`POST /v3/kv/put HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    reset.resetAndDestroy();

    // 20 pipelined requests on one connection all get answers
    const pipe = await open();
    const pipeAnswer = answer(pipe, 10000);
    pipe.write(request.repeat(20));
    await sleep(2000);
    pipe.end();
    expect((await pipeAnswer).match(/HTTP\/1\.1 200/g)?.length).to.equal(20);

    for (const s of stuck) s.destroy();
    await expectMemberIntact(c);
  });
});
