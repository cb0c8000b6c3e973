/**
 * The ceiling of `npm run bench`: a bare Nest 12 + Express application that answers the
 * benchmarked routes with the very bytes the service answered once (status, Content-Type, body),
 * from memory. No database, guards, pipes, logging or metrics: what is left is Node, Express and
 * Nest's routing, so the service's requests per second are read as a fraction of this.
 *
 *   CEILING_RESPONSES=/tmp/responses.json PORT=4000 node dist/bench/ceiling.js
 *
 * CEILING_RESPONSES names a JSON file `{ "<route key>": {status, contentType, body} }` with the
 * keys of ROUTES. Listens on 127.0.0.1 only. Started and stopped by bench/bench.ts.
 *
 * With CEILING_DATABASE_URL (PostgreSQL), each request first runs one prepared `SELECT 1` on a
 * pool of DB_POOL_SIZE (10) connections to that database, as the service runs one statement per
 * read at steady state: the framework plus one database round trip of the cheapest kind, the
 * floor of a read that touches the database once on this machine.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Controller, Get, HttpCode, Module, Post, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Response } from 'express';
import { Pool } from 'pg';

interface CannedResponse {
  status: number;
  contentType: string;
  body: string;
}

/**
 * The routes of bench.ts's phases (Phase.route). A new phase on a new route adds its key here
 * and a handler below with the route's method and path (the same Express routing cost as the
 * service's route): e.g. 'server-options' on @Get('server-options'), 'servers' on @Get('servers'),
 * 'create-server' on @Post('servers').
 */
type RouteKey = 'volume-options' | 'operation' | 'volumes' | 'renew' | 'wallet' | 'wallet-transactions' | 'server-options' | 'servers' | 'buy-server' | 'buy-volume';

let canned: Record<RouteKey, CannedResponse>;
let pool: Pool | undefined;
const ROUND_TRIP = { name: 'ceiling_round_trip', text: 'SELECT 1 AS one', values: [] };

function send(res: Response, key: RouteKey): void {
  const answer = (): void => {
    const r = canned[key] as CannedResponse | undefined;
    // A route whose phase was not selected (PHASES) has no canned answer.
    if (!r) res.status(404).send('no canned answer for this route');
    else res.status(r.status).type(r.contentType).send(r.body);
  };
  if (!pool) return answer();
  pool.query(ROUND_TRIP).then(answer, (err: unknown) => res.status(500).send(String(err)));
}

@Controller('v1')
class CeilingController {
  @Get('volume-options')
  options(@Res() res: Response): void {
    send(res, 'volume-options');
  }

  @Get('server-options')
  serverOptions(@Res() res: Response): void {
    send(res, 'server-options');
  }

  @Get('operations/:id')
  operation(@Res() res: Response): void {
    send(res, 'operation');
  }

  @Get('volumes')
  volumes(@Res() res: Response): void {
    send(res, 'volumes');
  }

  @Post('volumes/:id/renew')
  @HttpCode(202)
  renew(@Res() res: Response): void {
    send(res, 'renew');
  }

  @Get('wallet')
  wallet(@Res() res: Response): void {
    send(res, 'wallet');
  }

  @Get('wallet/transactions')
  walletTransactions(@Res() res: Response): void {
    send(res, 'wallet-transactions');
  }

  @Get('servers')
  servers(@Res() res: Response): void {
    send(res, 'servers');
  }

  @Post('servers')
  @HttpCode(202)
  buyServer(@Res() res: Response): void {
    send(res, 'buy-server');
  }

  @Post('volumes')
  @HttpCode(202)
  buyVolume(@Res() res: Response): void {
    send(res, 'buy-volume');
  }
}

@Module({ controllers: [CeilingController] })
class CeilingModule {}

async function main(): Promise<void> {
  canned = JSON.parse(readFileSync(process.env.CEILING_RESPONSES ?? '', 'utf8')) as Record<RouteKey, CannedResponse>;
  if (process.env.CEILING_DATABASE_URL) pool = new Pool({ connectionString: process.env.CEILING_DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10) });
  const app = await NestFactory.create(CeilingModule, { logger: false });
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.once('SIGTERM', () => void app.close().then(() => pool?.end()).then(() => process.exit(0)));
}

main().catch((err: unknown) => {
  process.stderr.write(`ceiling: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
