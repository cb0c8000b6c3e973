import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { ValidationError, getMetadataStorage, validate } from 'class-validator';
import { DomainError, invalidRequest } from '../kernel/errors/domain-error';
import { refuseUnknownMembers, unknownMemberMessage } from '../kernel/errors/unknown-members';

export function firstValidationError(errors: ValidationError[], parent = ''): { field: string; message: string } | undefined {
  for (const error of errors) {
    const field = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints?.whitelistValidation) {
      // forbidNonWhitelisted: a member the (nested) DTO does not declare.
      return { field, message: unknownMemberMessage(field) };
    }
    const constraints = error.constraints ? Object.values(error.constraints) : [];
    if (constraints.length > 0) {
      // class-validator messages start with the property name; show the full path instead.
      const message = constraints[0].startsWith(error.property)
        ? field + constraints[0].slice(error.property.length)
        : `${field}: ${constraints[0]}`;
      return { field, message };
    }
    const nested = firstValidationError(error.children ?? [], field);
    if (nested) return nested;
  }
  return undefined;
}

/** class-transformer's registry of @Type decorators (not exported from its entry point). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

const PRIMITIVES: unknown[] = [String, Boolean, Number, Array, Object];


/**
 * The path of the first string holding the NUL character (U+0000), which PostgreSQL text cannot
 * store (it would fail the query: a 500). Object keys are not searched: unknown members are dropped.
 */
export function nulCharacterPath(value: unknown, path = '', depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > 32) return undefined;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [`${path}[${i}]`, v])
    : Object.entries(value).map(([k, v]) => [path ? `${path}.${k}` : k, v]);
  for (const [childPath, child] of entries) {
    const found = nulCharacterPath(child, childPath, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

function refuseNul(value: unknown, path: string, fallback: string): void {
  const nulAt = nulCharacterPath(value, path);
  if (nulAt !== undefined) {
    const field = nulAt || fallback;
    throw invalidRequest(`${field} must not contain NUL (\\u0000) characters`, { field });
  }
}

const declaredMembersCache = new WeakMap<object, readonly string[]>();

/** The members a DTO class declares (those with a class-validator decorator), cached per class. */
function declaredMembers(metatype: new () => object): readonly string[] {
  let members = declaredMembersCache.get(metatype);
  if (!members) {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
    members = [...new Set(metadata.map((m) => m.propertyName))];
    declaredMembersCache.set(metatype, members);
  }
  return members;
}

/**
 * Only the members the DTO declares, before class-transformer sees the value (class-transformer's
 * handling of member names is quadratic in their count, and would run before the whitelist). In a
 * body, an unknown member is refused (400 naming it) at once; in a query, unknown parameters are
 * dropped.
 */
function declaredOnly(metatype: new () => object, value: object, refuseUnknown: boolean): Record<string, unknown> {
  const declared = declaredMembers(metatype);
  if (refuseUnknown) refuseUnknownMembers(value as Record<string, unknown>, declared);
  const out: Record<string, unknown> = {};
  for (const key of declared) {
    if (Object.prototype.hasOwnProperty.call(value, key)) out[key] = (value as Record<string, unknown>)[key];
  }
  return out;
}

/** How many validated query strings the pipe remembers (per process, all routes together). */
export const VALIDATED_QUERIES_KEPT = 1000;

type QueryOutcome = { members: Record<string, unknown> } | { error: { field: string; message: string } };

/**
 * Validates bodies and queries against their DTO class. A member of a body that its DTO (or a
 * nested DTO) does not declare is 400 invalid_request naming it; unknown query parameters are
 * dropped, never trusted; the first failure answers 400 invalid_request naming the field. A NUL
 * character in a path parameter, a query value or a body string is refused the same way.
 *
 * Queries repeat (the same filters, page after page, from every client) and validating one is
 * pure (strings in, no transforms, no validator that reads anything else): the outcome for the
 * declared members sent is remembered, up to VALIDATED_QUERIES_KEPT, and a remembered query gets
 * a new DTO instance of its own.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly queries = new Map<string, QueryOutcome>();
  private readonly classKeys = new WeakMap<object, string>();
  private classCount = 0;

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    if (!metatype || PRIMITIVES.includes(metatype) || (metadata.type !== 'body' && metadata.type !== 'query')) {
      // Path parameters, single query values and bodies without a DTO class: the value as sent.
      if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
        refuseNul(value, metadata.data ?? '', metadata.type);
      }
      return value;
    }
    if (metadata.type === 'body' && value === undefined) {
      // No body was parsed: none was sent, or it came without Content-Type: application/json.
      throw invalidRequest('Request body must be a JSON object sent with the header Content-Type: application/json', { field: 'body' });
    }
    if (metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw invalidRequest('Request body must be a JSON object', { field: 'body' });
    }
    const dto = metatype as new () => object;
    const members = declaredOnly(dto, (value ?? {}) as object, metadata.type === 'body');
    if (metadata.type === 'body') return this.validated(dto, members, 'body');

    const key = `${this.classKey(dto)}${JSON.stringify(members)}`;
    let outcome = this.queries.get(key);
    if (!outcome) {
      try {
        outcome = { members: { ...(await this.validated(dto, members, 'query')) } };
      } catch (err) {
        const details = (err as { details?: { field?: unknown } }).details;
        if (!(err instanceof DomainError) || typeof details?.field !== 'string') throw err;
        outcome = { error: { field: details.field, message: err.message } };
      }
      if (this.queries.size >= VALIDATED_QUERIES_KEPT) this.queries.clear();
      this.queries.set(key, outcome);
    }
    if ('error' in outcome) throw invalidRequest(outcome.error.message, { field: outcome.error.field });
    return Object.assign(new dto(), outcome.members);
  }

  private async validated(dto: new () => object, members: Record<string, unknown>, type: 'body' | 'query'): Promise<object> {
    // class-transformer reads `value.constructor` of every nested object it copies: a member named
    // constructor, __proto__ or prototype at any depth (`{"email": {"constructor": 1}}`) made it
    // throw (a 500). Only the members it has work for go through it: scalars, and nested DTOs
    // (@Type of a class); the other objects and arrays (labels, variables, lists) are handed over
    // as parsed.
    const converted: Record<string, unknown> = {};
    const asParsed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(members)) {
      const nestedDto = defaultMetadataStorage.findTypeMetadata(dto, key)?.typeFunction();
      const plain = value === null || typeof value !== 'object' || (nestedDto !== undefined && nestedDto !== Object);
      (plain ? converted : asParsed)[key] = value;
    }
    const instance = plainToInstance(dto, converted, { enableImplicitConversion: false });
    Object.assign(instance, asParsed);
    // Nested DTOs: a member they do not declare is refused in a body (forbidNonWhitelisted), dropped in a query.
    const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: type === 'body', forbidUnknownValues: false, stopAtFirstError: true });
    const first = firstValidationError(errors);
    if (first) throw invalidRequest(first.message, { field: first.field });
    refuseNul(instance, '', type);
    return instance;
  }

  /** A short key per DTO class (two classes may share a name). */
  private classKey(dto: object): string {
    let key = this.classKeys.get(dto);
    if (key === undefined) this.classKeys.set(dto, (key = `${++this.classCount}:`));
    return key;
  }
}
