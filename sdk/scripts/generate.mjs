#!/usr/bin/env node
/* global process, structuredClone */
/**
 * Generates the SDK's typed layer from the service's OpenAPI document:
 *
 *   src/generated/schema.ts   the document's types (openapi-typescript), and a named alias per schema
 *   src/generated/api.ts      the route table, a class per area with a method per operation, an
 *                             error class per error code, the event types of webhooks
 *   src/generated/version.ts  the SDK's version (package.json) and the API version it speaks
 *
 *   node sdk/scripts/generate.mjs [document.json]           writes them
 *   node sdk/scripts/generate.mjs --check [document.json]   exits 1 when they differ from the files
 *
 * The document defaults to examples/typescript-client/openapi.json (`npm run openapi:document`).
 * Areas come from the operations' tags (`SSH keys` -> sshKeys), methods from the operationIds with
 * the area's noun dropped (`listServers` -> servers.list, `purchaseServer` -> servers.create): a
 * route added to the service is a method of the SDK at the next build, without naming it here. The
 * few names below are where that rule alone would name a method badly. A drift the hand-written
 * parts of the SDK cannot follow (a route they call renamed, a member they read gone) fails the
 * SDK's type-check, and so `npm test`.
 */
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const SDK = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(SDK, '..');
const OUT = join(SDK, 'src/generated');

/** Tags whose routes are not for API clients (probes, this document, the payment provider's callbacks). */
const EXCLUDED_TAGS = new Set(['Health', 'Documentation', 'Payment provider callbacks']);
/** Routes under these paths belong to this area whatever their tag (top-ups are tagged Wallet, deployments Templates). */
const PATH_AREAS = [
  ['/v1/wallet/top-ups', 'topUps'],
  ['/v1/deployments', 'deployments'],
  ['/v1/servers/{id}/deployments', 'deployments'],
];
/** Method names the rule would get wrong. */
const METHOD_NAMES = {
  deployTemplate: 'create',
  getServerFirewall: 'forServer',
  rotateWebhookSecret: 'rotateSecret',
  redeliverWebhook: 'redeliver',
  listWebhookDeliveries: 'listDeliveries',
};
/** Verbs of the API that the SDK says as every other SDK does. */
const VERBS = { purchase: 'create' };

const camel = (words) => words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');
const pascal = (s) => s[0].toUpperCase() + s.slice(1);
const singular = (s) => (s.endsWith('ies') ? `${s.slice(0, -3)}y` : s.endsWith('s') ? s.slice(0, -1) : s);
const refName = (schema) => schema?.$ref?.replace('#/components/schemas/', '');
const quote = (s) => JSON.stringify(s);
const identifier = (s) => (/^[A-Za-z_$][\w$]*$/.test(s) ? s : quote(s));

/** The area of a route: by path first, else by its first tag. */
function areaOf(path, op) {
  const byPath = PATH_AREAS.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));
  if (byPath) return byPath[1];
  return camel(op.tags[0].split(/\s+/));
}

/** `listServers` in area servers -> `list`; `purchaseServer` -> `create`; `createServerConsole` -> `createConsole`. */
function methodOf(area, operationId) {
  if (METHOD_NAMES[operationId]) return METHOD_NAMES[operationId];
  const plural = pascal(area);
  let name = operationId;
  for (const noun of [plural, singular(plural)]) {
    if (name.includes(noun)) {
      name = name.replace(noun, '');
      break;
    }
  }
  const verb = /^[a-z]+/.exec(name)?.[0] ?? name;
  if (VERBS[verb]) name = VERBS[verb] + name.slice(verb.length);
  return name;
}

