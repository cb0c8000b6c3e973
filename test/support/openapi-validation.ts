import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import jestOpenAPI from 'jest-openapi';
import request from 'supertest';

/**
 * Every response an e2e test receives is checked against the service's OpenAPI document, here
 * and nowhere else: `validatedHttp()` (supertest, used by TestApp.http and for server processes)
 * and `validatedFetch()` (fetch against a server process). A mismatch fails the request, so the
 * test that made it fails with the reason.
 *
 * Checked on each response:
 * - the operation (path template and method) and the status are declared;
 * - the Content-Type is one the response declares (or no body when it declares none);
 * - the body satisfies the declared schema, with two validators: ajv 8 (strict mode, formats,
 *   OpenAPI 3.0 `nullable`) and, for supertest responses, jest-openapi 0.14 (openapi-response-validator);
 * - every declared header marked `required` is sent, and every declared header that is sent
 *   satisfies its schema;
 * - every header the service sends is declared, except the transport headers of HTTP itself
 *   (TRANSPORT_HEADERS).
 *
 * Not expressible in the document, so checked differently:
 * - a path no route matches (404 `not_found`) or a method no route of the path has
 *   (405 `method_not_allowed`): no operation can declare them; the body is checked against the
 *   ErrorEnvelope schema and X-Request-Id (and Allow on a 405) must be sent;
 * - the bodies of binary media types (image/png) are not parsed: only their media type is checked;
 * - jest-openapi cannot match a HEAD request against a body-less response of the document (it
 *   reads the empty body as `{}`), so HEAD responses are checked by ajv alone.
 */

type Schema = Record<string, unknown>;
interface HeaderObject {
  required?: boolean;
  schema?: Schema;
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema?: Schema }>;
}
interface OperationObject {
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, Schema> };
}

/** Headers of HTTP itself (framing, connection, date, content coding and its Vary): no API document declares them. */
export const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'vary']);

/** What the validator needs of a response, whichever client received it. */
export interface ObservedResponse {
  method: string;
  /** Path without query string, as sent. */
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Raw body text ('' when none); undefined for binary bodies that were not read as text. */
  text: string | undefined;
}

const SCHEMA_ID = 'https://cloud-disk-service.test/schemas/';

/**
 * The document's schemas as ajv reads them: references by $id, and a discriminator without its
 * `mapping` (ajv refuses the member, and finds each value's variant from the variants' one-value
 * enums, which is what the document's mapping was derived from).
 */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'discriminator' && v && typeof v === 'object' && 'propertyName' in v) {
        out[k] = { propertyName: (v as { propertyName: string }).propertyName };
        continue;
      }
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', SCHEMA_ID) : rewriteRefs(v);
    }
    return out;
  }
  return value;
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0].trim().toLowerCase() || undefined;
}

export class ResponseValidator {
  private readonly ajv: Ajv;
  private readonly compiled = new Map<unknown, ValidateFunction>();
  private readonly templates: { path: string; regex: RegExp; literal: boolean }[];

