import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import type { Params } from 'nestjs-pino';
import { DestinationStream, stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import { Settings } from '../config/settings';
import { newId } from '../kernel/ids/ids';
import { routeOf } from './route-label';

/**
 * Paths pino replaces with "[redacted]" wherever a log call would carry them: credentials,
 * tokens, passwords, cookies, Idempotency-Key. Request lines never include headers or bodies in the first
 * place; this is the safety net for anything else logged with such a member.
 */
export const REDACTED_PATHS = [
  'authorization',
  'password',
  'token',
  'cookie',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  // Opens a stored answer holding a new API key's token (idempotency/domain/sealed-response.ts).
  'headers["idempotency-key"]',
  '*.authorization',
  '*.password',
  '*.token',
  '*.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
  '*.headers["idempotency-key"]',
  '*.*.authorization',
  '*.*.password',
  '*.*.token',
];

/** What the one line logged per request carries (besides level, time, request_id and msg). */
export interface RequestLogFields {
  method: string;
  path: string;
  route: string;
  status: number;
  latency_ms: number;
  org_id: string | null;
  credential_id: string | null;
  aborted?: true;
}

function requestFields(req: IncomingMessage, res: ServerResponse, value: object): RequestLogFields {
  const r = req as Request;
  const principal = r.principal;
  const fields: RequestLogFields = {
    method: r.method,
    // The path only: a query string is never logged, so a secret put there by mistake is not either.
    path: (r.originalUrl ?? r.url ?? '').split('?')[0],
    route: routeOf(r),
    status: res.statusCode,
    latency_ms: (value as { latency_ms?: number }).latency_ms ?? 0,
    org_id: principal?.orgId ?? null,
    // Authentication sets req.credential before the organization is known (a 403 on X-Org-ID or a 429 still names it).
    credential_id: principal?.credentialId ?? (r as { credential?: { id?: string } }).credential?.id ?? null,
  };
  if (!(res as Response).writableFinished) fields.aborted = true;
  return fields;
}

/** pino-pretty, when it is installed (a development dependency) and stdout is a terminal. */
function prettyStream(): DestinationStream | undefined {
  if (!process.stdout.isTTY) return undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as (opts: object) => DestinationStream;
    return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  } catch {
    return undefined;
  }
}

/**
 * nestjs-pino settings: JSON lines on stdout (pretty only on a terminal) at LOG_LEVEL, one
 * line per request when it ends, with request_id (the X-Request-Id of request-id.ts), route,
 * status, latency and, once authenticated, the organization and credential ids. Logs written
 * while a request is handled (Nest's Logger included) carry its request_id too.
 */
export function loggerParams(settings: Settings, stream: DestinationStream | undefined = prettyStream()): Params {
  const options: Options = {
    level: settings.logLevel,
    timestamp: stdTimeFunctions.isoTime,
    // "level":"info" rather than 30: what log search and people read.
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    genReqId: (req) => (req as Request).id ?? newId('req'),
    customAttributeKeys: { reqId: 'request_id', responseTime: 'latency_ms' },
    // Bind only request_id to the request's logger: no headers (Authorization, cookies), no body.
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    customSuccessObject: (req, res, value) => requestFields(req, res, value),
    // The exception itself is logged by the exception filter, with its stack; not again here.
    customErrorObject: (req, res, _err, value) => requestFields(req, res, value),
  };
  return { pinoHttp: stream ? [options, stream] : options };
}
