import { INestApplication, Injectable, Type, applyDecorators } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import {
  ApiBearerAuth,
  ApiExtension,
  ApiExtraModels,
  ApiHeader,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiSchema,
  DocumentBuilder,
  HeadersObject,
  OpenAPIObject,
  SwaggerModule,
  getSchemaPath,
} from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorCode } from '../kernel/errors/domain-error';
import { STATUS_OF } from './error-envelope';
import { CURRENCIES } from '../kernel/money/money';

/**
 * OpenAPI 3 for the whole service, generated from the controllers' decorators: the shared
 * error envelope, `@ApiErrors(...)` for the error answers of a route, `@ApiAuthenticated()` for
 * the bearer security scheme and X-Org-ID, and the response headers every route sends.
 */

export const ERROR_CODES = Object.keys(STATUS_OF) as ErrorCode[];

/** The security scheme name of the bearer tokens (API keys and session tokens). */
export const BEARER_SCHEME = 'bearer';

const EXAMPLE_REQUEST_ID = 'req_7Hq2mXc9LpV4sKd1Rt8Ebw3N';

export const REQUEST_ID_HEADER: HeadersObject = {
  'X-Request-Id': {
    required: true,
    description: 'Identifier of this request (the incoming X-Request-Id when valid: 1-128 of [A-Za-z0-9._-]); the request_id of an error',
    schema: { type: 'string', example: EXAMPLE_REQUEST_ID },
  },
};

/** Sent on every response that went through the rate limit: authenticated requests (errors after authentication included), signup and login. */
export const RATE_LIMIT_HEADERS: HeadersObject = {
  'X-RateLimit-Limit': { required: true, description: 'Requests allowed per credential per 60-second window', schema: { type: 'integer', minimum: 1, example: 600 } },
  'X-RateLimit-Remaining': { required: true, description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0, example: 599 } },
  'X-RateLimit-Reset': { required: true, description: 'Unix time (seconds) when the current window ends', schema: { type: 'integer', minimum: 0, example: 1795262460 } },
};

export const RATE_LIMITED_RESPONSE_HEADERS: HeadersObject = { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS };

/** The answer carries a secret (a session token, an API key's token): no cache or proxy may keep it. */
export const NO_STORE_HEADER: HeadersObject = {
  'Cache-Control': { required: true, description: '`no-store`: the answer carries a secret that no cache may keep', schema: { type: 'string', enum: ['no-store'] } },
};

/** Why a field was refused (invalid_request). */
@ApiSchema({ name: 'FieldErrorDetails', description: 'invalid_request: the offending field, query parameter, path parameter or header' })
export class FieldErrorDetailsDto {
  @ApiProperty({ example: 'term_months' })
  field: string;
}

/** What was missing (insufficient_balance). */
@ApiSchema({ name: 'InsufficientBalanceDetails', description: 'insufficient_balance: the price, what the wallet has available, in which currency' })
export class InsufficientBalanceDetailsDto {
  @ApiProperty({ description: 'Decimal string in the currency', example: '24.00000' })
  required: string;

  @ApiProperty({ description: 'Decimal string in the currency', example: '10.00000' })
  available: string;

  @ApiProperty({ enum: CURRENCIES, example: 'USD' })
  currency: string;
}

/** The limit reached (quota_exceeded). */
@ApiSchema({ name: 'QuotaExceededDetails', description: 'quota_exceeded: the limit that was reached' })
export class QuotaExceededDetailsDto {
  @ApiProperty({ type: 'integer', example: 20 })
  limit: number;

  @ApiPropertyOptional({ description: 'The server that holds its limit of data disks (purchase, attach)', example: 'vm_demoweb1' })
  server_id?: string;
}

/** The operation in the way (invalid_state on a volume action). */
@ApiSchema({ name: 'OperationInTheWayDetails', description: 'invalid_state of a volume action refused because of an unfinished operation: that operation' })
export class OperationInTheWayDetailsDto {
  @ApiProperty({ example: 'op_8fKq2LmX9vR4tW7yZ3bN5cHd' })
  operation_id: string;
}

