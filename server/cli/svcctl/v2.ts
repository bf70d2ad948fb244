// The v2 command set (SVCCTL_API=2): set, get, rm, mk, mkdir, ls, update against the v2 keys HTTP API
// (/v2/keys on a member's client URL; the server serves it with --enable-v2=true). Output as the
// reference's v2 client prints it: the value for set/get/mk/update, "PrevNode.Value: <v>" for rm, keys for ls.
import http from 'node:http';
import https from 'node:https';
import type { Io } from './context.js';
import { CliError } from './errors.js';
import { parseGoDuration } from './format.js';

/** The v2 client's exit codes. */
const V2Exit = { BadArgs: 1, BadConnection: 2, ServerError: 4 } as const;

interface V2Node {
  key?: string;
  value?: string;
  dir?: boolean;
  nodes?: V2Node[];
}

interface V2Response {
  action: string;
  node: V2Node;
  prevNode?: V2Node;
}

interface V2Flags {
  endpoints: string[];
  output: string;
  timeoutMs: number;
  bools: Set<string>;
  values: Map<string, string>;
  positional: string[];
}

const V2_VALUE_FLAGS = new Set(['endpoints', 'endpoint', 'peers', 'C', 'output', 'o', 'timeout', 'total-timeout', 'ttl', 'swap-with-value', 'swap-with-index', 'cert-file', 'key-file', 'ca-file', 'username', 'u', 'discovery-srv']);

function parseV2(argv: string[], env: NodeJS.ProcessEnv): V2Flags {
  const values = new Map<string, string>();
  const bools = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    const m = /^--?([^=]+)(?:=(.*))?$/.exec(a);
    if (!m || a === '-') {
      positional.push(a);
      continue;
    }
    const name = m[1];
    if (V2_VALUE_FLAGS.has(name)) values.set(name, m[2] ?? argv[++i] ?? '');
    else bools.add(name);
  }
  const eps = values.get('endpoints') ?? values.get('endpoint') ?? values.get('peers') ?? values.get('C') ?? env.SVCCTL_ENDPOINTS ?? env.SVCCTL_ENDPOINT ?? env.SVCCTL_PEERS ?? 'http://127.0.0.1:2379,http://127.0.0.1:4001';
  return {
    endpoints: eps.split(',').map((e) => e.trim()).filter((e) => e).map((e) => (/^https?:\/\//.test(e) ? e.replace(/\/+$/, '') : `http://${e}`)),
    output: values.get('output') ?? values.get('o') ?? 'simple',
    timeoutMs: parseGoDuration(values.get('total-timeout') ?? env.SVCCTL_TOTAL_TIMEOUT ?? '5s'),
    bools,
    values,
    positional,
  };
}

interface HttpResult {
  status: number;
  body: string;
}

function request(method: string, url: string, form: Record<string, string> | undefined, timeoutMs: number): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, {
      method,
      timeout: timeoutMs,
      headers: body ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } : {},
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', reject);
    req.end(body);
  });
}

/** One v2 call, tried on each endpoint in turn while they cannot be reached. */
async function call(f: V2Flags, method: string, key: string, query: Record<string, string>, form?: Record<string, string>): Promise<V2Response> {
  const path = `/v2/keys${key.startsWith('/') ? '' : '/'}${key.split('/').map(encodeURIComponent).join('/')}`;
  const qs = new URLSearchParams(query).toString();
  const errors: string[] = [];
  for (const ep of f.endpoints) {
    let res: HttpResult;
    try {
      res = await request(method, `${ep}${path}${qs ? `?${qs}` : ''}`, form, f.timeoutMs);
    } catch (e) {
      errors.push(`error #${errors.length}: ${(e as Error).message}`);
      continue;
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      errors.push(`error #${errors.length}: unexpected answer ${res.status} from ${ep}`);
      continue;
    }
    if (typeof parsed.errorCode === 'number') {
      throw new CliError(`${parsed.errorCode}: ${String(parsed.message)} (${String(parsed.cause ?? '')}) [${String(parsed.index ?? 0)}]`, V2Exit.ServerError, `Error:  ${parsed.errorCode}: ${String(parsed.message)} (${String(parsed.cause ?? '')}) [${String(parsed.index ?? 0)}]\n`);
    }
    return parsed as unknown as V2Response;
  }
  const msg = `client: svc cluster is unavailable or misconfigured; ${errors.join('\n; ')}`;
  throw new CliError(msg, V2Exit.ServerError, `Error:  ${msg}\n`);
}

