import type { ParamValue } from '../strategy/api.ts';

/**
 * A constraint over a sweep's params, e.g. `fast < slow`, `slow - fast >= 10 and sl * 2 <= tp`.
 *
 * Grammar (no eval, no property access, no calls; numbers, true/false and 'strings' are literals):
 *   or   := and ( ('or' | '||') and )*
 *   and  := not ( ('and' | '&&') not )*
 *   not  := ('not' | '!') not | cmp
 *   cmp  := sum ( ('<' | '<=' | '>' | '>=' | '==' | '!=') sum )?
 *   sum  := prod ( ('+' | '-') prod )*
 *   prod := unary ( ('*' | '/' | '%') unary )*
 *   unary:= '-' unary | atom
 *   atom := number | name | 'string' | true | false | '(' or ')'
 */
export class ConstraintError extends Error {
  readonly code = 'CONSTRAINT' as const;
  constructor(
    readonly expression: string,
    readonly column: number,
    message: string,
  ) {
    super(`--constraint '${expression}': ${message} (at column ${column + 1})`);
    this.name = 'ConstraintError';
  }
}

type Node =
  | { t: 'lit'; v: ParamValue }
  | { t: 'var'; name: string }
  | { t: 'neg'; a: Node }
  | { t: 'not'; a: Node }
  | { t: 'bin'; op: string; a: Node; b: Node };

interface Token {
  readonly kind: 'num' | 'str' | 'name' | 'op' | 'end';
  readonly text: string;
  readonly at: number;
}