  constructor(readonly document: OpenApiDoc) {
    // Strict: a keyword ajv does not know, or `nullable` without `type`, is an error, as in strict OpenAPI 3.0 tools.
    this.ajv = new Ajv({ strict: true, allErrors: true, discriminator: true });
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs']);
    addFormats(this.ajv);
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      this.ajv.addSchema({ ...(rewriteRefs(schema) as Schema), $id: SCHEMA_ID + name });
    }
    this.templates = Object.keys(document.paths)
      .map((path) => ({
        path,
        literal: !path.includes('{'),
        // As Express routes: case-insensitive, with an optional trailing slash.
        regex: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}/?$`, 'i'),
      }))
      .sort((a, b) => Number(b.literal) - Number(a.literal));
  }

  private validator(schema: Schema): ValidateFunction {
    let fn = this.compiled.get(schema);
    if (!fn) {
      fn = this.ajv.compile(rewriteRefs(schema) as Schema);
      this.compiled.set(schema, fn);
    }
    return fn;
  }

  private check(schema: Schema, value: unknown, where: string): string[] {
    const fn = this.validator(schema);
    if (fn(value)) return [];
    return (fn.errors ?? []).map((e) => `${where}${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** The path template of the document that serves `path`, if any. */
  pathTemplate(path: string): string | undefined {
    return this.templates.find((t) => t.regex.test(path))?.path;
  }

  /** Problems of one response against the document; empty when it satisfies it. */
  problems(res: ObservedResponse): string[] {
    const method = res.method.toLowerCase();
    const template = this.pathTemplate(res.path);
    const operation = template ? this.document.paths[template][method] : undefined;
    if (!operation) return this.unmatched(res, template);
    const declared = operation.responses[String(res.status)] ?? operation.responses[`${String(res.status)[0]}XX`] ?? operation.responses.default;
    if (!declared) return [`status ${res.status} is not declared for ${method.toUpperCase()} ${template}`];
    return [...this.headerProblems(res, declared), ...this.bodyProblems(res, declared)];
  }

  /**
   * A response read from a raw socket: a routed one is checked as any other; what Node's HTTP
   * parser refused before routing (431, or 400/413 for broken framing, written by
   * client-errors.ts) belongs to no operation, so it is checked as an unmatched request's envelope.
   */
  rawProblems(res: ObservedResponse): string[] {
    const routed = this.problems(res);
    if (routed.length === 0 || ![400, 413, 431].includes(res.status)) return routed;
    const envelope = this.unmatched(res, undefined).filter((p) => !p.includes('no operation of the document serves it'));
    return envelope;
  }

  private unmatched(res: ObservedResponse, template: string | undefined): string[] {
    const problems: string[] = [];
    const expected = template ? 405 : 404;
    if (res.status !== expected) {
      problems.push(`${res.method} ${res.path}: no operation of the document serves it; expected the ${expected} of an unmatched request, got ${res.status}`);
    }
    if (res.headers['x-request-id'] === undefined) problems.push('header X-Request-Id is missing');
    if (expected === 405 && res.headers['allow'] === undefined) problems.push('header Allow is missing on a 405');
    if (res.method.toUpperCase() !== 'HEAD') {
      if (mediaType(res.headers['content-type'] as string | undefined) !== 'application/json') problems.push('an unmatched request must answer the JSON error envelope');
      else problems.push(...this.check({ $ref: '#/components/schemas/ErrorEnvelope' }, parse(res.text), 'body'));
    }
    return problems;
  }

  private headerProblems(res: ObservedResponse, declared: ResponseObject): string[] {
    const problems: string[] = [];
    const byLowerName = new Map(Object.entries(declared.headers ?? {}).map(([name, h]) => [name.toLowerCase(), { name, h }]));
    for (const [lower, { name, h }] of byLowerName) {
      const value = res.headers[lower];
      if (value === undefined) {
        if (h.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (h.schema) problems.push(...this.check(h.schema, coerceHeader(String(value), h.schema), `header ${name}`));
    }
    for (const lower of Object.keys(res.headers)) {
      if (res.headers[lower] === undefined || TRANSPORT_HEADERS.has(lower) || byLowerName.has(lower)) continue;
      problems.push(`header ${lower} is sent but not declared for status ${res.status}`);
    }
    return problems;
  }

  private bodyProblems(res: ObservedResponse, declared: ResponseObject): string[] {
    const type = mediaType(res.headers['content-type'] as string | undefined);
    const content = declared.content ?? {};
    const isHead = res.method.toUpperCase() === 'HEAD';
    if (Object.keys(content).length === 0) {
      if (!isHead && res.text) return [`status ${res.status} declares no body, got ${JSON.stringify(res.text.slice(0, 200))}`];
      return [];
    }
    if (isHead) {
      return type && !(type in content) ? [`Content-Type ${type} is not declared (declared: ${Object.keys(content).join(', ')})`] : [];
    }
    if (!type || !(type in content)) return [`Content-Type ${type ?? '(none)'} is not declared for status ${res.status} (declared: ${Object.keys(content).join(', ')})`];
    const schema = content[type].schema;
    if (!schema) return [];
    if (type === 'application/json' || type.endsWith('+json')) return this.check(schema, parse(res.text), 'body');
    if (res.text === undefined) return []; // binary: not read as text
    return this.check(schema, res.text, 'body');
  }
}

function parse(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return text;
  }
}

/** Header values are strings on the wire; their schema speaks of integers and booleans. */
function coerceHeader(value: string, schema: Schema): unknown {
  if ((schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (schema.type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

const validators = new WeakMap<object, ResponseValidator>();
let jestOpenApiDocument: object | undefined;

/** One validator per document object; jest-openapi's matchers are set up for the document in use. */
export function responseValidator(document: OpenApiDoc): ResponseValidator {
  let v = validators.get(document);
  if (!v) {
    v = new ResponseValidator(document);
    validators.set(document, v);
  }
  if (jestOpenApiDocument !== document) {
    jestOpenAPI(structuredClone(document) as never);
    jestOpenApiDocument = document;
  }
  return v;
}

/** Throws when a response read from a raw socket does not satisfy the document (see rawProblems). */
export function validateRawResponse(document: OpenApiDoc, res: ObservedResponse): void {
  const problems = responseValidator(document).rawProblems(res);
  if (problems.length > 0) fail(res, problems);
}

function fail(res: ObservedResponse, problems: string[]): never {
  throw new Error(`Response does not satisfy the OpenAPI document: ${res.method} ${res.path} -> ${res.status}\n- ${problems.join('\n- ')}`);
}

interface SuperAgentResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text?: string;
  body?: unknown;
  req: { method: string; path: string };
}

/** The supertest assertion that validates a response (runs before the test's own `.expect`s). */
export function validateSuperAgentResponse(validator: ResponseValidator, res: SuperAgentResponse): void {
  const observed: ObservedResponse = {
    method: res.req.method,
    path: res.req.path.split('?')[0],
    status: res.status,
    headers: res.headers,
    text: typeof res.text === 'string' ? res.text : undefined,
  };
  const problems = validator.problems(observed);
  if (problems.length > 0) fail(observed, problems);
  const matched = validator.pathTemplate(observed.path);
  if (matched && validator.document.paths[matched][observed.method.toLowerCase()] && observed.method !== 'HEAD') {
    // The second validator, as a CI pipeline with jest-openapi would run it.
    try {
      expect(res).toSatisfyApiSpec();
    } catch (e) {
      fail(observed, [`jest-openapi: ${(e as Error).message}`]);
    }
  }
}

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);

/**
 * supertest against an HTTP server or a URL, with every response validated: each request gets
 * the validating assertion first, so a mismatch rejects it (and `.end()` gets the error).
 */
export function validatedHttp(target: Parameters<typeof request>[0], document: OpenApiDoc): ReturnType<typeof request> {
  const validator = responseValidator(document);
  const agent = request(target);
  return new Proxy(agent, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof prop !== 'string' || !HTTP_METHODS.has(prop) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => request.Test).apply(obj, args);
        return test.expect((res) => validateSuperAgentResponse(validator, res as unknown as SuperAgentResponse));
      };
    },
  });
}

const served = new Map<string, Promise<OpenApiDoc>>();

/** The document a server process serves at /v1/openapi.json (fetched once per base URL). */
export function servedDocument(baseUrl: string): Promise<OpenApiDoc> {
  let doc = served.get(baseUrl);
  if (!doc) {
    doc = fetch(`${baseUrl}/v1/openapi.json`).then(async (r) => {
      if (r.status !== 200) throw new Error(`GET ${baseUrl}/v1/openapi.json answered ${r.status}`);
      return (await r.json()) as OpenApiDoc;
    });
    served.set(baseUrl, doc);
  }
  return doc;
}

/** supertest against a server process, validated against the document that process serves. */
export async function processHttp(baseUrl: string): Promise<ReturnType<typeof request>> {
  return validatedHttp(baseUrl, await servedDocument(baseUrl));
}

/**
 * fetch against a server process, the response validated against the document it serves. The
 * body is read here (as text, binary media types as bytes) and handed back in a fresh Response,
 * so the caller reads it as usual.
 */
export async function validatedFetch(url: string, init?: RequestInit): Promise<Response> {
  const u = new URL(url);
  const validator = responseValidator(await servedDocument(u.origin));
  const res = await fetch(url, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = mediaType(res.headers.get('content-type') ?? undefined);
  const binary = type !== undefined && /^(image|audio|video)\/|octet-stream/.test(type);
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  const observed: ObservedResponse = {
    method: (init?.method ?? 'GET').toUpperCase(),
    path: u.pathname,
    status: res.status,
    headers,
    text: binary ? undefined : bytes.toString('utf8'),
  };
  const problems = validator.problems(observed);
  if (problems.length > 0) fail(observed, problems);
  const nullBody = [101, 204, 205, 304].includes(res.status) || observed.method === 'HEAD';
  return new Response(nullBody ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
}