/** What is in the way (conflict on SSH keys and firewall rules). */
@ApiSchema({ name: 'ConflictDetails', description: 'conflict: the resource that holds the name or value asked for (a server, an SSH key, a firewall rule), and (SSH keys) which member it shares' })
export class ConflictDetailsDto {
  @ApiProperty({ example: 'ssh_4fTq9LmX2vR8tW7yZ3bN5cHd' })
  existing_id: string;

  @ApiPropertyOptional({ enum: ['public_key', 'name'], description: 'SSH keys: public_key (the fingerprint is taken) or name', example: 'public_key' })
  field?: string;
}

/** The state in the way (invalid_state of a top-up cancel). */
@ApiSchema({ name: 'ResourceStateDetails', description: 'invalid_state refused because of the resource\'s status: that status' })
export class ResourceStateDetailsDto {
  @ApiProperty({ example: 'succeeded' })
  status: string;
}

/** The instance in the way (invalid_state of a server action while its instance is missing at the provider). */
@ApiSchema({ name: 'InstanceMissingDetails', description: 'invalid_state of a server power action or renewal refused because its instance is missing at the compute provider: since when' })
export class InstanceMissingDetailsDto {
  @ApiProperty({ format: 'date-time', example: '2026-11-27T10:00:00.000Z' })
  instance_missing_since: string;
}

/** The term in the way (invalid_state of an action on a suspended resource, terms.md). */
@ApiSchema({ name: 'SuspendedDetails', description: 'invalid_state of an action refused because the server or volume is suspended (its term ended): renew it first' })
export class SuspendedDetailsDto {
  @ApiProperty({ enum: ['suspended'], example: 'suspended' })
  reason: string;
}

/** Why a request was refused (forbidden because the organization is suspended by the service's staff). */
@ApiSchema({ name: 'ForbiddenReasonDetails', description: 'forbidden because of the organization, not the caller: organization_suspended (every write refused, reads work; contact support)' })
export class ForbiddenReasonDetailsDto {
  @ApiProperty({ enum: ['organization_suspended'], example: 'organization_suspended' })
  reason: string;
}

/** `details` of every other code: an empty object. */
export const NO_DETAILS_SCHEMA: SchemaObject = { type: 'object', maxProperties: 0, description: 'Every other code: `{}`' };

/** Named ErrorBody, not Error: a schema named Error would shadow the built-in Error class in generated TypeScript. */
@ApiSchema({ name: 'ErrorBody', description: 'What went wrong; `code` is stable, `message` is for people' })
export class ErrorBodyDto {
  @ApiProperty({ enum: ERROR_CODES, description: 'The codes some route of this document answers', example: 'not_found' })
  code: ErrorCode;

  @ApiProperty({ example: 'Volume vol_demodata1 not found' })
  message: string;

  @ApiProperty({ description: 'The X-Request-Id of the request; quote it to support', example: EXAMPLE_REQUEST_ID })
  request_id: string;

  @ApiProperty({
    description: 'Extra data per code: FieldErrorDetails for invalid_request, InsufficientBalanceDetails for insufficient_balance, QuotaExceededDetails for quota_exceeded, OperationInTheWayDetails for invalid_state caused by an unfinished operation, ConflictDetails for conflict (a name or value taken), InstanceMissingDetails for a server action refused while its instance is missing, SuspendedDetails for an action refused on a suspended resource, ForbiddenReasonDetails for a write of a suspended organization, `{}` for the others',
    anyOf: [
      { $ref: getSchemaPath(FieldErrorDetailsDto) },
      { $ref: getSchemaPath(InsufficientBalanceDetailsDto) },
      { $ref: getSchemaPath(QuotaExceededDetailsDto) },
      { $ref: getSchemaPath(OperationInTheWayDetailsDto) },
      { $ref: getSchemaPath(ConflictDetailsDto) },
      { $ref: getSchemaPath(ResourceStateDetailsDto) },
      { $ref: getSchemaPath(InstanceMissingDetailsDto) },
      { $ref: getSchemaPath(SuspendedDetailsDto) },
      { $ref: getSchemaPath(ForbiddenReasonDetailsDto) },
      NO_DETAILS_SCHEMA,
    ],
    example: {},
  })
  details: Record<string, unknown>;
}