const OPS = ['<=', '>=', '==', '!=', '&&', '||', '<', '>', '+', '-', '*', '/', '%', '(', ')', '!'];

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
      continue;
    }
    const num = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) {
      out.push({ kind: 'num', text: num[0], at: i });
      i += num[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (name) {
      out.push({ kind: 'name', text: name[0], at: i });
      i += name[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      const end = src.indexOf(c, i + 1);
      if (end < 0) throw new ConstraintError(src, i, 'unterminated string');
      out.push({ kind: 'str', text: src.slice(i + 1, end), at: i });
      i = end + 1;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op)
      throw new ConstraintError(
        src,
        i,
        `unexpected '${c}' (use names, numbers, + - * / %, < <= > >= == !=, and, or, not, parentheses)`,
      );
    out.push({ kind: 'op', text: op === '&&' ? 'and' : op === '||' ? 'or' : op === '!' ? 'not' : op, at: i });
    i += op.length;
  }
  out.push({ kind: 'end', text: '', at: src.length });
  return out;
}

/** A parsed constraint: `test(params)` is true when the point is allowed. */
export interface Constraint {
  readonly source: string;
  /** The param names it reads. */
  readonly names: readonly string[];
  test(params: Readonly<Record<string, ParamValue>>): boolean;
}

/**
 * Parses a constraint; every name must be one of `known` (the sweep's params and the strategy's
 * fixed params), so a typo is an error before any trial runs.
 */
export function parseConstraint(src: string, known: readonly string[]): Constraint {
  const toks = tokenize(src);
  let p = 0;
  const peek = (): Token => toks[p]!;
  const isOp = (...ops: string[]): boolean => {
    const t = peek();
    return (t.kind === 'op' || t.kind === 'name') && ops.includes(t.text);
  };
  const names = new Set<string>();
  const orExpr = (): Node => {
    let a = andExpr();
    while (isOp('or')) {
      p++;
      a = { t: 'bin', op: 'or', a, b: andExpr() };
    }
    return a;
  };
  const andExpr = (): Node => {
    let a = notExpr();
    while (isOp('and')) {
      p++;
      a = { t: 'bin', op: 'and', a, b: notExpr() };
    }
    return a;
  };
  const notExpr = (): Node => {
    if (isOp('not')) {
      p++;
      return { t: 'not', a: notExpr() };
    }
    return cmp();
  };
  const cmp = (): Node => {
    const a = sum();
    if (isOp('<', '<=', '>', '>=', '==', '!=')) {
      const op = toks[p++]!.text;
      const b = sum();
      if (isOp('<', '<=', '>', '>=', '==', '!='))
        throw new ConstraintError(src, peek().at, 'comparisons do not chain: write `a < b and b < c`');
      return { t: 'bin', op, a, b };
    }
    return a;
  };
  const sum = (): Node => {
    let a = prod();
    while (isOp('+', '-')) {
      const op = toks[p++]!.text;
      a = { t: 'bin', op, a, b: prod() };
    }
    return a;
  };
  const prod = (): Node => {
    let a = unary();
    while (isOp('*', '/', '%')) {
      const op = toks[p++]!.text;
      a = { t: 'bin', op, a, b: unary() };
    }
    return a;
  };
  const unary = (): Node => {
    if (isOp('-')) {
      p++;
      return { t: 'neg', a: unary() };
    }
    return atom();
  };
  const atom = (): Node => {
    const t = peek();
    if (t.kind === 'num') {
      p++;
      return { t: 'lit', v: Number(t.text) };
    }
    if (t.kind === 'str') {
      p++;
      return { t: 'lit', v: t.text };
    }
    if (t.kind === 'name' && !['and', 'or', 'not'].includes(t.text)) {
      p++;
      if (t.text === 'true' || t.text === 'false') return { t: 'lit', v: t.text === 'true' };
      if (!known.includes(t.text))
        throw new ConstraintError(src, t.at, `unknown name '${t.text}'; the params are: ${known.join(', ')}`);
      names.add(t.text);
      return { t: 'var', name: t.text };
    }
    if (t.kind === 'op' && t.text === '(') {
      p++;
      const e = orExpr();
      if (!isOp(')')) throw new ConstraintError(src, peek().at, "missing ')'");
      p++;
      return e;
    }
    throw new ConstraintError(
      src,
      t.at,
      t.kind === 'end' ? 'the expression ends too early' : `unexpected '${t.text}'`,
    );
  };
  const tree = orExpr();
  if (peek().kind !== 'end')
    throw new ConstraintError(src, peek().at, `unexpected '${peek().text}' after a complete expression`);
  return {
    source: src,
    names: [...names],
    test: (params) => truthy(evaluate(tree, params)),
  };
}

const truthy = (v: ParamValue): boolean =>
  typeof v === 'number' ? v !== 0 && !Number.isNaN(v) : typeof v === 'string' ? v !== '' : v;
const num = (v: ParamValue): number =>
  typeof v === 'number' ? v : typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);

function evaluate(n: Node, env: Readonly<Record<string, ParamValue>>): ParamValue {
  switch (n.t) {
    case 'lit':
      return n.v;
    case 'var':
      return env[n.name]!;
    case 'neg':
      return -num(evaluate(n.a, env));
    case 'not':
      return !truthy(evaluate(n.a, env));
    case 'bin': {
      if (n.op === 'and') return truthy(evaluate(n.a, env)) && truthy(evaluate(n.b, env));
      if (n.op === 'or') return truthy(evaluate(n.a, env)) || truthy(evaluate(n.b, env));
      const a = evaluate(n.a, env);
      const b = evaluate(n.b, env);
      switch (n.op) {
        case '==':
          return a === b;
        case '!=':
          return a !== b;
        case '<':
          return num(a) < num(b);
        case '<=':
          return num(a) <= num(b);
        case '>':
          return num(a) > num(b);
        case '>=':
          return num(a) >= num(b);
        case '+':
          return num(a) + num(b);
        case '-':
          return num(a) - num(b);
        case '*':
          return num(a) * num(b);
        case '/':
          return num(a) / num(b);
        case '%':
          return num(a) % num(b);
      }
      throw new Error(`constraint: unknown operator ${n.op}`);
    }
  }
}
