// A small PromQL parser, enough to lint the chart's alert rules and dashboard: selectors with label matchers,
// range vectors, offsets, function calls, aggregations with by/without (before or after the argument), binary
// operators with bool/on/ignoring/group_left/group_right, parentheses, unary minus, number and string literals.
// It throws on anything malformed and returns what the expression reads: metric names and label names.

/** What an expression refers to. */
export interface PromqlRefs {
  metrics: string[];
  /** Label names in matchers, by/without and on/ignoring/group_* lists. */
  labels: string[];
  functions: string[];
}

const FUNCTIONS = new Set([
  'abs', 'absent', 'absent_over_time', 'avg_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min',
  'count_over_time', 'day_of_month', 'day_of_week', 'delta', 'deriv', 'exp', 'floor', 'histogram_quantile', 'holt_winters',
  'hour', 'idelta', 'increase', 'irate', 'label_join', 'label_replace', 'last_over_time', 'ln', 'log10', 'log2',
  'max_over_time', 'min_over_time', 'minute', 'month', 'predict_linear', 'quantile_over_time', 'rate', 'resets', 'round',
  'scalar', 'sgn', 'sort', 'sort_desc', 'sqrt', 'stddev_over_time', 'sum_over_time', 'time', 'timestamp', 'vector', 'year',
]);
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile']);
const BINARY = [['or'], ['and', 'unless'], ['==', '!=', '<=', '<', '>=', '>'], ['+', '-'], ['*', '/', '%', 'atan2'], ['^']];
const COMPARISON = new Set(['==', '!=', '<=', '<', '>=', '>']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless', 'atan2']);

type Tok = { kind: 'id' | 'num' | 'str' | 'dur' | 'op'; text: string; pos: number };

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '#') { while (i < src.length && src[i] !== '\n') i++; continue; }
    const rest = src.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\d+(ms|[smhdwy])(\d+(ms|[smhdwy]))*(?![A-Za-z0-9_])/.exec(rest))) {
      out.push({ kind: 'dur', text: m[0], pos: i });
    } else if ((m = /^(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?/i.exec(rest)) || (m = /^0x[0-9a-f]+/i.exec(rest))) {
      out.push({ kind: 'num', text: m[0], pos: i });
    } else if ((m = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(rest))) {
      out.push({ kind: 'id', text: m[0], pos: i });
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < src.length && src[j] !== c) j += src[j] === '\\' && c !== '`' ? 2 : 1;
      if (j >= src.length) throw new Error(`unterminated string at ${i}`);
      out.push({ kind: 'str', text: src.slice(i + 1, j), pos: i });
      m = [src.slice(i, j + 1)] as unknown as RegExpExecArray;
    } else if ((m = /^(==|!=|=~|!~|<=|>=|[-+*/%^<>=(){}[\],:@])/.exec(rest))) {
      out.push({ kind: 'op', text: m[0], pos: i });
    } else {
      throw new Error(`unexpected character ${JSON.stringify(c)} at ${i}`);
    }
    i += m[0].length;
  }
  return out;
}

type Type = 'vector' | 'matrix' | 'scalar' | 'string';

class Parser {
  private i = 0;
  readonly refs: PromqlRefs = { metrics: [], labels: [], functions: [] };
  constructor(private readonly toks: Tok[], private readonly src: string) {}

  private peek(k = 0): Tok | undefined { return this.toks[this.i + k]; }
  private fail(msg: string): never {
    const t = this.peek();
    throw new Error(`${msg} at ${t ? `${t.pos} (${JSON.stringify(t.text)})` : 'the end'} in ${JSON.stringify(this.src)}`);
  }
  private is(text: string): boolean { const t = this.peek(); return t !== undefined && (t.kind === 'op' || t.kind === 'id') && t.text === text; }
  private take(text: string): void { if (!this.is(text)) this.fail(`expected ${JSON.stringify(text)}`); this.i++; }

  parse(): Type {
    const t = this.expr(0);
    if (this.i < this.toks.length) this.fail('unexpected token');
    return t;
  }

  private expr(level: number): Type {
    if (level >= BINARY.length) return this.unary();
    let left = this.expr(level + 1);
    for (;;) {
      const t = this.peek();
      if (!t || !(t.kind === 'op' || t.kind === 'id') || !BINARY[level].includes(t.text)) return left;
      this.i++;
      const op = t.text;
      if (this.is('bool')) {
        if (!COMPARISON.has(op)) this.fail('bool only after a comparison');
        this.i++;
      }
      if (this.is('on') || this.is('ignoring')) {
        this.i++;
        this.labelList();
        if (this.is('group_left') || this.is('group_right')) {
          this.i++;
          if (this.is('(')) this.labelList();
        }
      }
      // ^ is right-associative
      const right = op === '^' ? this.expr(level) : this.expr(level + 1);
      if (left === 'matrix' || right === 'matrix' || left === 'string' || right === 'string') this.fail(`operator ${op} on a range vector or string`);
      if (['and', 'or', 'unless'].includes(op) && (left !== 'vector' || right !== 'vector')) this.fail(`${op} needs instant vectors on both sides`);
      left = left === 'scalar' && right === 'scalar' ? 'scalar' : 'vector';
    }
  }