@ApiSchema({ name: 'ErrorEnvelope', description: 'The body of every error response' })
@ApiExtraModels(FieldErrorDetailsDto, InsufficientBalanceDetailsDto, QuotaExceededDetailsDto, OperationInTheWayDetailsDto, ConflictDetailsDto, ResourceStateDetailsDto, InstanceMissingDetailsDto, SuspendedDetailsDto, ForbiddenReasonDetailsDto)
export class ErrorEnvelopeDto {
  @ApiProperty({ type: () => ErrorBodyDto })
  error: ErrorBodyDto;
}

/**
 * A property holding an object of schema `model`, or null: `oneOf: [model, null]` in the form
 * OpenAPI 3.0 strict validators (ajv, jest-openapi) and client generators all read as `Model | null`.
 * (`nullable: true` next to `allOf`/`$ref` does not admit null under 3.0: the allOf still requires an object.)
 */
export const NULL_SCHEMA: SchemaObject = { type: 'object', nullable: true, enum: [null], description: 'null' };
/** A schema class (an @ApiSchema DTO). */
export type SchemaClass = new (...args: never[]) => unknown;
export function nullableRef(model: SchemaClass): { oneOf: (SchemaObject | ReferenceObject)[] } {
  return { oneOf: [{ $ref: getSchemaPath(model) }, NULL_SCHEMA] };
}

/**
 * Schemas the document shows as a union (oneOf) of variants that one member tells apart, each
 * variant fixing its value with a one-value enum (so generated clients narrow on it, e.g.
 * `if (op.type === 'volume.create') op.result` is that type's result): registered by the module
 * that owns the schema, applied by finishDocument. The class named `name` stays the schema every
 * reference points to; its body is replaced by the oneOf.
 */
const UNION_SCHEMAS = new Map<string, { description: string; variants: SchemaClass[] }>();
export function unionSchema(name: string, description: string, variants: SchemaClass[]): void {
  UNION_SCHEMAS.set(name, { description, variants });
}

/** An example message (and details) for each code, in the words the service uses, on the demo data. */
const EXAMPLES: Record<ErrorCode, { message: string; details?: Record<string, unknown> }> = {
  invalid_request: { message: 'Request body is not valid JSON', details: { field: 'body' } },
  unauthorized: { message: 'Invalid token' },
  invalid_credentials: { message: 'Wrong email or password' },
  insufficient_balance: {
    message: 'The wallet cannot cover the price',
    details: { required: '24.00000', available: '10.00000', currency: 'USD' },
  },
  forbidden: { message: 'The API key lacks the scope vm:write' },
  not_found: { message: 'Volume vol_demodata1 not found' },
  method_not_allowed: { message: 'Method DELETE is not allowed on /v1/wallet; allowed: GET, HEAD' },
  invalid_state: { message: 'Volume vol_demodata1 has an operation in progress' },
  out_of_stock: { message: 'Region id-jkt has no disk capacity left' },
  quota_exceeded: { message: 'The account has 20 API keys already' },
  quote_expired: { message: 'The quote is older than 10 minutes; request a new one' },
  idempotency_conflict: { message: 'Idempotency-Key was already used with a different request' },
  conflict: { message: 'A user with this email exists already' },
  rate_limited: { message: 'Too many requests; retry after the number of seconds in Retry-After' },
  internal: { message: 'Internal server error; retry, and quote the request_id to support if it persists' },
  funding_unavailable: { message: 'Funding verification is temporarily unavailable' },
  purchases_paused: { message: 'New purchases are paused; no credit was reserved' },
  provider_unavailable: { message: 'The infrastructure provider is temporarily unavailable; retry shortly' },
};

/** A body over the limit (64 KiB; 16 KiB on signup and login): status 413, code invalid_request. */
export const PAYLOAD_TOO_LARGE = 'payload_too_large';
/** A compressed body (Content-Encoding other than identity): status 415, code invalid_request. */
export const UNSUPPORTED_ENCODING = 'unsupported_encoding';
export type DocumentedError = ErrorCode | typeof PAYLOAD_TOO_LARGE | typeof UNSUPPORTED_ENCODING;

function statusOf(error: DocumentedError): number {
  return error === PAYLOAD_TOO_LARGE ? 413 : error === UNSUPPORTED_ENCODING ? 415 : STATUS_OF[error];
}

