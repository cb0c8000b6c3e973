import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { HEADERS_METADATA } from '@nestjs/common/constants';
import express, { Request, RequestHandler, Response } from 'express';
import { invalidRequest } from '../kernel/errors/domain-error';
import { PayloadTooLargeError, UnsupportedContentEncodingError } from './error-envelope';

/**
 * The largest request body, in bytes: above the largest legitimate one (a server's 32 KiB
 * user_data in its JSON body). Larger bodies are refused with 413 without being read further.
 */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The limit of the routes that take a body from anyone (signup, login: no bearer token to check
 * first): their bodies are a few hundred bytes, so an anonymous client never makes the server read
 * or parse more than this.
 */
export const ANONYMOUS_BODY_LIMIT_BYTES = 16 * 1024;

/** "64 KiB", as the 413's message says it. */
export const describeLimit = (bytes: number): string => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);

const BODY_LIMIT_METADATA = 'cds:body-limit';
const BODY_DEFERRED_METADATA = 'cds:body-deferred';
const BODY_OWN_READER_METADATA = 'cds:body-own-reader';

/**
 * On a controller whose body a middleware of its own reads (the inbound payment events' raw
 * reader, mounted before the app's parsers): BodyErrorGuard never reads its body, even one the
 * middleware refused unread (too large).
 */
export const OwnBodyReader = (): ClassDecorator => SetMetadata(BODY_OWN_READER_METADATA, true);

/**
 * On a controller with its own authentication guard (the admin API): the global BodyErrorGuard
 * leaves the body unread, and that guard calls readBodyAfterGuard once the caller is known.
 */
export const DeferBody = (): ClassDecorator => SetMetadata(BODY_DEFERRED_METADATA, true);

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by BodyErrorGuard on a DeferBody controller: the body is read by that controller's guard. */
    bodyDeferred?: boolean;
  }
}

/** The body of a DeferBody route, read and checked as BodyErrorGuard reads every other one. */
export function readBodyAfterGuard(context: ExecutionContext): boolean | Promise<boolean> {
  const req = context.switchToHttp().getRequest<Request>();
  req.bodyDeferred = false;
  return new BodyErrorGuard().canActivate(context);
}

/** A route's own (smaller) body limit, in bytes: `@BodyLimit(ANONYMOUS_BODY_LIMIT_BYTES)` on signup and login. */
export const BodyLimit = (bytes: number): MethodDecorator => SetMetadata(BODY_LIMIT_METADATA, bytes);

/** Deepest nesting of objects and arrays a body may have; deeper ones would blow the stack of recursive code (validation, fingerprints). */
export const MAX_BODY_DEPTH = 64;

/**
 * Most members (object members and array elements, at every level together) a body may have.
 * Every body of this API has a handful; the cap keeps what reads a body (validation, the
 * idempotency fingerprint, NUL checks) within a few milliseconds whatever a client sends: a 1 MiB
 * body of 70,000 unknown members used to block the process for seconds in class-transformer.
 */
export const MAX_BODY_MEMBERS = 1000;

/**
 * What is wrong with the shape of a parsed body, if anything: nested deeper than `maxDepth`, or
 * more than `maxMembers` members. Iterative, and it stops at the first excess: any body is cheap to measure.
 */
export function bodyShapeProblem(value: unknown, maxDepth = MAX_BODY_DEPTH, maxMembers = MAX_BODY_MEMBERS): 'depth' | 'members' | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  let members = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) return 'depth';
    if (Array.isArray(node)) {
      members += node.length;
      if (members > maxMembers) return 'members';
      for (const child of node) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
      continue;
    }
    for (const key in node) {
      if (++members > maxMembers) return 'members';
      const child = (node as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

/**
 * bodyShapeProblem on the raw bytes of a JSON text, before any parsing: nesting deeper than
 * `maxDepth`, or more than `maxMembers` members (object members and array elements, at every
 * level together), given up at the first excess: a body of 70,000 members is refused after
 * reading its first thousand, for a few microseconds, instead of being parsed into 70,000 objects.
 * Exact for valid JSON; for invalid JSON the parser has the last word.
 */
export function rawJsonShapeProblem(text: Uint8Array, maxDepth = MAX_BODY_DEPTH, maxMembers = MAX_BODY_MEMBERS): 'depth' | 'members' | undefined {
  const OBJECT = 0;
  const ARRAY_EMPTY = 1;
  const ARRAY = 2;
  const stack: number[] = [];
  let members = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
      continue;
    }
    const top = stack.length > 0 ? stack[stack.length - 1] : -1;
    // The first value of an array is its first element.
    if (top === ARRAY_EMPTY && c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x5d) {
      stack[stack.length - 1] = ARRAY;
      if (++members > maxMembers) return 'members';
    }
    switch (c) {
      case 0x22: // "
        inString = true;
        break;
      case 0x7b: // {
        if (stack.push(OBJECT) > maxDepth) return 'depth';
        break;
      case 0x5b: // [
        if (stack.push(ARRAY_EMPTY) > maxDepth) return 'depth';
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        break;
      case 0x3a: // : one object member
        if (++members > maxMembers) return 'members';
        break;
      case 0x2c: // , another array element
        if (top === ARRAY && ++members > maxMembers) return 'members';
        break;
    }
  }
  return undefined;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (text: string): boolean => !LONE_SURROGATE.test(text);

/**
 * The path (`note`, `labels.env`, `items.2.name`) of the first member name or string value of a
 * parsed body that is not well-formed UTF-16 (a lone surrogate, which JSON's \ud800 escapes can
 * carry and no database text column can store), or undefined. Iterative; the body's size is
 * bounded by MAX_BODY_MEMBERS already.
 */
export function illFormedTextAt(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (!wellFormed(node)) return path === '' ? 'body' : path;
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], join(path, String(i))]);
      continue;
    }
    for (const key of Object.keys(node)) {
      if (!wellFormed(key)) return join(path, key);
      stack.push([(node as Record<string, unknown>)[key], join(path, key)]);
    }
  }
  return undefined;
}

