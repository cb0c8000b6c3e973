import { INestApplication, Injectable, applyDecorators } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiHeader,
  ApiProperty,
  ApiResponse,
  ApiSchema,
  DocumentBuilder,
  HeadersObject,
  OpenAPIObject,
  SwaggerModule,
  getSchemaPath,
} from '@nestjs/swagger';
import { ErrorCode } from '../kernel/errors/domain-error';
import { STATUS_OF } from './error-envelope';

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
    description: 'Identifier of this request (the incoming X-Request-Id when valid: 1-128 of [A-Za-z0-9._-]); the request_id of an error',
    schema: { type: 'string', example: EXAMPLE_REQUEST_ID },
  },
};

/** Sent on every response that went through the rate limit: authenticated requests (errors after authentication included), signup and login. */
export const RATE_LIMIT_HEADERS: HeadersObject = {
  'X-RateLimit-Limit': { description: 'Requests allowed per credential per 60-second window', schema: { type: 'integer', example: 600 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer', example: 599 } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when the current window ends', schema: { type: 'integer', example: 1795262460 } },
};

export const RATE_LIMITED_RESPONSE_HEADERS: HeadersObject = { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS };

@ApiSchema({ name: 'Error', description: 'What went wrong; `code` is stable, `message` is for people' })
export class ErrorBodyDto {
  @ApiProperty({ enum: ERROR_CODES, example: 'not_found' })
  code: ErrorCode;

  @ApiProperty({ example: 'Volume vol_demodata1 not found' })
  message: string;

  @ApiProperty({ description: 'The X-Request-Id of the request; quote it to support', example: EXAMPLE_REQUEST_ID })
  request_id: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Extra data, `{}` when none: `field` for invalid_request; `required`, `available`, `currency` for insufficient_balance',
    example: {},
  })
  details: Record<string, unknown>;
}

@ApiSchema({ name: 'ErrorEnvelope', description: 'The body of every error response' })
export class ErrorEnvelopeDto {
  @ApiProperty({ type: () => ErrorBodyDto })
  error: ErrorBodyDto;
}

/** An example message (and details) for each code, in the words the service uses, on the demo data. */
const EXAMPLES: Record<ErrorCode, { message: string; details?: Record<string, unknown> }> = {
  invalid_request: { message: 'term_months must be one of the following values: 1, 3, 12', details: { field: 'term_months' } },
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

/** A body over 1 MiB: status 413, code invalid_request. */
export const PAYLOAD_TOO_LARGE = 'payload_too_large';
export type DocumentedError = ErrorCode | typeof PAYLOAD_TOO_LARGE;

function statusOf(error: DocumentedError): number {
  return error === PAYLOAD_TOO_LARGE ? 413 : STATUS_OF[error];
}

function example(error: DocumentedError): { summary: string; value: unknown } {
  const code: ErrorCode = error === PAYLOAD_TOO_LARGE ? 'invalid_request' : error;
  const { message, details } =
    error === PAYLOAD_TOO_LARGE ? { message: 'Request body is larger than 1 MiB', details: undefined } : EXAMPLES[error];
  return { summary: code, value: { error: { code, message, request_id: EXAMPLE_REQUEST_ID, details: details ?? {} } } };
}

/**
 * Documents the error answers of a route, grouped by status, each with the ErrorEnvelope
 * schema and an example per code: `@ApiErrors('unauthorized', 'forbidden', 'not_found', 'rate_limited')`.
 * 500 internal is added to every route.
 */
export function ApiErrors(...errors: DocumentedError[]): MethodDecorator & ClassDecorator {
  const all = [...new Set<DocumentedError>([...errors, 'internal'])];
  const byStatus = new Map<number, DocumentedError[]>();
  for (const e of all) byStatus.set(statusOf(e), [...(byStatus.get(statusOf(e)) ?? []), e]);
  const decorators = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, list]) => {
      const codes = [...new Set(list.map((e) => (e === PAYLOAD_TOO_LARGE ? 'invalid_request' : e)))];
      const headers: HeadersObject = { ...REQUEST_ID_HEADER };
      if (status === 429) {
        Object.assign(headers, RATE_LIMIT_HEADERS, {
          'Retry-After': { description: 'Whole seconds to wait before retrying (at least 1)', schema: { type: 'integer', example: 42 } },
        });
      }
      // Explicit JSON content: errors are JSON even on a route that produces CSS or HTML.
      return ApiResponse({
        status,
        description: `Error${codes.length > 1 ? 's' : ''}: ${codes.map((c) => `\`${c}\``).join(', ')}${status === 413 ? ' (body over 1 MiB)' : ''}`,
        headers,
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorEnvelopeDto) },
            examples: Object.fromEntries(list.map((e) => [e === PAYLOAD_TOO_LARGE ? 'payload_too_large' : e, example(e)])),
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
        "Without it, the user's first organization. Ignored with an API key, which belongs to one organization.",
      schema: { type: 'string', example: 'org_demo' },
    }),
  );
}

const DESCRIPTION = `Cloud Disk Service: block disks (volumes), their renewal, operations and a prepaid wallet (USD, IDR).

**Authentication.** Every request but signup, login, health and these docs sends \`Authorization: Bearer <token>\`:
an API key (\`cds_live_…\`, carries scopes \`vm:read\`/\`vm:write\`) or a session token (\`cds_sess_…\`, from signup or login,
valid 24 hours, acts with the user's role). Sessions may send \`X-Org-ID\` to pick an organization.

**Errors.** Every error is \`{"error": {"code", "message", "request_id", "details"}}\` (schema ErrorEnvelope).
A known path with the wrong method answers 405 \`method_not_allowed\` with an \`Allow\` header; an unknown path 404 \`not_found\`.

**Rate limits.** Per credential (per client IP for signup and login) per fixed 60-second window; authenticated
responses carry X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset; a 429 carries Retry-After.

**Money.** Amounts are decimal strings: USD with five decimals (\`"2.00000"\`), IDR whole rupiah (\`"32000"\`).`;

/** Builds the OpenAPI 3 document of the application from its controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Cloud Disk Service API')
    .setVersion('1')
    .setDescription(DESCRIPTION)
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
    .addTag('Operations', 'Progress of actions that take time')
    .addTag('Volume options', 'What can be bought in a region')
    .addTag('Regions', 'Regions and zones')
    .addTag('Health', 'Probes for load balancers and orchestrators')
    .addTag('Documentation', 'This document and its page')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controllerKey: string, methodKey: string) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  return withRateLimitHeadersOnErrors(document);
}

interface DocumentedResponse {
  headers?: HeadersObject;
  content?: Record<string, { examples?: Record<string, unknown> }>;
}

/**
 * On a rate-limited route (its success response documents X-RateLimit-*), every error answered
 * after the rate limit carries the same headers: all of them but a 401 `unauthorized`, which is
 * refused before the rate limit is counted (decisions.md check order).
 */
export function withRateLimitHeadersOnErrors(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, DocumentedResponse> }>)) {
      const responses = operation?.responses;
      if (!responses) continue;
      const limited = Object.entries(responses).some(([status, r]) => /^2\d\d$/.test(status) && r.headers?.['X-RateLimit-Limit']);
      if (!limited) continue;
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        const codes = Object.keys(response.content?.['application/json']?.examples ?? {});
        if (status === '401' && codes.every((code) => code === 'unauthorized')) continue;
        responses[status] = { ...response, headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS, ...response.headers } };
      }
    }
  }
  return document;
}

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