function example(error: DocumentedError): { summary: string; value: unknown } {
  const code: ErrorCode = error === PAYLOAD_TOO_LARGE || error === UNSUPPORTED_ENCODING ? 'invalid_request' : error;
  const { message, details } =
    error === PAYLOAD_TOO_LARGE
      ? { message: 'Request body is larger than 64 KiB', details: undefined }
      : error === UNSUPPORTED_ENCODING
        ? { message: 'Compressed request bodies are not accepted (Content-Encoding: br); send the body uncompressed', details: undefined }
        : EXAMPLES[error];
  return { summary: code, value: { error: { code, message, request_id: EXAMPLE_REQUEST_ID, details: details ?? {} } } };
}

/**
 * What every route can answer, whatever it declares: a body that is not JSON or nests too deep
 * (400 invalid_request; the body is read after the guards, on every method), a body over the
 * limit (413), a compressed body (415), a NUL in a path parameter (400), an unexpected failure (500).
 */
export const ANY_ROUTE_ERRORS: DocumentedError[] = ['invalid_request', PAYLOAD_TOO_LARGE, UNSUPPORTED_ENCODING, 'internal'];

/**
 * Documents the error answers of a route, grouped by status, each with the ErrorEnvelope
 * schema and an example per code: `@ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')`.
 * ANY_ROUTE_ERRORS (400, 413, 415, 500) are added to every route.
 */
