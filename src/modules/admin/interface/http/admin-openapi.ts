import { Controller, Get, Header, INestApplication, Injectable, Type } from '@nestjs/common';
import { ApiExcludeController, DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../../../auth/interface/http/access.decorators';
import { OpenApiDocument } from '../../../../shared/http/openapi';
import { STAFF_BEARER_SCHEME } from './admin.decorators';

/** The admin API's own OpenAPI document (GET /admin/v1/openapi.json on the admin listener), built once: its own injection token. */
@Injectable()
export class AdminOpenApiDocument extends OpenApiDocument {}

const DESCRIPTION =
  "The service's admin API for its own staff (support, billing, operations), served only on the admin listener (ADMIN_PORT, ADMIN_HOST). " +
  'Staff tokens only (`Authorization: Bearer cds_staff_…`): customer API keys and sessions are 401 here, and staff tokens are 401 on the public port. ' +
  'Roles: support reads; billing adds wallet adjustments and refunds; operator adds organization limits and suspension, the catalog (capacity, zones, prices, the purchase switch) and retention extensions; superadmin may do everything, staff management included. ' +
  'A route that names an organization, or reads its resources, needs `X-Justification` (1-200 printable characters: a ticket id or a reason), shown to the customer in their audit log. ' +
  'Every write needs an `Idempotency-Key`. Every request is written to the staff audit. Errors use the public API envelope `{error: {code, message, details, request_id}}`.';

export function buildAdminOpenApiDocument(app: INestApplication, adminModule: Type<unknown>): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Cloud Disk Service admin API')
    .setVersion('1')
    .setDescription(DESCRIPTION)
    .addServer('/', 'The admin listener (every path starts with /admin/v1)')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'cds_staff_…', description: 'A staff token (`cds_staff_` + 32 characters)' }, STAFF_BEARER_SCHEME)
    .build();
  return SwaggerModule.createDocument(app, config, {
    include: [adminModule],
    operationIdFactory: (controllerKey: string, methodKey: string) => `${methodKey}${controllerKey.replace(/Controller$/, '')}`,
  });
}

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Cloud Disk Service admin API</title>
</head>
<body>
  <p>The admin API's OpenAPI document is at <a href="/admin/v1/openapi.json">/admin/v1/openapi.json</a>.</p>
</body>
</html>
`;

/** The admin OpenAPI document and its page: no token needed (the admin listener is reachable by staff only). */
@ApiExcludeController()
@Controller('admin/v1')
@Public()
@SkipThrottle()
export class AdminDocsController {
  constructor(private readonly document: AdminOpenApiDocument) {}

  @Get('openapi.json')
  openapi(): OpenAPIObject {
    return this.document.get();
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  docs(): string {
    return DOCS_HTML;
  }
}
