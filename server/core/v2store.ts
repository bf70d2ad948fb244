// The legacy v2 keys store: a small hierarchical store kept beside the v3 data (not in the v3 db), changed only
// by applying committed requests and saved inside consensus snapshots. Only the subset of the v2 API that svc
// serves: get (optionally recursive), set (value or directory), delete (optionally recursive/dir).

export interface V2Node {
  key: string;
  value?: string;
  dir?: boolean;
  nodes?: V2Node[];
  createdIndex: number;
  modifiedIndex: number;
}

export interface V2Event {
  action: 'get' | 'set' | 'create' | 'update' | 'delete';
  node: V2Node;
  prevNode?: V2Node;
}

export class V2Error extends Error {
  constructor(readonly errorCode: number, message: string, override readonly cause: string, readonly index: number, readonly httpStatus: number) {
    super(message);
    this.name = 'V2Error';
  }
  toJSON() {
    return { errorCode: this.errorCode, message: this.message, cause: this.cause, index: this.index };
  }
}

interface StoredNode {
  value?: string;
  children?: Map<string, StoredNode>;
  createdIndex: number;
  modifiedIndex: number;
}

export interface V2Request {
  method: 'PUT' | 'DELETE';
  path: string;
  value?: string;
  dir?: boolean;
  recursive?: boolean;
  prevExist?: boolean;
}

function split(path: string): string[] {
  return path.split('/').filter((p) => p !== '');
}

export class V2Store {
  private root: StoredNode = { children: new Map(), createdIndex: 0, modifiedIndex: 0 };
  /** Bumped by every change, like the reference's store index (X-Etcd-Index). */
  index = 0;

  /** Whether any v2 key or directory was ever left here (membership lives elsewhere in svc). */
  hasContent(): boolean {
    return this.root.children!.size > 0;
  }

  get(path: string, recursive: boolean): V2Event {
    const parts = split(path);
    const n = this.find(parts);
    if (!n) throw new V2Error(100, 'Key not found', '/' + parts.join('/'), this.index, 404);
    return { action: 'get', node: this.render('/' + parts.join('/'), n, recursive, true) };
  }

  apply(req: V2Request): V2Event {
    const parts = split(req.path);
    const key = '/' + parts.join('/');
    if (parts.length === 0) throw new V2Error(107, 'Root is read only', '/', this.index, 403);
    if (parts[0] === '0') throw new V2Error(107, 'Root is read only', key, this.index, 403);
    if (req.method === 'PUT') return this.set(parts, key, req);
    return this.del(parts, key, req);
  }

  private set(parts: string[], key: string, req: V2Request): V2Event {
    let parent = this.root;
    for (const p of parts.slice(0, -1)) {
      let c = parent.children!.get(p);
      if (!c) {
        c = { children: new Map(), createdIndex: this.index + 1, modifiedIndex: this.index + 1 };
        parent.children!.set(p, c);
      } else if (!c.children) {
        throw new V2Error(104, 'Not a directory', '/' + parts.slice(0, parts.indexOf(p) + 1).join('/'), this.index, 400);
      }
      parent = c;
    }
    const name = parts[parts.length - 1];
    const prev = parent.children!.get(name);
    if (req.prevExist === false && prev) throw new V2Error(105, 'Key already exists', key, this.index, 412);
    if (req.prevExist === true && !prev) throw new V2Error(100, 'Key not found', key, this.index, 404);
    if (prev?.children && !req.dir) throw new V2Error(102, 'Not a file', key, this.index, 403);
    if (prev?.children && req.dir) throw new V2Error(102, 'Not a file', key, this.index, 403);
    this.index++;
    const node: StoredNode = req.dir
      ? { children: new Map(), createdIndex: this.index, modifiedIndex: this.index }
      : { value: req.value ?? '', createdIndex: prev && req.prevExist ? prev.createdIndex : this.index, modifiedIndex: this.index };
    parent.children!.set(name, node);
    const action = req.prevExist === true ? 'update' : req.prevExist === false ? 'create' : 'set';
    const ev: V2Event = { action, node: this.render(key, node, false, false) };
    if (prev) ev.prevNode = this.render(key, prev, false, false);
    return ev;
  }

  private del(parts: string[], key: string, req: V2Request): V2Event {
    const parent = this.find(parts.slice(0, -1));
    const name = parts[parts.length - 1];
    const n = parent?.children?.get(name);
    if (!n) throw new V2Error(100, 'Key not found', key, this.index, 404);
    if (n.children && !req.dir && !req.recursive) throw new V2Error(102, 'Not a file', key, this.index, 403);
    if (n.children && n.children.size > 0 && !req.recursive) throw new V2Error(108, 'Directory not empty', key, this.index, 403);
    this.index++;
    parent!.children!.delete(name);
    const deleted: V2Node = { key, createdIndex: n.createdIndex, modifiedIndex: this.index };
    if (n.children) deleted.dir = true;
    return { action: 'delete', node: deleted, prevNode: this.render(key, n, false, false) };
  }

  private find(parts: string[]): StoredNode | undefined {
    let n: StoredNode | undefined = this.root;
    for (const p of parts) {
      n = n?.children?.get(p);
      if (!n) return undefined;
    }
    return n;
  }

  private render(key: string, n: StoredNode, recursive: boolean, listChildren: boolean): V2Node {
    const out: V2Node = { key, createdIndex: n.createdIndex, modifiedIndex: n.modifiedIndex };
    if (n.children) {
      out.dir = true;
      if (listChildren) {
        out.nodes = [...n.children.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, c]) => this.render((key === '/' ? '' : key) + '/' + name, c, recursive, recursive));
      }
    } else {
      out.value = n.value;
    }
    return out;
  }

  /** Bytes of data held (keys and values), for the upgrade's v2 data-size estimate. */
  dataSize(): number {
    let size = 0;
    const walk = (n: StoredNode) => {
      for (const [k, c] of n.children ?? []) {
        size += k.length + (c.value?.length ?? 0);
        walk(c);
      }
    };
    walk(this.root);
    return size;
  }

  toJSON(): unknown {
    const enc = (n: StoredNode): unknown => ({
      v: n.value, c: n.createdIndex, m: n.modifiedIndex,
      k: n.children ? Object.fromEntries([...n.children].map(([k, c]) => [k, enc(c)])) : undefined,
    });
    return { index: this.index, root: enc(this.root) };
  }

  static fromJSON(j: { index: number; root: unknown }): V2Store {
    type Enc = { v?: string; c: number; m: number; k?: Record<string, Enc> };
    const dec = (e: Enc): StoredNode => ({
      value: e.v, createdIndex: e.c, modifiedIndex: e.m,
      children: e.k ? new Map(Object.entries(e.k).map(([k, c]) => [k, dec(c)])) : undefined,
    });
    const s = new V2Store();
    s.index = j.index;
    s.root = dec(j.root as Enc);
    if (!s.root.children) s.root.children = new Map();
    return s;
  }
}