  private unary(): Type {
    if (this.is('-') || this.is('+')) {
      this.i++;
      return this.unary();
    }
    return this.postfix(this.primary());
  }

  private postfix(t: Type): Type {
    let type = t;
    if (this.is('[')) {
      if (type !== 'vector') this.fail('a range needs an instant vector');
      this.i++;
      this.duration();
      if (this.is(':')) { // subquery
        this.i++;
        if (!this.is(']')) this.duration();
      }
      this.take(']');
      type = 'matrix';
    }
    if (this.is('offset')) {
      this.i++;
      if (this.is('-')) this.i++;
      this.duration();
    }
    return type;
  }

  private duration(): void {
    const t = this.peek();
    if (!t || t.kind !== 'dur') this.fail('expected a duration');
    this.i++;
  }

  private labelList(): void {
    this.take('(');
    while (!this.is(')')) {
      const t = this.peek();
      if (!t || t.kind !== 'id') this.fail('expected a label name');
      this.refs.labels.push(t.text);
      this.i++;
      if (!this.is(')')) this.take(',');
    }
    this.take(')');
  }

  private matchers(): void {
    this.take('{');
    while (!this.is('}')) {
      const name = this.peek();
      if (!name || name.kind !== 'id') this.fail('expected a label name');
      this.i++;
      const op = this.peek();
      if (!op || op.kind !== 'op' || !['=', '!=', '=~', '!~'].includes(op.text)) this.fail('expected a label matcher operator');
      this.i++;
      const v = this.peek();
      if (!v || v.kind !== 'str') this.fail('expected a string');
      if (op.text.endsWith('~')) {
        try { new RegExp(`^(?:${v.text})$`); } catch { this.fail(`bad regular expression ${JSON.stringify(v.text)}`); }
      }
      this.i++;
      if (name.text !== '__name__') this.refs.labels.push(name.text);
      else this.refs.metrics.push(v.text);
      if (!this.is('}')) this.take(',');
    }
    this.take('}');
  }

  private args(): Type[] {
    this.take('(');
    const types: Type[] = [];
    while (!this.is(')')) {
      types.push(this.expr(0));
      if (!this.is(')')) this.take(',');
    }
    this.take(')');
    return types;
  }

  private primary(): Type {
    const t = this.peek();
    if (!t) this.fail('unexpected end');
    if (t.kind === 'num') { this.i++; return 'scalar'; }
    if (t.kind === 'str') { this.i++; return 'string'; }
    if (t.kind === 'op' && t.text === '(') {
      this.i++;
      const inner = this.expr(0);
      this.take(')');
      return inner;
    }
    if (t.kind === 'op' && t.text === '{') {
      this.matchers();
      return 'vector';
    }
    if (t.kind !== 'id' || KEYWORDS.has(t.text)) this.fail('unexpected token');
    this.i++;
    if (AGGREGATIONS.has(t.text) && (this.is('(') || this.is('by') || this.is('without'))) {
      this.refs.functions.push(t.text);
      let grouped = false;
      if (this.is('by') || this.is('without')) { this.i++; this.labelList(); grouped = true; }
      const args = this.args();
      const want = ['topk', 'bottomk', 'quantile', 'count_values'].includes(t.text) ? 2 : 1;
      if (args.length !== want || args.at(-1) !== 'vector') this.fail(`${t.text} takes ${want === 2 ? 'a parameter and ' : ''}an instant vector`);
      if (!grouped && (this.is('by') || this.is('without'))) { this.i++; this.labelList(); }
      return 'vector';
    }
    if (this.is('(')) {
      if (!FUNCTIONS.has(t.text)) this.fail(`unknown function ${t.text}`);
      this.refs.functions.push(t.text);
      const args = this.args();
      if (['rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'changes', 'resets'].includes(t.text) || t.text.endsWith('_over_time')) {
        if (args.at(-1) !== 'matrix') this.fail(`${t.text} takes a range vector`);
      } else if (args.includes('matrix')) {
        this.fail(`${t.text} does not take a range vector`);
      }
      if (t.text === 'histogram_quantile' && (args.length !== 2 || args[0] !== 'scalar' || args[1] !== 'vector')) this.fail('histogram_quantile(φ scalar, instant vector)');
      return ['scalar', 'time'].includes(t.text) ? 'scalar' : 'vector';
    }
    // a metric name, with optional matchers
    if (FUNCTIONS.has(t.text) || AGGREGATIONS.has(t.text)) this.fail(`${t.text} needs parentheses`);
    this.refs.metrics.push(t.text);
    if (this.is('{')) this.matchers();
    return 'vector';
  }
}

/** Parses one PromQL expression; throws on a syntax or type error. */
export function parsePromql(src: string): PromqlRefs {
  const p = new Parser(tokenize(src), src);
  const type = p.parse();
  if (type === 'matrix') throw new Error(`a range vector cannot be the result of an expression: ${src}`);
  return p.refs;
}