export function ApiErrors(...errors: DocumentedError[]): MethodDecorator & ClassDecorator {
  const all = [...new Set<DocumentedError>([...errors, ...ANY_ROUTE_ERRORS])];
  const byStatus = new Map<number, DocumentedError[]>();
  for (const e of all) byStatus.set(statusOf(e), [...(byStatus.get(statusOf(e)) ?? []), e]);
  const decorators = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, list]) => {
      const codes = [...new Set(list.map((e) => (e === PAYLOAD_TOO_LARGE || e === UNSUPPORTED_ENCODING ? 'invalid_request' : e)))];
      const headers: HeadersObject = { ...REQUEST_ID_HEADER };
      if (status === 429) {
        Object.assign(headers, RATE_LIMIT_HEADERS, {
          'Retry-After': { required: true, description: 'Whole seconds to wait before retrying (at least 1)', schema: { type: 'integer', minimum: 1, example: 42 } },
        });
      }
      // Explicit JSON content: errors are JSON even on a route that produces CSS or HTML.
      return ApiResponse({
        status,
        description: `Error${codes.length > 1 ? 's' : ''}: ${codes.map((c) => `\`${c}\``).join(', ')}${status === 413 ? ' (body over 64 KiB; 16 KiB on signup and login)' : status === 415 ? ' (compressed body: send it uncompressed)' : ''}`,
        headers,
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorEnvelopeDto) },
            examples: Object.fromEntries(list.map((e) => [e, example(e)])),
          },
        },
      });
    });
  return applyDecorators(ApiExtraModels(ErrorEnvelopeDto), ...decorators);
}

/** A route that needs `Authorization: Bearer <token>`; sessions may pick the organization with X-Org-ID. */
export function ApiAuthenticated(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(BEARER_SCHEME),
    ApiHeader({
      name: 'X-Org-ID',
      required: false,
      description:
        'Sessions only: the organization to act on (the caller must be a member; otherwise 403). ' +
        "Without it, the user's first organization. Ignored with an API key, which belongs to one organization. " +
        'Its ids: GET /v1/organizations.',
      // No example: Swagger UI's "Try it out" would prefill it and send another organization's id (403).
      schema: { type: 'string' },
    }),
  );
}

/** Extensions the document builder reads (then removes) to add what a route's helpers declare. */
const X_REPLAYED = 'x-cds-replayed-statuses';
const X_CONDITIONAL = 'x-cds-conditional-get';
const X_EVERY_RESPONSE = 'x-cds-every-response-headers';

/**
 * A route that takes an Idempotency-Key (IdempotentExecution): the header, and
 * `Idempotent-Replayed: true` on every answer that is stored and replayed (`statuses`: its 2xx and
 * the statuses of the stored error codes).
 */
export function ApiIdempotencyKey(statuses: number[]): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Any unique string (a UUID), 1-255 printable ASCII characters, kept 24 hours per organization. Repeating the request with ' +
        'the same key returns the original answer (same status and body, header Idempotent-Replayed: true) and charges nothing again; ' +
        'the same key with a different request is 409 idempotency_conflict.',
      schema: { type: 'string', minLength: 1, maxLength: 255, example: '3f1c9a52-7a4e-4d0b-9a8e-2b6f0d1c7e45' },
    }),
    ApiExtension(X_REPLAYED, statuses),
  );
}

export const IDEMPOTENT_REPLAYED_HEADER: HeadersObject = {
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key (absent otherwise)',
    schema: { type: 'string', enum: ['true'] },
  },
};

/**
 * A GET that answers with an ETag and honours If-None-Match (304 Not Modified, no body). The
 * service sends no ETag elsewhere (Express's automatic ETag is off, app.factory.ts): a route that
 * sets one declares it with this helper.
 */
export function ApiConditionalGet(): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'The ETag of a previous answer: 304 without a body while the resource is unchanged',
      schema: { type: 'string', example: 'W/"5a-3f1c9a52"' },
    }),
    ApiExtension(X_CONDITIONAL, true),
  );
}

/**
 * Headers a route sends on every answer, errors included (Nest's `@Header()` sets them before
 * the handler runs): `@ApiHeadersOnEveryResponse({ 'Cache-Control': {...} })`.
 */
export function ApiHeadersOnEveryResponse(headers: HeadersObject): MethodDecorator {
  return ApiExtension(X_EVERY_RESPONSE, headers);
}

export const ETAG_HEADER: HeadersObject = {
  ETag: { required: true, description: 'Version of this representation; send it as If-None-Match', schema: { type: 'string', example: 'W/"5a-3f1c9a52"' } },
};

const DESCRIPTION = `Cloud Disk Service: virtual servers (buying, power, renewal, consoles, templates, SSH keys, firewall rules) and block disks (volumes), the operations that carry them out, a prepaid wallet (USD, IDR) filled through a hosted checkout, and signed event webhooks.

**Authentication.** Every request but signup, login, health and these docs sends \`Authorization: Bearer <token>\`:
an API key (\`cds_live_…\`, carries scopes: \`vm:read\`, \`vm:write\`, \`billing:read\`, \`billing:write\`, \`webhooks:write\`, \`audit:read\`) or a session token (\`cds_sess_…\`, from signup or login,
valid 24 hours, acts with the user's role). Sessions may send \`X-Org-ID\` to pick an organization.

**Errors.** Every error is \`{"error": {"code", "message", "request_id", "details"}}\` (schema ErrorEnvelope).
A known path with the wrong method answers 405 \`method_not_allowed\` with an \`Allow\` header; an unknown path 404 \`not_found\`.

**Rate limits.** Per credential (per client IP for signup and login) per fixed 60-second window; authenticated
responses carry X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset; a 429 carries Retry-After.

**Money.** Amounts are decimal strings: USD with five decimals (\`"2.00000"\`), IDR whole rupiah (\`"32000"\`).`;

/** Builds the OpenAPI 3 document of the application from its controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication, options: { exclude?: Type<unknown>[] } = {}): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Cloud Disk Service API')
    .setVersion('1')
    .setDescription(DESCRIPTION)
    .addServer('/', 'This service (every path starts with /v1)')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'cds_live_… (API key) or cds_sess_… (session token)',
        description: 'An API key (`cds_live_` + 32 or more characters) or a session token (`cds_sess_` + 32 or more characters)',
      },
      BEARER_SCHEME,
    )
    .addTag('Auth', 'Accounts and session tokens')
    .addTag('Wallet', 'Prepaid credit per currency')
    .addTag('Volumes', 'Block disks and their renewal')
    .addTag('Snapshots', 'Point-in-time copies of disks, prepaid, restored as new disks')
    .addTag('Images', "The catalog's images and the organization's server images: copies of servers' boot disks, prepaid, to buy or rebuild servers from")
    .addTag('Networks', "Private networks of the organization's servers in a region (an RFC 1918 range; free)")
    .addTag('Reserved IPs', "IPv4 addresses of a region's pool, prepaid, assigned to one server at a time and kept across servers")
    .addTag('API keys', 'Tokens for programs, created and revoked by admins and owners')
    .addTag('Members', 'Who belongs to the organization, and with which role')
    .addTag('Organizations', "The caller's organizations: list, create, rename")
    .addTag('Invitations', 'Joining an organization: invited by an admin, accepted by the invitee')
    .addTag('Audit log', 'Who did what, when and from where')
    .addTag('Operations', 'Progress of actions that take time')
    .addTag('Volume options', 'What can be bought in a region')
    .addTag('Server options', 'Server plans, prices, terms, stock, zones and images of a region')
    .addTag('Servers', 'Virtual servers: reads and edits')
    .addTag('Templates', 'One-click applications and their deployments on servers (free of charge)')
    .addTag('Regions', 'Regions and zones')
    .addTag('Health', 'Probes for load balancers and orchestrators')
    .addTag('Documentation', 'This document and its page')
    .addTag('SSH keys', 'Public keys given to servers at their creation')
    .addTag('Firewall rules', 'Allow rules for inbound and outbound traffic of servers')
    .addTag('Webhook endpoints', 'Where events are delivered, signed, and the log of their deliveries')
    .addTag('Payment provider callbacks', "Called by the payment provider (signed), not by API clients: the hosted checkout's events")
    .build();
  const excluded = new Set(options.exclude ?? []);
  const include = excluded.size === 0 ? [] : [...app.get(ModulesContainer).values()].map((m) => m.metatype).filter((m) => !excluded.has(m));
  const document = SwaggerModule.createDocument(app, config, {
    include,
    // Routes name their operationId (`@ApiOperation({ operationId: 'renewVolume' })`); the fallback is the
    // method and the controller: VolumesController.list -> listVolumes.
    operationIdFactory: (controllerKey: string, methodKey: string) => `${methodKey}${controllerKey.replace(/Controller$/, '')}`,
  });
  return finishDocument(document);
}

interface DocumentedResponse {
  description?: string;
  headers?: HeadersObject;
  content?: Record<string, { examples?: Record<string, unknown> }>;
}
interface DocumentedOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: unknown[];
  responses?: Record<string, DocumentedResponse>;
  [extension: `x-${string}`]: unknown;
}

/** Codes the framework answers on requests no route takes (unknown path, wrong method). */
const UNMATCHED_CODES: ErrorCode[] = ['not_found', 'method_not_allowed'];

/**
 * What the decorators cannot say, added to every operation, so a route added later inherits it:
 * rate-limit headers on the errors of rate-limited routes, Idempotent-Replayed on stored answers,
 * ETag and 304 on conditional GETs, `security: []` on public routes, a HEAD operation for every
 * GET (Express answers HEAD on GET routes), and the error codes the routes declare as the enum
 * of ErrorBody.code.
 */
export function finishDocument(document: OpenAPIObject): OpenAPIObject {
  withRateLimitHeadersOnErrors(document);
  withClosedRequestBodies(document);
  const codes = new Set<string>(UNMATCHED_CODES);
  for (const item of Object.values(document.paths) as Record<string, DocumentedOperation>[]) {
    for (const operation of Object.values(item)) {
      const responses = operation.responses ?? {};
      const replayed = operation[X_REPLAYED] as number[] | undefined;
      delete operation[X_REPLAYED];
      for (const status of replayed ?? []) {
        const response = responses[String(status)];
        if (!response) throw new Error(`${operation.operationId}: no ${status} response to mark Idempotent-Replayed`);
        response.headers = { ...response.headers, ...IDEMPOTENT_REPLAYED_HEADER };
      }
      const everyResponse = operation[X_EVERY_RESPONSE] as HeadersObject | undefined;
      delete operation[X_EVERY_RESPONSE];
      for (const response of Object.values(responses)) if (everyResponse) response.headers = { ...response.headers, ...everyResponse };
      if (operation[X_CONDITIONAL]) {
        delete operation[X_CONDITIONAL];
        const ok = responses['200'];
        if (!ok) throw new Error(`${operation.operationId}: a conditional GET needs a 200 response`);
        ok.headers = { ...ok.headers, ...ETAG_HEADER };
        responses['304'] = {
          description: 'Not modified: the ETag sent in If-None-Match is still current; no body',
          headers: { ...(ok.headers ?? REQUEST_ID_HEADER) },
        };
      }
      for (const [status, response] of Object.entries(responses)) {
        if (/^2\d\d$/.test(status) && !response.description) response.description = operation.summary ?? 'Success';
        for (const example of Object.values(response.content?.['application/json']?.examples ?? {}) as { value?: { error?: { code?: string } } }[]) {
          if (example.value?.error?.code) codes.add(example.value.error.code);
        }
      }
      operation.security ??= [];
    }
    const get = item.get;
    if (get && !item.head) item.head = headOf(get);
  }
  for (const [name, union] of UNION_SCHEMAS) {
    const schemas = document.components?.schemas;
    if (!schemas?.[name]) continue;
    schemas[name] = { description: union.description, oneOf: union.variants.map((v) => ({ $ref: getSchemaPath(v) })) };
  }
  withDiscriminators(document);
  const errorBody = document.components?.schemas?.ErrorBody as { properties: { code: { enum: string[] } } } | undefined;
  if (errorBody) errorBody.properties.code.enum = ERROR_CODES.filter((c) => codes.has(c));
  return document;
}

/** Routes whose body comes from a payment provider, which sends members this service does not read. */
const OPEN_BODY_PATHS = /^\/v1\/payment-events\//;

/**
 * `additionalProperties: false` on every JSON request body's object schema (the component a body
 * refers to, or the inline schema): the validation pipe refuses an unknown member with 400
 * naming it. The inbound payment events excepted.
 */
export function withClosedRequestBodies(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject | ReferenceObject>;
  for (const [path, item] of Object.entries(document.paths) as [string, Record<string, DocumentedOperation>][]) {
    if (OPEN_BODY_PATHS.test(path)) continue;
    for (const operation of Object.values(item)) {
      const body = (operation as { requestBody?: unknown }).requestBody as { content?: Record<string, { schema?: SchemaObject | ReferenceObject }> } | undefined;
      for (const media of Object.values(body?.content ?? {})) {
        let schema = media.schema;
        if (schema && '$ref' in schema) schema = schemas[schema.$ref.replace('#/components/schemas/', '')];
        if (schema && !('$ref' in schema) && (schema.type === 'object' || schema.properties)) schema.additionalProperties = false;
      }
    }
  }
  return document;
}

/**
 * `discriminator: {propertyName, mapping}` on every oneOf of schema references that one member
 * tells apart: a member every variant requires and fixes to a value of its own (a one-value enum),
 * as `type` in Operation's variants and `kind` in Quote's. Derived from the variants themselves,
 * so a variant added to a union (a new operation type) is in the mapping without naming it here.
 * Generators that deserialize a oneOf by its discriminator (openapi-generator's Go, Java, Python)
 * need the keyword and its mapping; validators and TypeScript generators narrow on the enums alone.
 */
export function withDiscriminators(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  const resolve = (ref: string): SchemaObject | undefined => schemas[ref.replace('#/components/schemas/', '')];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    const schema = node as SchemaObject;
    const discriminator = schema.oneOf && !schema.discriminator ? discriminatorOf(schema.oneOf, resolve) : undefined;
    if (discriminator) {
      // Strict validators want the type a discriminator applies to: the variants are objects.
      schema.type ??= 'object';
      schema.discriminator = discriminator;
    }
    for (const value of Object.values(schema)) visit(value);
  };
  visit(schemas);
  return document;
}