/** Every client-facing operation of the document, with what the SDK needs to call it. */
export function routesOf(document) {
  const schemas = document.components?.schemas ?? {};
  const routes = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'head' || method === 'parameters' || !op.operationId) continue;
      if ((op.tags ?? []).some((t) => EXCLUDED_TAGS.has(t))) continue;
      const params = op.parameters ?? [];
      const query = params.filter((p) => p.in === 'query');
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      // An action that also answers a dry run (200 with the price) is typed by its 202: what it answers without dry_run.
      const successes = Object.entries(op.responses).filter(([s]) => /^2\d\d$/.test(s));
      const [status, success] = successes.find(([s]) => s === '202') ?? successes[0] ?? [];
      if (!status) throw new Error(`${op.operationId}: no 2xx response`);
      const successSchema = success.content?.['application/json']?.schema;
      const result = refName(successSchema);
      // A response of more than one kind (a oneOf of named schemas): the union of them.
      const results = successSchema?.oneOf?.map(refName);
      const body = op.requestBody ? refName(op.requestBody.content?.['application/json']?.schema) : undefined;
      if (op.requestBody && !body) throw new Error(`${op.operationId}: a request body that is not a named schema`);
      const bodyMembers = body ? Object.keys(schemas[body]?.properties ?? {}) : [];
      const clash = query.find((q) => bodyMembers.includes(q.name));
      if (clash) throw new Error(`${op.operationId}: query parameter ${clash.name} is also a body member`);
      const area = areaOf(path, op);
      routes.push({
        operationId: op.operationId,
        area,
        name: methodOf(area, op.operationId),
        method: method.toUpperCase(),
        path,
        pathParams,
        query: query.map((q) => q.name),
        requiredQuery: query.filter((q) => q.required).map((q) => q.name),
        body,
        bodyRequired: Boolean(op.requestBody?.required),
        idempotencyKey: params.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
        authenticated: (op.security ?? []).some((s) => 'bearer' in s),
        status: Number(status),
        result,
        ...(results ? { results } : {}),
        summary: op.summary ?? op.operationId,
        description: op.description,
      });
    }
  }
  // What a result holds: the operation to wait for, the resource beside it and the GET that reads it again, the page's items.
  const getterOf = (schema) =>
    routes.find((r) => r.method === 'GET' && (r.result === schema || r.results?.includes(schema)) && r.pathParams.length === 1 && r.query.length === 0);
  for (const r of routes) {
    const props = schemas[r.result]?.properties ?? {};
    if (refName(props.operation) === 'Operation' && r.result !== 'Operation') {
      const resource = Object.entries(props).find(([name, s]) => name !== 'operation' && refName(s) && getterOf(refName(s)));
      r.waits = resource ? { resource: resource[0], get: getterOf(refName(resource[1])).operationId } : {};
    }
    const arrays = Object.entries(props).filter(([, s]) => s.type === 'array');
    if (r.method === 'GET' && r.name.startsWith('list') && arrays.length === 1) {
      // The item's schema, or each schema of a oneOf (a list of more than one kind: a union).
      const item = arrays[0][1].items;
      r.list = { items: arrays[0][0], item: item.oneOf ? item.oneOf.map(refName) : [refName(item)], cursor: r.query.includes('cursor') && 'next_cursor' in props };
    }
  }
  const seen = new Map();
  for (const r of routes) {
    const key = `${r.area}.${r.name}`;
    if (seen.has(key)) throw new Error(`${r.operationId} and ${seen.get(key)} would both be ${key}: name one of them in METHOD_NAMES`);
    seen.set(key, r.operationId);
  }
  return routes;
}

/** The TypeScript type of a parameter's schema (strings, numbers, booleans, their enums, arrays of them). */
function paramType(schema) {
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.type === 'array') return `Array<${paramType(schema.items)}>`;
  if (schema.type === 'integer' || schema.type === 'number') return 'number';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'string') return 'string';
  throw new Error(`a query parameter of schema ${JSON.stringify(schema)}: teach paramType about it`);
}

function queryTypes(routes, document) {
  return routes
    .filter((r) => r.query.length)
    .map((r) => {
      const params = document.paths[r.path][r.method.toLowerCase()].parameters.filter((p) => p.in === 'query');
      const members = params.map((p) => {
        const doc = p.description ? `    /** ${p.description.replace(/\*\//g, '*\\/')} */\n` : '';
        return `${doc}    ${identifier(p.name)}${p.required ? '' : '?'}: ${paramType(p.schema)};`;
      });
      return `  ${r.operationId}: {\n${members.join('\n')}\n  };`;
    })
    .join('\n');
}

