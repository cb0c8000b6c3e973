import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags, OpenAPIObject } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { notFound } from '../../../../shared/kernel/errors/domain-error';
import { ApiErrors, OpenApiDocument, REQUEST_ID_HEADER } from '../../../../shared/http/openapi';
import { Public } from '../../../auth/interface/http/access.decorators';

/** swagger-ui-dist, the dependency of @nestjs/swagger that holds Swagger UI's files. */
function swaggerUiDir(): string {
  return dirname(createRequire(require.resolve('@nestjs/swagger')).resolve('swagger-ui-dist/package.json'));
}

/**
 * Swagger UI over /v1/openapi.json, without the HEAD operations: the document declares HEAD for
 * every GET (Express answers it), which would double the page's rows for nothing a reader needs.
 */
const INIT_JS = `fetch('/v1/openapi.json')
  .then((res) => res.json())
  .then((doc) => {
    for (const item of Object.values(doc.paths)) delete item.head;
    window.ui = SwaggerUIBundle({
      spec: doc,
      dom_id: '#swagger-ui',
      deepLinking: true,
      displayRequestDuration: true,
    });
  });
`;

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Cloud Disk Service API</title>
  <link rel="icon" type="image/png" href="/v1/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/v1/docs/swagger-ui.css">
</head>
<body>
  <noscript>The interactive documentation needs JavaScript; the OpenAPI document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
  <div id="swagger-ui"></div>
  <script src="/v1/docs/swagger-ui-bundle.js"></script>
  <script src="/v1/docs/docs-init.js"></script>
</body>
</html>
`;

/** The files the docs page loads: Swagger UI's, served from swagger-ui-dist, and its start script. */
const ASSETS: Record<string, { type: string; file?: string; text?: string }> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'swagger-ui-bundle.js': { type: 'application/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'favicon-32x32.png': { type: 'image/png', file: 'favicon-32x32.png' },
  'docs-init.js': { type: 'application/javascript; charset=utf-8', text: INIT_JS },
};

/** The OpenAPI document and a Swagger UI page over it: public, not rate limited. */
@ApiTags('Documentation')
@ApiErrors()
@Controller('v1')
@Public()
@SkipThrottle()
export class DocsController {
  private readonly cache = new Map<string, Buffer>();

  constructor(private readonly document: OpenApiDocument) {}

  @Get('openapi.json')
  @ApiOperation({ operationId: 'getOpenApiDocument', summary: 'This OpenAPI 3 document', description: 'Generated from the code; public.' })
  @ApiOkResponse({ description: 'The OpenAPI 3.0 document of the service', schema: { type: 'object' }, headers: REQUEST_ID_HEADER })
  openapi(): OpenAPIObject {
    return this.document.get();
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @ApiOperation({ operationId: 'getDocsPage', summary: 'Interactive documentation (Swagger UI) over /v1/openapi.json' })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'An HTML page', schema: { type: 'string' }, headers: REQUEST_ID_HEADER })
  docs(): string {
    return DOCS_HTML;
  }

  @Get('docs/:asset')
  @ApiOperation({ operationId: 'getDocsAsset', summary: 'A file of the documentation page (Swagger UI)' })
  @ApiParam({ name: 'asset', enum: Object.keys(ASSETS) })
  @ApiProduces('text/css', 'application/javascript', 'image/png')
  @ApiOkResponse({
    description: 'The file',
    schema: { type: 'string', format: 'binary' },
    headers: { ...REQUEST_ID_HEADER, 'Cache-Control': { required: true, description: 'Cacheable for an hour', schema: { type: 'string', example: 'public, max-age=3600' } } },
  })
  @ApiErrors('not_found')
  asset(@Param('asset') name: string, @Res() res: Response): void {
    const asset = Object.prototype.hasOwnProperty.call(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) throw notFound(`No documentation file ${name}; the files are ${Object.keys(ASSETS).join(', ')}`);
    let body = this.cache.get(name);
    if (!body) {
      body = asset.text !== undefined ? Buffer.from(asset.text) : readFileSync(join(swaggerUiDir(), asset.file ?? name));
      this.cache.set(name, body);
    }
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.send(body);
  }
}
