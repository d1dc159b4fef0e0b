import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { OANDA } from '../shared.ts';

/**
 * A response validator for OANDA's v20 OpenAPI definitions (Swagger 2.0, API 3.0.25), written for the
 * contract tests: it says whether a body the sandbox serves is what the definitions allow, and where not.
 *
 * What it checks, recursively: JSON types (string, number, integer, boolean, object, array), `$ref`s,
 * enums, `required` (the v20 file declares none, but it is honoured), the prose `format`s that matter
 * (decimal strings, IDs, times, account IDs, instrument names, currencies), and properties the schema
 * does not declare (reported unless turned off).
 *
 * Gotchas of the v20 file, handled here:
 * - `Transaction`, `Order` and `OrderRequest` are bases with the common fields only; the `type` field
 *   picks the concrete definition (`ORDER_FILL` → `OrderFillTransaction`). The mapping is read from the
 *   definitions themselves (each says `Always set to "X"` / `Must be set to "X"` on its `type`).
 * - `format` is prose, not JSON Schema; it is recognised by its wording.
 * - Streams are modelled as `{transaction, heartbeat}` objects but are lines of top-level objects:
 *   use {@link OpenApiValidator.validateStreamLine}.
 */

/** One thing the definitions do not allow, located by a JSON path into the body and the schema that said so. */
export interface Violation {
  /** JSON path into the validated value, e.g. `$.orderFillTransaction.tradeOpened.units`. */
  path: string;
  /** The schema that was applied there, e.g. `TradeOpen.units` or `createOrder 201`. */
  schema: string;
  message: string;
}

/** Options of a validation. */
export interface ValidateOptions {
  /** Report properties a schema does not declare (default true). */
  unknownProperties?: boolean;
  /**
   * Properties accepted on top of a definition's own, per definition name (e.g. fields OANDA added after
   * 3.0.25). Say why in the caller: every entry widens the contract.
   */
  extraProperties?: Readonly<Record<string, readonly string[]>>;
}

/** The operation a method and concrete path resolve to. */
export interface Operation {
  method: string;
  /** The path template of the definitions, without the base path, e.g. `/accounts/{accountID}/orders`. */
  template: string;
  operationId: string;
  params: Record<string, string>;
}

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  required?: string[];
  format?: string;
  description?: string;
  schema?: Schema;
};

type Spec = {
  basePath?: string;
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, Schema> }>>;
  definitions: Record<string, Schema>;
  responses?: Record<string, Schema>;
};

/** The definitions file used by default: the full v20 spec in `../shared`. */
export const V20_OPENAPI = resolve(OANDA, 'v20-openapi/json/v20.json');

/** Polymorphic bases: definitions whose concrete kind is chosen by the `type` field. */
const FAMILIES = ['OrderRequest', 'Transaction', 'Order'] as const;

type FormatCheck = { name: string; test: (s: string) => boolean };

const DECIMAL = /^-?\d+(\.\d+)?$/;
const ID = /^\d+$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const UNIX_TIME = /^\d+(\.\d{1,9})?$/;
const ACCOUNT_ID = /^\d+-\d+-\d+-\d+$/;
const INSTRUMENT = /^[A-Z0-9]+_[A-Z0-9]+$/;
const CURRENCY = /^[A-Z]{3}$/;

