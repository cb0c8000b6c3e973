import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Params } from 'nestjs-pino';
import { DestinationStream, Logger, LoggerOptions, pino, stdTimeFunctions } from 'pino';
import { Settings } from '../config/settings';
import { currentClientRequestId, currentRequestId } from '../http/request-context';
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

/** What the one line logged per request carries (besides level, time, pid, hostname and msg). */
export interface RequestLogFields {
  /** The server's id of the request, unique per request. */
  request_id: string;
  /** The client's valid X-Request-Id (the one the response echoes), null when it sent none. */
  client_request_id: string | null;
  method: string;
  path: string;
  route: string;
  status: number;
  latency_ms: number;
  org_id: string | null;
  credential_id: string | null;
  aborted?: true;
}

function requestFields(req: Request, res: Response, latencyMs: number): RequestLogFields {
  const principal = req.principal;
  const fields: RequestLogFields = {
    request_id: req.serverRequestId ?? req.id,
    client_request_id: req.clientRequestId ?? null,
    method: req.method,
    // The path only: a query string is never logged, so a secret put there by mistake is not either.
    path: (req.originalUrl ?? req.url ?? '').split('?')[0],
    route: routeOf(req),
    status: res.statusCode,
    latency_ms: latencyMs,
    org_id: principal?.orgId ?? null,
    // Authentication sets req.credential before the organization is known (a 403 on X-Org-ID or a 429 still names it).
    credential_id: principal?.credentialId ?? (req as { credential?: { id?: string } }).credential?.id ?? null,
  };
  if (!res.writableFinished) fields.aborted = true;
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
 * The application's one pino logger: JSON lines on stdout (pretty only on a terminal) at
 * LOG_LEVEL. Nest's Logger writes through it (nestjs-pino, ObservabilityModule), and so does
 * RequestLog. A line written while a request is handled carries its request_id (the server's,
 * unique per request) and client_request_id (the client's X-Request-Id, null when none), read from
 * the request context (request-context.ts) when the line is written: no logger is made per request.
 */
export function createRootLogger(settings: Settings, stream: DestinationStream | undefined = prettyStream()): Logger {
  const options: LoggerOptions = {
    level: settings.logLevel,
    timestamp: stdTimeFunctions.isoTime,
    // "level":"info" rather than 30: what log search and people read.
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === null ? {} : { request_id: requestId, client_request_id: currentClientRequestId() };
    },
  };
  return stream ? pino(options, stream) : pino(options);
}

/**
 * One line per request when its response ends (or its client goes away): request_id, client_request_id, method,
 * path, route, status, latency and, once authenticated, the organization and credential ids.
 * Never headers (Authorization, cookies) or bodies. A 5xx is logged at error level as
 * "request failed" (its exception is logged by the exception filter, with its stack).
 */
@Injectable()
export class RequestLog {
  constructor(readonly root: Logger) {}

  ended(req: Request, res: Response, latencyMs: number): void {
    const failed = res.statusCode >= 500;
    const level = failed ? 'error' : 'info';
    if (!this.root.isLevelEnabled(level)) return;
    this.root[level](requestFields(req, res, latencyMs), failed ? 'request failed' : 'request completed');
  }
}

/** nestjs-pino's settings: Nest's Logger writes through the root logger; no per-request middleware (RequestLog writes the request lines). */
export function loggerParams(log: RequestLog): Params {
  return { pinoHttp: { logger: log.root }, forRoutes: [] };
}