function paramsType(r) {
  const parts = [];
  if (r.body) parts.push(`S[${quote(r.body)}]`);
  if (r.query.length) parts.push(`Query<${quote(r.operationId)}>`);
  return parts.join(' & ') || undefined;
}

function docComment(r, indent) {
  const lines = [`${r.summary.replace(/\.$/, '')} (\`${r.method} ${r.path}\`).`];
  if (r.waits) lines.push('', 'Answers once accepted, with the operation that carries it out; with `{ wait: true }`, once that', 'operation ended (an `OperationFailedError` when it failed), with the resource read again.');
  if (r.list) lines.push('', r.list.cursor ? 'Iterate it (`for await`) for every item across pages; `.pages()` for the pages.' : 'Iterate it (`for await`) for every item; the list has one page.');
  if (r.idempotencyKey) lines.push('', 'Sent with an Idempotency-Key (`options.idempotencyKey`, or one made per call), the same on every retry.');
  return [`${indent}/**`, ...lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`), `${indent} */`].join('\n');
}

function method(r) {
  const args = r.pathParams.map((p) => `${p === 'id' ? 'id' : camel(p.split('_'))}: string`);
  const params = paramsType(r);
  const required = r.bodyRequired || r.requiredQuery.length > 0;
  if (params) args.push(`params${required ? '' : '?'}: ${params}`);
  const result = r.result ? `S[${quote(r.result)}]` : r.results ? r.results.map((n) => `S[${quote(n)}]`).join(' | ') : 'void';
  const pathArgs = `[${r.pathParams.map((p) => (p === 'id' ? 'id' : camel(p.split('_')))).join(', ')}]`;
  const paramsArg = params ? 'params' : 'undefined';
  if (r.list) {
    args.push('options?: RequestOptions');
    return `${docComment(r, '  ')}
  ${r.name}(${args.join(', ')}): Paginator<${r.list.item.map((n) => `S[${quote(n)}]`).join(' | ')}, ${result}> {
    return this.transport.paginate(${quote(r.operationId)}, ${pathArgs}, ${paramsArg}, options);
  }`;
  }
  args.push(`options?: ${r.waits ? 'ActionOptions' : 'RequestOptions'}`);
  return `${docComment(r, '  ')}
  ${r.name}(${args.join(', ')}): Promise<${result}> {
    return this.transport.call(${quote(r.operationId)}, ${pathArgs}, ${paramsArg}, options) as Promise<${result}>;
  }`;
}

function errorClasses(codes) {
  return codes
    .map((code) => {
      const name = `${camel(code.split('_'))[0].toUpperCase()}${camel(code.split('_')).slice(1)}Error`;
      return { code, name };
    })
    .map(
      ({ code, name }) => `/** The API answered \`${code}\`. */
export class ${name} extends ApiError<${quote(code)}> {
  override readonly name: string = ${quote(name)};
}`,
    );
}

export function apiSource(document) {
  const routes = routesOf(document);
  const areas = [...new Set(routes.map((r) => r.area))].sort();
  const codes = document.components.schemas.ErrorBody.properties.code.enum;
  const eventTypes = document.components.schemas.WebhookDelivery?.properties?.event_type?.enum ?? [];
  const table = routes.map((r) => {
    const entry = {
      method: r.method,
      path: r.path,
      query: r.query,
      body: r.body ? (r.bodyRequired ? 'required' : 'optional') : 'none',
      idempotencyKey: r.idempotencyKey,
      authenticated: r.authenticated,
      ...(r.waits ? { waits: r.waits } : {}),
      ...(r.list ? { list: { items: r.list.items, cursor: r.list.cursor } } : {}),
    };
    return `  ${r.operationId}: ${JSON.stringify(entry)},`;
  });
  const classes = areas.map((area) => {
    const className = `${pascal(area)}Area`;
    const methods = routes.filter((r) => r.area === area).map(method);
    return `/** ${area}: ${routes.filter((r) => r.area === area).map((r) => `${r.method} ${r.path}`).join(', ')}. */
export class ${className} extends Area {
${methods.join('\n\n')}
}`;
  });
  const errors = errorClasses(codes);
  const errorNames = codes.map((code) => `${camel(code.split('_'))[0].toUpperCase()}${camel(code.split('_')).slice(1)}Error`);
  return `// Generated by sdk/scripts/generate.mjs from the service's OpenAPI document. Do not edit.
/* eslint-disable */
import { ActionOptions, Area, RequestOptions } from '../area.js';
import { ApiError } from '../errors.js';
import type { Paginator } from '../pagination.js';
import type { components } from './schema.js';

type S = components['schemas'];

/** The query parameters of each operation that takes some. */
export interface QueryParams {
${queryTypes(routes, document)}
}
/** The query parameters of an operation. */
export type Query<K extends keyof QueryParams> = QueryParams[K];

/** How to call each operation: method, path, query parameter names, body, Idempotency-Key, what its answer holds. */
export const ROUTES = {
${table.join('\n')}
} as const satisfies Record<string, RouteSpec>;

export type OperationId = keyof typeof ROUTES;

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query: readonly string[];
  body: 'required' | 'optional' | 'none';
  idempotencyKey: boolean;
  authenticated: boolean;
  /** The answer holds an operation (and maybe a resource read again by \`get\` once it ended). */
  waits?: { resource?: string; get?: string };
  /** A list: the member holding the page's items, and whether pages follow by cursor. */
  list?: { items: string; cursor: boolean };
}

${classes.join('\n\n')}

/** The areas of the client, by name. */
export const AREAS = {
${areas.map((a) => `  ${a}: ${pascal(a)}Area,`).join('\n')}
} as const;

${errors.join('\n\n')}

/** The error class of each error code of the API. */
export const ERROR_CLASSES = {
${codes.map((c, i) => `  ${identifier(c)}: ${errorNames[i]},`).join('\n')}
} as const;

/** Every error code the API answers. */
export type ErrorCode = ${codes.map(quote).join(' | ')};

/** The event types of webhooks. */
export const WEBHOOK_EVENT_TYPES = ${JSON.stringify(eventTypes)} as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
`;
}

export async function schemaSource(document) {
  // The schemas only: the operations' types (every response with its headers and examples) would be
  // megabytes of declarations; the SDK types its methods from the schemas and its own query types.
  const schemasOnly = { openapi: document.openapi, info: document.info, paths: {}, components: { schemas: document.components?.schemas ?? {} } };
  const ast = await openapiTS(structuredClone(schemasOnly), { alphabetize: false, exportType: false, defaultNonNullable: false });
  const names = Object.keys(document.components?.schemas ?? {});
  return `// Generated by sdk/scripts/generate.mjs (openapi-typescript) from the service's OpenAPI document. Do not edit.
/* eslint-disable */
${astToString(ast)}
${names.map((n) => `export type ${n} = components['schemas'][${quote(n)}];`).join('\n')}
`;
}

export function versionSource(document) {
  const pkg = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8'));
  const api = String(document.info.version);
  if (pkg.version.split('.')[0] !== api) {
    throw new Error(`sdk/package.json version ${pkg.version} does not follow the API's version ${api}: its major version must be ${api}`);
  }
  return `// Generated by sdk/scripts/generate.mjs. Do not edit.
/** The version of this SDK (its package's), sent in its user agent. */
export const SDK_VERSION = ${quote(pkg.version)};
/** The version of the API this SDK was generated from: the major version of the SDK. */
export const API_VERSION = ${quote(api)};
`;
}

export async function generate(document) {
  return {
    'schema.ts': await schemaSource(document),
    'api.ts': apiSource(document),
    'version.ts': versionSource(document),
  };
}

async function main() {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const input = resolve(args.find((a) => !a.startsWith('--')) ?? join(ROOT, 'examples/typescript-client/openapi.json'));
  const files = await generate(JSON.parse(readFileSync(input, 'utf8')));
  if (check) {
    const stale = Object.entries(files).filter(([name, text]) => !existsSync(join(OUT, name)) || readFileSync(join(OUT, name), 'utf8') !== text);
    if (stale.length) {
      process.stderr.write(`sdk/src/generated is not what ${input} gives: ${stale.map(([n]) => n).join(', ')}; run npm run sdk:generate\n`);
      process.exit(1);
    }
    return;
  }
  mkdirSync(OUT, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(OUT, name), text);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