/** The member that tells the variants apart, and each value's variant; undefined when none does. */
function discriminatorOf(
  variants: (SchemaObject | ReferenceObject)[],
  resolve: (ref: string) => SchemaObject | undefined,
): { propertyName: string; mapping: Record<string, string> } | undefined {
  const refs = variants.map((v) => ('$ref' in v ? v.$ref : undefined));
  if (refs.length < 2 || refs.some((r) => r === undefined)) return undefined;
  const targets = refs.map((r) => resolve(r as string));
  if (targets.some((t) => !t?.properties)) return undefined;
  /** The one value a variant fixes `name` to, if it requires it and fixes it. */
  const fixed = (target: SchemaObject, name: string): unknown => {
    const property = target.properties?.[name] as SchemaObject | undefined;
    return target.required?.includes(name) && property?.enum?.length === 1 && typeof property.enum[0] === 'string' ? property.enum[0] : undefined;
  };
  for (const name of Object.keys(targets[0]!.properties!)) {
    const values = targets.map((t) => fixed(t!, name));
    if (values.some((v) => v === undefined) || new Set(values).size !== values.length) continue;
    return { propertyName: name, mapping: Object.fromEntries(values.map((v, i) => [v as string, refs[i] as string])) };
  }
  return undefined;
}

/** The HEAD of a GET: the same parameters, security and responses (status and headers), without bodies. */
function headOf(get: DocumentedOperation): DocumentedOperation {
  const id = get.operationId ?? 'get';
  const responses = Object.fromEntries(
    Object.entries(get.responses ?? {}).map(([status, r]) => [status, { description: r.description ?? status, ...(r.headers ? { headers: r.headers } : {}) }]),
  );
  return {
    ...get,
    operationId: `head${id.replace(/^(get|list)/, '').replace(/^./, (c) => c.toUpperCase())}`,
    summary: `Headers of: ${get.summary ?? id}`,
    description: 'The same answer as the GET (status and headers), without a body.',
    responses,
  };
}

