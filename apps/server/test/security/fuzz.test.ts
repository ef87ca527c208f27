import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';

/**
 * Property-based fuzzing of every operation in the OpenAPI document (GET /api/docs/json): path,
 * query and body built from each operation's own schemas, then bent — wrong types, missing and
 * extra fields, huge strings, NUL and control characters, unicode (astral, combining, lone
 * surrogates, RTL), extreme numbers and dates, malformed JSON and URL escapes — sent without a
 * session, with a garbage token, and as a fresh user or operator. However wrong the request, the
 * server answers it: no 5xx, and an error comes in the {code,msg,data} envelope.
 *
 * Deterministic (fixed seed) and bounded (RUNS per operation), so it runs in every `npm test`.
 * FUZZ_RUNS=n runs more; FUZZ_STATS=<file> writes each request's route, status and caller there,
 * to see how deep the generated requests get.
 */
const SEED = 20_261_123;
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};
type Parameter = { in: 'path' | 'query' | 'header' | 'cookie'; name: string; required?: boolean; schema?: JsonSchema };
type Operation = {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  security?: unknown[];
};
type Doc = { paths: Record<string, Record<string, Operation>> };

// ---- hostile values -------------------------------------------------------------------------

const hugeString = fc.constantFrom('a'.repeat(100_000), '中'.repeat(70_000), '\u0000'.repeat(5_000), '😀'.repeat(30_000));
const nastyString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\u0001\u0002\u001b[31m\u007f',
    '\r\n\t',
    '\uD800',
    'x\uDFFFy',
    '\u202Eevil\u202C',
    'e\u0301\u0301\u0301',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    '﷽',
    "'; drop table users; --",
    '<script>alert(1)</script>',
    '../../../../etc/passwd',
    '%00',
    '%zz',
    '${jndi:ldap://x}',
    '__proto__',
    'constructor',
    'null',
    'NaN',
    '-0',
    '1e309',
    '99999999999999999999999',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}\u0000${b}`),
  hugeString,
);
const extremeNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 53, -(2 ** 53), 2 ** 63, 2 ** 64, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1e21),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const extremeDate = fc.constantFrom(
  '0000-01-01T00:00:00Z',
  '0000-12-31T23:59:59+08:00',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59-14:00',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2024-02-30T00:00:00Z',
  '2024-13-01T00:00:00Z',
  '2024-01-01T24:00:00Z',
  '2024-01-01T00:00:00.123456789123Z',
  '1970-01-01T00:00:00+23:59',
  '1969-12-31T23:59:59Z',
  '2024-01-01',
  'yesterday',
);
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  nastyString,
  extremeNumber,
  extremeDate,
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxKeys: 4 }),
);

// ---- values from a schema, sometimes bent ---------------------------------------------------

/** A value the schema accepts (as far as generation from JSON Schema goes), with its edge values. */
function validish(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.string();
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((s) => validish(s, depth + 1)));
  if (schema.allOf?.length) return validish(schema.allOf[0], depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date('1990-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z') }).map((d) => d.toISOString());
      if (schema.pattern) {
        try {
          return fc.stringMatching(new RegExp(schema.pattern));
        } catch {
          /* a pattern fast-check can't generate from: fall through */
        }
      }
      if (schema.format === 'email') return fc.emailAddress();
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 200) });
    }
    case 'integer': {
      const min = Math.max(schema.minimum ?? -(2 ** 31), Number.MIN_SAFE_INTEGER);
      const max = Math.min(schema.maximum ?? 2 ** 31, Number.MAX_SAFE_INTEGER);
      return fc.oneof(fc.integer({ min: Math.max(min, -1000), max: Math.max(Math.min(max, 1000), Math.max(min, -1000)) }), fc.constantFrom(min, max));
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validish(schema.items, depth + 1), { maxLength: 5 });
    case 'object':
      return validObject(schema, depth + 1);
    default:
      return fc.string();
  }
}

/** A value of the field's own type at its worst (a NUL in a string, a year 0000 in a date, 1e308 in a count), or of any other type. */
function hostileFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  const typed =
    schema?.format === 'date-time'
      ? extremeDate
      : type === 'string'
        ? nastyString
        : type === 'integer' || type === 'number'
          ? extremeNumber
          : type === 'array'
            ? fc.array(anyJson, { maxLength: 3 })
            : anyJson;
  return fc.oneof({ weight: 3, arbitrary: typed }, { weight: 1, arbitrary: anyJson });
}

/** Mostly a value the schema accepts, often one it doesn't. */
function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: validish(schema, depth) }, { weight: 2, arbitrary: hostileFor(schema) });
}

/** Required properties and some optional ones, each valid. */
function validObject(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const props = Object.entries(schema.properties ?? {});
  return fc
    .record(Object.fromEntries(props.map(([name, s]) => [name, required.has(name) ? validish(s, depth) : fc.option(validish(s, depth), { nil: undefined })])))
    .map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
}

/** A valid object with exactly one thing wrong: a field bent, a required one missing, or an extra key. */
function mutantObject(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const props = schema.properties ?? {};
  const names = Object.keys(props);
  const mutation = fc.oneof(
    ...(names.length ? [fc.constantFrom(...names).chain((name) => hostileFor(props[name]).map((value) => ({ kind: 'bend' as const, name, value })))] : []),
    ...(names.length ? [fc.record({ kind: fc.constant('drop' as const), name: fc.constantFrom(...names), value: fc.constant(undefined) })] : []),
    fc.record({ kind: fc.constant('extra' as const), name: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('__proto__', 'constructor', 'a\u0000')), value: anyJson }),
  );
  return fc.tuple(validObject(schema), mutation).map(([o, m]) => {
    const out = { ...o };
    if (m.kind === 'drop') delete out[m.name];
    else Object.defineProperty(out, m.name, { value: m.value, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

/** The schema's properties (required ones sometimes missing), plus sometimes extra or hostile keys. */
function objectFor(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const fields = Object.fromEntries(
    Object.entries(props).map(([name, s]) => [name, fc.option(valueFor(s, depth), { nil: undefined, freq: required.has(name) ? 8 : 3 })]),
  );
  const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'a\u0000', '')), anyJson, { maxKeys: 3 });
  return fc.tuple(fc.record(fields), fc.option(extra, { nil: undefined, freq: 4 })).map(([known, more]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(known)) if (v !== undefined) out[k] = v;
    if (more) for (const [k, v] of Object.entries(more)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

// ---- requests -------------------------------------------------------------------------------

const safeEncode = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80'; // a lone surrogate, as its (invalid) UTF-8 bytes
  }
};
const rawEscape = fc.constantFrom('%', '%zz', '%C0%AF', '%E0%A4%A', '%00', '%FF%FE', '..%2F..%2F', '%2e%2e');

/** Path parameters whose useful values a generic string rarely hits. */
const PATH_HINTS: Record<string, fc.Arbitrary<string>> = {
  method: fc.constantFrom('sandbox', 'alipay', 'wechat'),
};

function pathArb(template: string, params: Parameter[]): fc.Arbitrary<string> {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
  if (!names.length) return fc.constant(template);
  const schemaOf = (n: string) => params.find((p) => p.in === 'path' && p.name === n)?.schema;
  const plausible = (n: string) => PATH_HINTS[n] ?? fc.oneof(fc.nat().map(String), fc.uuid(), fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/));
  const segment = (n: string) =>
    fc.oneof(
      { weight: 4, arbitrary: plausible(n) },
      { weight: 3, arbitrary: valueFor(schemaOf(n)).map((v) => safeEncode(typeof v === 'string' ? v : JSON.stringify(v) ?? '')) },
      { weight: 1, arbitrary: rawEscape },
    );
  return fc.tuple(...names.map(segment)).map((values) => names.reduce((p, n, i) => p.replace(`{${n}}`, values[i] || 'x'), template));
}

function queryArb(params: Parameter[]): fc.Arbitrary<string> {
  const query = params.filter((p) => p.in === 'query');
  const known = fc.record(Object.fromEntries(query.map((p) => [p.name, fc.option(fc.oneof({ weight: 3, arbitrary: validish(p.schema) }, { weight: 2, arbitrary: hostileFor(p.schema) }), { nil: undefined, freq: 3 })])));
  const sometimes = <T,>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: a });
  const extra = sometimes(fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(nastyString, fc.array(fc.string(), { maxLength: 3 })), { maxKeys: 3 }));
  return fc.tuple(known, extra, sometimes(rawEscape)).map(([k, x, raw]) => {
    const parts: string[] = [];
    const add = (name: string, v: unknown) => {
      if (v === undefined) return;
      if (Array.isArray(v)) for (const item of v) add(name, item);
      else parts.push(`${safeEncode(name)}=${safeEncode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`);
    };
    for (const [name, v] of Object.entries({ ...k, ...x })) add(name, v);
    if (raw) parts.push(`q=${raw}`);
    return parts.length ? `?${parts.join('&')}` : '';
  });
}

type Body = { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; type: string } | { kind: 'none' };

const deepArray = '['.repeat(20_000) + ']'.repeat(20_000);
const rawBodies = fc.oneof(
  fc.constantFrom(
    { text: '{', type: 'application/json' },
    { text: '{"a":1,"a":2}', type: 'application/json' },
    { text: '{"__proto__":{"admin":true}}', type: 'application/json' },
    { text: '{"constructor":{"prototype":{"x":1}}}', type: 'application/json' },
    { text: deepArray, type: 'application/json' },
    { text: 'null', type: 'application/json' },
    { text: '"\u0000"', type: 'application/json' },
    { text: 'a=1&b=\u0000', type: 'application/x-www-form-urlencoded' },
    { text: 'a\u0000b', type: 'text/plain' },
    { text: '<xml/>', type: 'application/xml' },
    { text: '', type: 'application/json' },
    { text: 'x'.repeat(1_100_000), type: 'application/json' },
  ),
  fc.record({ text: nastyString, type: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'multipart/form-data; boundary=x') }),
);

function bodyArb(op: Operation): fc.Arbitrary<Body> {
  const schema = op.requestBody?.content?.['application/json']?.schema;
  const raw = rawBodies.map((r): Body => ({ kind: 'raw', ...r }));
  const none = fc.constant<Body>({ kind: 'none' });
  if (!schema) return fc.oneof({ weight: 1, arbitrary: none }, { weight: 3, arbitrary: raw });
  const json = fc
    .oneof({ weight: 3, arbitrary: validObject(schema) }, { weight: 5, arbitrary: mutantObject(schema) }, { weight: 3, arbitrary: objectFor(schema) }, { weight: 1, arbitrary: anyJson })
    .map((value): Body => ({ kind: 'json', value }));
  return fc.oneof({ weight: 10, arbitrary: json }, { weight: 2, arbitrary: raw }, { weight: 1, arbitrary: none });
}

type Auth = 'none' | 'garbage' | 'user' | 'operator';

describe('OpenAPI fuzzer: no request makes a 5xx', () => {
  let t: TestApp;
  let operations: [string, string, Operation][] = [];
  beforeAll(async () => {
    t = await buildTestApp();
    const doc = (await t.request({ method: 'GET', url: '/api/docs/json' })).json<Doc>();
    operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).map(([m, op]): [string, string, Operation] => [m.toUpperCase(), p, op]));
  }, 180_000);
  afterAll(() => t?.close());

  const tokenFor = async (auth: Auth) => {
    if (auth === 'none') return undefined;
    if (auth === 'garbage') return 'not-a-session-token';
    return (await createUser(t, { role: auth })).token; // fresh each time: a fuzzed logout must not end the others
  };

  it('covers every operation of the document', () => {
    expect(operations.length).toBeGreaterThan(25);
  });

  it('answers every fuzzed request of every operation below 500, errors in the envelope', async () => {
    const failures: string[] = [];
    const stats: string[] = [];
    for (const [method, template, op] of operations) {
      const encryptedRoute = /加密请求/.test(op.summary ?? '');
      const params = op.parameters ?? [];
      const arb = fc.record({
        path: fc.tuple(pathArb(template, params), fc.integer({ min: 0, max: 11 }), rawEscape).map(([p, n, esc]) =>
          // 1 in 12: an escape the router can't decode in the path itself
          n === 0 ? `${p}${esc}` : n === 1 ? p.replace(/\/[^/]*$/, `/${esc}`) : p,
        ),
        query: queryArb(params),
        body: bodyArb(op),
        auth: fc.constantFrom<Auth>('user', 'operator', 'none', 'garbage'),
        wrongEncryption: fc.integer({ min: 0, max: 3 }).map((n) => n === 0), // 1 in 4: plain to an encrypted route or the reverse
        idempotencyKey: fc.option(fc.oneof(fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 140 }), fc.constant('')), { nil: undefined, freq: 4 }),
      });
      const property = fc.asyncProperty(arb, async (input) => {
        const token = await tokenFor(input.auth);
        const headers: Record<string, string> = {};
        if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey;
        let res: LightMyRequestResponse;
        const url = `${input.path}${input.query}`;
        const injectMethod = method as 'GET' | 'POST' | 'PUT' | 'DELETE';
        const encrypted = input.wrongEncryption ? !encryptedRoute : encryptedRoute;
        if (input.body.kind === 'json' && encrypted) {
          res = await t.request({ method: injectMethod, url, token, headers, encrypted: true, payload: JSON.stringify(input.body.value) ?? 'null' });
        } else if (input.body.kind === 'json') {
          res = await t.request({ method: injectMethod, url, token, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(input.body.value) ?? 'null' });
        } else if (input.body.kind === 'raw') {
          res = await t.request({ method: injectMethod, url, token, headers: { ...headers, 'content-type': input.body.type }, payload: input.body.text });
        } else {
          res = await t.request({ method: injectMethod, url, token, headers });
        }
        if (process.env.FUZZ_STATS) stats.push(`${method} ${template} ${res.statusCode} ${input.auth} ${res.statusCode >= 400 ? res.body.slice(0, 80) : ''}`);
        if (res.statusCode >= 500) {
          failures.push(`${method} ${template}: ${res.statusCode} ${res.body.slice(0, 200)} <- ${JSON.stringify(input).slice(0, 400)}`);
          return false;
        }
        // Error answers of the API are the envelope (the notify route answers gateways in their own format).
        if (res.statusCode >= 400 && !template.includes('/notify/') && (res.headers['content-type'] ?? '').toString().startsWith('application/json') && !res.headers['encrypt-key']) {
          const body = res.json<{ code?: unknown; msg?: unknown; data?: unknown }>();
          if (body.code !== res.statusCode || typeof body.msg !== 'string' || body.data !== null) {
            failures.push(`${method} ${template}: ${res.statusCode} outside the envelope: ${res.body.slice(0, 200)}`);
            return false;
          }
        }
        return true;
      });
      await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: true }).catch(() => undefined);
    }
    if (process.env.FUZZ_STATS) (await import('node:fs')).writeFileSync(process.env.FUZZ_STATS, stats.join('\n'));
    expect(failures).toEqual([]);
  }, 300_000);
});