const BODY_SHAPE = 'entity.shape';

const bodyShapeError = (problem: 'depth' | 'members'): Error =>
  invalidRequest(
    problem === 'depth'
      ? `Request body is nested deeper than ${MAX_BODY_DEPTH} levels`
      : `Request body has more than ${MAX_BODY_MEMBERS} members (object members and array elements, at every level)`,
    { field: 'body' },
  );

declare module 'express-serve-static-core' {
  interface Request {
    bodyError?: Error;
  }
}

/** One JSON parser per limit: no inflation (a compressed body is refused, 415), shape measured before parsing. */
const parsers = new Map<number, RequestHandler>();
function parserFor(limit: number): RequestHandler {
  let parser = parsers.get(limit);
  if (!parser) {
    parser = express.json({
      limit,
      // Compressed request bodies are refused (415): a few bytes of brotli must never become a
      // large parse, and no client of this API needs to compress bodies of at most 64 KiB.
      inflate: false,
      // Before parsing: a body too deep or of too many members is refused without building it (rawJsonShapeProblem).
      verify: (_req, _res, buf) => {
        const problem = rawJsonShapeProblem(buf);
        if (problem) throw Object.assign(new Error(`body shape: ${problem}`), { type: BODY_SHAPE, problem });
      },
    });
    parsers.set(limit, parser);
  }
  return parser;
}

/**
 * Reads and parses the JSON body of a request, up to `limit` bytes, and records (on
 * req.bodyError) what was wrong with it instead of answering. Called by BodyErrorGuard, that is
 * only after authentication, the rate limit and the access check: until then no byte of a body
 * is read, inflated or parsed (decisions.md check order 401, 429, 403, then the body's 400/413/415).
 */
export function readJsonBody(req: Request, res: Response, limit: number = BODY_LIMIT_BYTES): Promise<void> {
  return new Promise((resolve) => {
    parserFor(limit)(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string; problem?: 'depth' | 'members'; encoding?: string };
        req.bodyError =
          e.type === 'entity.too.large'
            ? new PayloadTooLargeError(describeLimit(limit))
            : e.type === 'encoding.unsupported'
              ? new UnsupportedContentEncodingError(String(e.encoding ?? req.headers['content-encoding']))
              : e.type === BODY_SHAPE && e.problem
                ? bodyShapeError(e.problem)
                : invalidRequest('Request body is not valid JSON', { field: 'body' });
        req.body = undefined;
      } else {
        const problem = bodyShapeProblem(req.body);
        const illFormed = problem ? undefined : illFormedTextAt(req.body);
        if (problem) {
          req.bodyError = bodyShapeError(problem);
          req.body = undefined;
        } else if (illFormed !== undefined) {
          req.bodyError = invalidRequest(`${illFormed} must be valid Unicode text (no lone UTF-16 surrogates)`, { field: illFormed });
          req.body = undefined;
        }
      }
      resolve();
    });
  });
}

/**
 * The last global guard (AuthModule registers the guards in their order): after authentication,
 * rate limit and permission, the body is read and parsed (readJsonBody), with the route's own
 * limit if it declares one (BodyLimit), and a body that could not be taken becomes the request's
 * error. It is answered as an error of the route itself: with the headers the route's `@Header()`
 * sets on every answer (which Nest sets only after the guards), as ApiHeadersOnEveryResponse declares.
 */
@Injectable()
export class BodyErrorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    // A route whose own guard authenticates the caller reads the body itself, after that (readBodyAfterGuard).
    if (req.bodyDeferred === undefined && Reflect.getMetadata(BODY_DEFERRED_METADATA, context.getClass()) === true) {
      req.bodyDeferred = true;
      return true;
    }
    if (Reflect.getMetadata(BODY_OWN_READER_METADATA, context.getClass()) === true) return true;
    // No body to read (neither Content-Length nor Transfer-Encoding, as every GET sends): nothing to parse or refuse.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return true;
    return this.readBody(context, req);
  }

  private async readBody(context: ExecutionContext, req: Request): Promise<boolean> {
    const res = context.switchToHttp().getResponse<Response>();
    const limit = (Reflect.getMetadata(BODY_LIMIT_METADATA, context.getHandler()) as number | undefined) ?? BODY_LIMIT_BYTES;
    await readJsonBody(req, res, limit);
    if (!req.bodyError) return true;
    const headers = Reflect.getMetadata(HEADERS_METADATA, context.getHandler()) as { name: string; value: string }[] | undefined;
    for (const { name, value } of headers ?? []) res.setHeader(name, value);
    throw req.bodyError;
  }
}