/**
 * X-Request-Id on every response. On a rate-limited route (authenticated, or its success
 * response documents X-RateLimit-*), X-RateLimit-* on its 2xx and on every error answered after
 * the rate limit: all of them but a 401 `unauthorized`, which is refused before the rate limit is
 * counted (decisions.md check order). A route added later gets them without naming them.
 */
export function withRateLimitHeadersOnErrors(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, DocumentedOperation>)) {
      const responses = operation?.responses;
      if (!responses) continue;
      // Authenticated routes are always rate limited (per credential); public ones say so on their 2xx.
      const authenticated = (operation.security ?? []).some((r) => BEARER_SCHEME in r);
      const limited = authenticated || Object.entries(responses).some(([status, r]) => /^2\d\d$/.test(status) && r.headers?.['X-RateLimit-Limit']);
      for (const response of Object.values(responses)) response.headers = { ...REQUEST_ID_HEADER, ...response.headers };
      if (!limited) continue;
      for (const [status, response] of Object.entries(responses)) {
        if (/^2\d\d$/.test(status)) response.headers = { ...RATE_LIMITED_RESPONSE_HEADERS, ...response.headers };
        if (Number(status) < 400) continue;
        const codes = Object.keys(response.content?.['application/json']?.examples ?? {});
        if (status === '401' && codes.every((code) => code === 'unauthorized')) continue;
        // A 500 may come before the rate limit counted the request (say, the database failed during authentication).
        const rateLimit = status === '500' ? OPTIONAL_RATE_LIMIT_HEADERS : RATE_LIMIT_HEADERS;
        responses[status] = { ...response, headers: { ...REQUEST_ID_HEADER, ...rateLimit, ...response.headers } };
      }
    }
  }
  return document;
}

