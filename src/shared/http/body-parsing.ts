import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { HEADERS_METADATA } from '@nestjs/common/constants';
import express, { NextFunction, Request, Response } from 'express';
import { invalidRequest } from '../kernel/errors/domain-error';
import { PayloadTooLargeError } from './error-envelope';

export const BODY_LIMIT = '1mb';

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

/**
 * Parses JSON bodies up to 1 MiB, but does not answer a parse failure itself: it records it
 * so that the error is reported after authentication, rate limit and permission checks
 * (decisions.md check order), by BodyErrorGuard and the global filter.
 */
export function deferredJsonBody(): (req: Request, res: Response, next: NextFunction) => void {
  const parse = express.json({
    limit: BODY_LIMIT,
    // Before parsing: a body too deep or of too many members is refused without building it (rawJsonShapeProblem).
    verify: (_req, _res, buf) => {
      const problem = rawJsonShapeProblem(buf);
      if (problem) throw Object.assign(new Error(`body shape: ${problem}`), { type: BODY_SHAPE, problem });
    },
  });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string; problem?: 'depth' | 'members' };
        req.bodyError =
          e.type === 'entity.too.large'
            ? new PayloadTooLargeError('1 MiB')
            : e.type === BODY_SHAPE && e.problem
              ? bodyShapeError(e.problem)
              : invalidRequest('Request body is not valid JSON', { field: 'body' });
        req.body = undefined;
      } else {
        const problem = bodyShapeProblem(req.body);
        if (problem) {
          req.bodyError = bodyShapeError(problem);
          req.body = undefined;
        }
      }
      next();
    });
  };
}

/**
 * The last global guard (AuthModule registers the guards in their order): after authentication,
 * rate limit and permission, a body that failed to parse becomes the request's error. It is
 * answered as an error of the route itself: with the headers the route's `@Header()` sets on
 * every answer (which Nest sets only after the guards), as ApiHeadersOnEveryResponse declares.
 */
@Injectable()
export class BodyErrorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (!req.bodyError) return true;
    const headers = Reflect.getMetadata(HEADERS_METADATA, context.getHandler()) as { name: string; value: string }[] | undefined;
    for (const { name, value } of headers ?? []) context.switchToHttp().getResponse<Response>().setHeader(name, value);
    throw req.bodyError;
  }
}