function printNode(io: Io, f: V2Flags, r: V2Response): void {
  if (f.output === 'json') return io.out(`${JSON.stringify(r)}\n`);
  if (f.output === 'extended') {
    io.out(`Key: ${r.node.key}\n`);
    const n = r.node as V2Node & { createdIndex?: number; modifiedIndex?: number; ttl?: number };
    io.out(`Created-Index: ${n.createdIndex}\nModified-Index: ${n.modifiedIndex}\n`);
    if (n.ttl) io.out(`TTL: ${n.ttl}\n`);
    io.out(`\n${n.value ?? ''}\n`);
    return;
  }
  if (r.action !== 'delete') io.out(`${r.node.value ?? ''}\n`);
  else io.out(`PrevNode.Value: ${r.prevNode?.value ?? ''}\n`);
}

function need(f: V2Flags, n: number, usage: string): string[] {
  const args = f.positional.slice(1);
  if (args.length < n) throw new CliError(usage, V2Exit.BadArgs, `Error:  ${usage}\n`);
  return args;
}

function ttl(f: V2Flags): Record<string, string> {
  const t = f.values.get('ttl');
  return t && t !== '0' ? { ttl: t } : {};
}

/** The v2 command set; returns the exit code. */
export async function runV2(argv: string[], env: NodeJS.ProcessEnv, io: Io, version: string): Promise<number> {
  const f = parseV2(argv, env);
  const cmd = f.positional[0];
  if (f.bools.has('version') || f.bools.has('v') || cmd === 'version') {
    io.out(`svcctl version: ${version}\nAPI version: 2\n`);
    return 0;
  }
  try {
    switch (cmd) {
      case 'set': {
        const [k, v] = need(f, 2, 'value required');
        printNode(io, f, await call(f, 'PUT', k, {}, { value: v, ...ttl(f) }));
        return 0;
      }
      case 'mk': {
        const [k, v] = need(f, 2, 'value required');
        printNode(io, f, await call(f, 'PUT', k, { prevExist: 'false' }, { value: v, ...ttl(f) }));
        return 0;
      }
      case 'update': {
        const [k, v] = need(f, 2, 'value required');
        printNode(io, f, await call(f, 'PUT', k, { prevExist: 'true' }, { value: v, ...ttl(f) }));
        return 0;
      }
      case 'mkdir': {
        const [k] = need(f, 1, 'key required');
        const r = await call(f, 'PUT', k, { prevExist: 'false' }, { dir: 'true', ...ttl(f) });
        if (f.output !== 'simple') printNode(io, f, r);
        return 0;
      }
      case 'get': {
        const [k] = need(f, 1, 'key required');
        const r = await call(f, 'GET', k, { quorum: f.bools.has('quorum') ? 'true' : 'false' });
        if (r.node.dir) {
          io.err(`${r.node.key}: is a directory\n`);
          return 1;
        }
        printNode(io, f, r);
        return 0;
      }
      case 'rm': {
        const [k] = need(f, 1, 'key required');
        const q: Record<string, string> = {};
        if (f.bools.has('dir')) q.dir = 'true';
        if (f.bools.has('recursive') || f.bools.has('r')) q.recursive = 'true';
        const r = await call(f, 'DELETE', k, q);
        if (!r.node.dir || f.output !== 'simple') printNode(io, f, r);
        return 0;
      }
      case 'ls': {
        const key = f.positional[1] ?? '/';
        const recursive = f.bools.has('recursive') || f.bools.has('r');
        const r = await call(f, 'GET', key, { sorted: f.bools.has('sort') ? 'true' : 'false', recursive: recursive ? 'true' : 'false' });
        if (f.output === 'json') return io.out(`${JSON.stringify(r)}\n`), 0;
        const slash = f.bools.has('p');
        const walk = (n: V2Node, top: boolean): void => {
          if (!top) io.out(`${n.key}${slash && n.dir ? '/' : ''}\n`);
          if (n.dir && (top || recursive)) for (const c of n.nodes ?? []) walk(c, false);
        };
        walk(r.node, r.node.dir === true);
        return 0;
      }
      default:
        io.err(`No help topic for '${cmd ?? ''}'\n`);
        return 3;
    }
  } catch (e) {
    if (e instanceof CliError) {
      io.err(e.raw ?? `Error:  ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}