const OPTIONAL_RATE_LIMIT_HEADERS: HeadersObject = Object.fromEntries(
  Object.entries(RATE_LIMIT_HEADERS).map(([name, h]) => [name, { ...h, required: false, description: `${(h as { description?: string }).description} (when the request was counted)` }]),
);

/** The application's OpenAPI document, built once, at its first request. */
@Injectable()
export class OpenApiDocument {
  private factory: (() => OpenAPIObject) | undefined;
  private document: OpenAPIObject | undefined;

  buildWith(factory: () => OpenAPIObject): void {
    this.factory = factory;
    this.document = undefined;
  }

  get(): OpenAPIObject {
    if (!this.document) {
      if (!this.factory) throw new Error('The OpenAPI document has no builder');
      this.document = this.factory();
    }
    return this.document;
  }
}

/** Schemas several resources share (a price per GB-month in both currencies; a server reference). */
@ApiSchema({ name: 'PricePerGbMonth', description: 'Price per GB per month: USD with five decimals, IDR whole rupiah; strings' })
export class PricePerGbMonthSchema {
  @ApiProperty({ example: '0.02000' })
  USD: string;

  @ApiProperty({ example: '320' })
  IDR: string;
}

@ApiSchema({ name: 'ServerRef', description: 'A server (VPS), by id and name' })
export class ServerRefSchema {
  @ApiProperty({ example: 'vm_demoweb1' })
  id: string;

  @ApiProperty({ example: 'web-1' })
  name: string;
}