/** Maps the prose `format` of the v20 file to a check; formats that do not constrain (specifiers) give none. */
function formatCheck(format: string): FormatCheck | undefined {
  if (
    format.startsWith('Either') ||
    format.startsWith('A user specifier') ||
    format.startsWith("The string 'Bearer")
  )
    return undefined;
  if (format.includes('TransactionID')) return { name: 'a TransactionID (digits)', test: (s) => ID.test(s) };
  if (format.includes('TradeID')) return { name: 'a TradeID (digits)', test: (s) => ID.test(s) };
  if (format.includes('OrderID')) return { name: 'an OrderID (digits)', test: (s) => ID.test(s) };
  if (format.includes('RFC 3339'))
    return {
      name: 'a DateTime (RFC 3339 or UNIX seconds)',
      test: (s) => RFC3339.test(s) || UNIX_TIME.test(s),
    };
  if (format.includes('decimal number'))
    return { name: 'a decimal number as a string', test: (s) => DECIMAL.test(s) };
  if (format.includes('{siteID}'))
    return { name: 'an AccountID (site-division-user-account)', test: (s) => ACCOUNT_ID.test(s) };
  if (format.includes('base currency and quote currency'))
    return { name: 'an InstrumentName (BASE_QUOTE)', test: (s) => INSTRUMENT.test(s) };
  if (format.includes('ISO 4217')) return { name: 'an ISO 4217 currency', test: (s) => CURRENCY.test(s) };
  return undefined;
}

function show(x: unknown): string {
  const s = JSON.stringify(x);
  if (s === undefined) return String(x);
  return s.length > 50 ? `${s.slice(0, 47)}...` : s;
}

function kindOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  return typeof x;
}

