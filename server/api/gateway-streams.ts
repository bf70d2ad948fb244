// The gateway's streaming calls: POST /v3/watch, /v3/lease/keepalive, /v3/maintenance/snapshot and /v3/election/observe. The request
// body is one JSON message; the answer is a stream of JSON lines {"result": <message>}, the way the reference's
// grpc-gateway streams, until the call ends or the client goes away.
import type { Request, Response } from 'express';
import type { StreamCore } from '../core/interfaces.js';
import type { V3Api } from './v3/handlers.js';
import type { MessageName, Messages, Outgoing } from '../wire/index.js';
import { eventToPb } from './v3/watch.js';
import { Errors } from '../core/errors.js';
import { GATEWAY_STREAMS, jsonToMessage, messageToJson, type GatewayStreamPath } from './gateway.js';
import { streamSnapshot } from './v3/streams.js';
import type { WatchResponse } from '../mvcc/watchable-store.js';

export type StreamErrorSender = (res: Response, e: unknown) => void;

function writeResult<N extends MessageName>(res: Response, type: N, msg: Outgoing<N>): boolean {
  return res.write(JSON.stringify({ result: messageToJson(type, msg) }) + '\n');
}

/** Serve one streaming gateway call. */
export function serveGatewayStream(path: GatewayStreamPath, body: unknown, token: string | undefined, req: Request, res: Response, server: StreamCore, api: V3Api, fail: StreamErrorSender): void {
  // A learner serves no stream but the snapshot (as the gRPC streams, streams.ts).
  if (server.isLearner() && path !== '/v3/maintenance/snapshot') {
    fail(res, Errors.notSupportedForLearner());
    return;
  }
  /** The request as its message type decodes it; undefined (the error answered) when the body does not fit. */
  const decode = <N extends MessageName>(name: N): Messages[N] | undefined => {
    try {
      return jsonToMessage(name, body);
    } catch (e) {
      fail(res, e);
      return undefined;
    }
  };
  const start = () => res.status(200).type('application/json');
  switch (path) {
    case '/v3/watch': {
      const route = GATEWAY_STREAMS[path];
      const msg = decode(route.request);
      if (!msg) return;
      const r = msg.create_request;
      const key = r?.key ?? Buffer.alloc(0);
      const end = r?.range_end ?? Buffer.alloc(0);
      try {
        api.gate.requireKeys({ token }, key, end, false);
      } catch (e) {
        fail(res, e);
        return;
      }
      start();
      writeResult(res, route.response, { header: api.header(), created: true });
      const filters = (r?.filters ?? []).map((f) => (f === 'NOPUT' ? 'noput' : 'nodelete') as 'noput' | 'nodelete');
      const w = server.kv.watchable.watch(key, end.length > 0 ? end : undefined, Number(r?.start_revision ?? 0), { prevKv: !!r?.prev_kv, filters }, (wr: WatchResponse) => {
        if (res.writableNeedDrain) return false;
        if (wr.compactRevision) {
          writeResult(res, route.response, { header: api.header(wr.revision), canceled: true, compact_revision: wr.compactRevision });
          res.end();
          return true;
        }
        writeResult(res, route.response, {
          header: api.header(wr.revision),
          events: wr.events.map(eventToPb),
        });
        return true;
      });
      req.on('close', () => w.cancel());
      return;
    }
    case '/v3/lease/keepalive': {
      const route = GATEWAY_STREAMS[path];
      const msg = decode(route.request);
      if (!msg) return;
      const id = BigInt(msg.ID || 0);
      server.renewLease(id).then(
        (ttl) => {
          start();
          writeResult(res, route.response, { header: api.header(), ID: id.toString(), TTL: ttl });
          res.end();
        },
        (e) => fail(res, e),
      );
      return;
    }
    case '/v3/election/observe': {
      const route = GATEWAY_STREAMS[path];
      const msg = decode(route.request);
      if (!msg) return;
      const ac = new AbortController();
      res.on('close', () => ac.abort());
      let started = false;
      const write = (m: Outgoing<typeof route.response>) => {
        if (!started) {
          started = true;
          start();
        }
        if (!writeResult(res, route.response, m)) return new Promise<void>((resolve) => res.once('drain', () => resolve()));
      };
      api.concurrency.observe(msg.name ?? Buffer.alloc(0), write, { token, signal: ac.signal }).then(
        () => res.end(),
        (e) => {
          if (ac.signal.aborted) return;
          if (!started) fail(res, e);
          else res.end();
        },
      );
      return;
    }
    case '/v3/maintenance/snapshot': {
      const route = GATEWAY_STREAMS[path];
      if (!decode(route.request)) return;
      try {
        api.gate.requireAdmin({ token });
      } catch (e) {
        fail(res, e);
        return;
      }
      start();
      streamSnapshot(server, api, (m) => {
        if (!writeResult(res, route.response, m)) return new Promise<void>((resolve) => res.once('drain', () => resolve()));
      }).then(
        () => res.end(),
        (e) => {
          server.logger.warn('snapshot over the gateway failed', { error: (e as Error).message });
          res.destroy();
        },
      );
      return;
    }
  }
}
