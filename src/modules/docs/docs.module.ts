import { Module } from '@nestjs/common';
import { OpenApiDocument } from '../../shared/http/openapi';
import { DocsController } from './interface/http/docs.controller';

/** GET /v1/openapi.json and the docs page GET /v1/docs. createApp gives OpenApiDocument its builder. */
@Module({
  controllers: [DocsController],
  providers: [OpenApiDocument],
  exports: [OpenApiDocument],
})
export class DocsModule {}