/** `$.a.b[0]`, quoting keys that are not identifiers. */
function child(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Validates v20 response bodies and stream lines against the OpenAPI definitions. Build it once per test
 * file with {@link OpenApiValidator.load} (it parses a 670 kB file) and reuse it.
 */
export class OpenApiValidator {
  private readonly routes: {
    method: string;
    template: string;
    operationId: string;
    re: RegExp;
    names: string[];
    literals: number;
  }[] = [];
  /** family base → type value → concrete definition name */
  private readonly families = new Map<string, Map<string, string>>();
  private readonly formats = new Map<string, FormatCheck | undefined>();

  private constructor(private readonly spec: Spec) {
    const base = spec.basePath ?? '';
    for (const [template, ops] of Object.entries(spec.paths)) {
      const names: string[] = [];
      const pattern = template
        .replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '{' || c === '}' ? c : `\\${c}`))
        .replace(/\{(\w+)\}/g, (_, n: string) => {
          names.push(n);
          return '([^/]+)';
        });
      const literals = template.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;
      for (const [method, op] of Object.entries(ops)) {
        this.routes.push({
          method: method.toUpperCase(),
          template,
          operationId: op.operationId ?? `${method} ${template}`,
          re: new RegExp(`^${base}${pattern}$`),
          names,
          literals,
        });
      }
    }
    // More literal segments first: `/transactions/idrange` before `/transactions/{transactionID}`.
    this.routes.sort((a, b) => b.literals - a.literals);
    for (const f of FAMILIES) this.families.set(f, new Map());
    for (const [name, def] of Object.entries(spec.definitions)) {
      const typeDesc = def.properties?.type?.description ?? '';
      const m = /(?:Always|Must be) set to \\?"([A-Z_]+)\\?"/.exec(typeDesc);
      if (!m?.[1]) continue;
      const family = FAMILIES.find((f) => name !== f && name.endsWith(f));
      if (family) this.families.get(family)?.set(m[1], name);
    }
  }

  /** Loads a Swagger 2.0 file (the full `v20.json` by default). */
  static load(file: string = V20_OPENAPI): OpenApiValidator {
    return new OpenApiValidator(JSON.parse(readFileSync(file, 'utf8')) as Spec);
  }

  /** The concrete definition a polymorphic base uses for a `type` value, e.g. (`Transaction`, `ORDER_FILL`) → `OrderFillTransaction`. */
  concreteDefinition(base: string, type: string): string | undefined {
    return this.families.get(base)?.get(type);
  }

  /** Finds the operation for a method and a concrete path (base path `/v3` included, query string allowed). */
  findOperation(method: string, path: string): Operation | undefined {
    const bare = path.split('?')[0] ?? path;
    const m = method.toUpperCase();
    for (const r of this.routes) {
      if (r.method !== m) continue;
      const hit = r.re.exec(bare);
      if (!hit) continue;
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => {
        params[n] = decodeURIComponent(hit[i + 1] ?? '');
      });
      return { method: m, template: r.template, operationId: r.operationId, params };
    }
    return undefined;
  }

  /**
   * Validates a response body for a method, concrete path and status. An operation or status the
   * definitions do not have is itself a violation (at `$`). Returns every violation, empty when valid.
   */
  validateResponse(
    method: string,
    path: string,
    status: number,
    body: unknown,
    opts: ValidateOptions = {},
  ): Violation[] {
    const op = this.findOperation(method, path);
    const where = `${method.toUpperCase()} ${path.split('?')[0]}`;
    if (!op) return [{ path: '$', schema: '(paths)', message: `no operation ${where} in the definitions` }];
    const responses = this.spec.paths[op.template]?.[op.method.toLowerCase()]?.responses ?? {};
    let response = responses[String(status)];
    if (!response) {
      return [
        {
          path: '$',
          schema: op.operationId,
          message: `status ${status} is not a response of ${op.operationId} (declared: ${Object.keys(responses).join(', ')})`,
        },
      ];
    }
    if (response.$ref) response = this.deref(response.$ref) ?? response;
    const out: Violation[] = [];
    if (response.schema) this.check(response.schema, body, '$', `${op.operationId} ${status}`, opts, out);
    return out;
  }

  /**
   * The response headers the definitions declare for a method, concrete path and status (e.g.
   * `RequestID`, `Location` on an order create, `Link` on pages), or undefined when there is no such
   * response. Declared does not mean always sent: `Link` only comes with more pages.
   */
  declaredHeaders(method: string, path: string, status: number): string[] | undefined {
    const op = this.findOperation(method, path);
    if (!op) return undefined;
    let response = this.spec.paths[op.template]?.[op.method.toLowerCase()]?.responses?.[String(status)];
    if (response?.$ref) response = this.deref(response.$ref);
    if (!response) return undefined;
    return Object.keys((response as { headers?: Record<string, unknown> }).headers ?? {});
  }

  /** Validates a value against a named definition, e.g. (`Transaction`, tx). Polymorphic bases dispatch on `type`. */
  validateDefinition(name: string, value: unknown, opts: ValidateOptions = {}, path = '$'): Violation[] {
    const out: Violation[] = [];
    this.check({ $ref: `#/definitions/${name}` }, value, path, name, opts, out);
    return out;
  }

  /**
   * Validates one stream line (raw text or parsed): a transaction stream line is a `Transaction` or a
   * `TransactionHeartbeat`, a pricing stream line a `ClientPrice` or a `PricingHeartbeat`.
   */
  validateStreamLine(
    stream: 'transaction' | 'pricing',
    line: unknown,
    opts: ValidateOptions = {},
  ): Violation[] {
    let value = line;
    if (typeof line === 'string') {
      try {
        value = JSON.parse(line);
      } catch {
        return [{ path: '$', schema: `${stream} stream line`, message: `not JSON: ${show(line)}` }];
      }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return [
        { path: '$', schema: `${stream} stream line`, message: `expected an object, found ${kindOf(value)}` },
      ];
    }
    const type = (value as { type?: unknown }).type;
    if (type === 'HEARTBEAT')
      return this.validateDefinition(
        stream === 'transaction' ? 'TransactionHeartbeat' : 'PricingHeartbeat',
        value,
        opts,
      );
    if (stream === 'pricing') {
      if (type !== 'PRICE')
        return [
          {
            path: '$.type',
            schema: 'ClientPrice.type',
            message: `expected "PRICE" or "HEARTBEAT", found ${show(type)}`,
          },
        ];
      return this.validateDefinition('ClientPrice', value, opts);
    }
    return this.validateDefinition('Transaction', value, opts);
  }

  private deref(ref: string): Schema | undefined {
    const m = /^#\/(definitions|responses)\/(.+)$/.exec(ref);
    if (!m?.[2]) return undefined;
    return m[1] === 'definitions' ? this.spec.definitions[m[2]] : this.spec.responses?.[m[2]];
  }

  private format(format: string): FormatCheck | undefined {
    if (!this.formats.has(format)) this.formats.set(format, formatCheck(format));
    return this.formats.get(format);
  }

  private check(
    schema: Schema,
    value: unknown,
    path: string,
    name: string,
    opts: ValidateOptions,
    out: Violation[],
  ): void {
    if (schema.$ref) {
      let defName = schema.$ref.replace(/^#\/definitions\//, '');
      const family = this.families.get(defName);
      if (family && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const type = (value as { type?: unknown }).type;
        const concrete = typeof type === 'string' ? family.get(type) : undefined;
        if (concrete) defName = concrete;
        else {
          out.push({
            path: child(path, 'type'),
            schema: `${defName}.type`,
            message: `${show(type)} is not a ${defName} type (known: ${[...family.keys()].join(', ')})`,
          });
          return;
        }
      }
      const target = this.spec.definitions[defName];
      if (!target) {
        out.push({ path, schema: schema.$ref, message: 'unresolvable $ref in the definitions' });
        return;
      }
      this.check(target, value, path, defName, opts, out);
      return;
    }
    const type = schema.type;
    const found = kindOf(value);
    switch (type) {
      case 'string': {
        if (typeof value !== 'string') {
          out.push({ path, schema: name, message: `expected a string, found ${found} ${show(value)}` });
          return;
        }
        if (schema.enum && !schema.enum.includes(value)) {
          out.push({ path, schema: name, message: `${show(value)} is not one of ${schema.enum.join(', ')}` });
          return;
        }
        // The file gives client IDs (`OrderCancelTransaction.clientOrderID`, `...clientTradeID`) the format
        // of OANDA-assigned IDs, which a client ID does not follow: their format is not checked.
        const f = schema.format && !/\.client\w*ID$/.test(name) ? this.format(schema.format) : undefined;
        if (f && !f.test(value))
          out.push({ path, schema: name, message: `expected ${f.name}, found ${show(value)}` });
        return;
      }
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value))
          out.push({ path, schema: name, message: `expected an integer, found ${found} ${show(value)}` });
        return;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value))
          out.push({ path, schema: name, message: `expected a number, found ${found} ${show(value)}` });
        return;
      case 'boolean':
        if (typeof value !== 'boolean')
          out.push({ path, schema: name, message: `expected a boolean, found ${found} ${show(value)}` });
        return;
      case 'array': {
        if (!Array.isArray(value)) {
          out.push({ path, schema: name, message: `expected an array, found ${found} ${show(value)}` });
          return;
        }
        if (schema.items)
          value.forEach((v, i) =>
            this.check(schema.items as Schema, v, `${path}[${i}]`, `${name}[]`, opts, out),
          );
        return;
      }
      case 'object':
      case undefined: {
        if (type === undefined && !schema.properties) return; // no constraint at all
        if (found !== 'object') {
          out.push({ path, schema: name, message: `expected an object, found ${found} ${show(value)}` });
          return;
        }
        const obj = value as Record<string, unknown>;
        for (const r of schema.required ?? []) {
          if (obj[r] === undefined)
            out.push({ path: child(path, r), schema: `${name}.${r}`, message: `required field is missing` });
        }
        const props = schema.properties;
        if (!props) return; // a free-form object
        const extra = opts.extraProperties?.[name];
        for (const [k, v] of Object.entries(obj)) {
          const p = props[k];
          if (p) this.check(p, v, child(path, k), `${name}.${k}`, opts, out);
          else if (opts.unknownProperties !== false && !extra?.includes(k)) {
            out.push({
              path: child(path, k),
              schema: name,
              message: `property ${JSON.stringify(k)} is not defined in ${name}`,
            });
          }
        }
        return;
      }
      default:
        out.push({
          path,
          schema: name,
          message: `the definitions use an unsupported type ${JSON.stringify(type)}`,
        });
    }
  }
}

/** One line per violation, for test failure messages: `GET /v3/... 200 $.a.b (Schema.b): message`. */
export function formatViolations(where: string, violations: readonly Violation[]): string[] {
  return violations.map((v) => `${where} ${v.path} (${v.schema}): ${v.message}`);
}
