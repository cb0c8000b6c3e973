import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { CheckDeploymentHealth, DeployTemplate, DeploymentActionRunner, RemoveDeployment, UpdateDeployment } from './application/deployment-actions.use-cases';
import { TemplateQueries } from './application/deployment-queries';
import { DeploymentSecrets } from './application/deployment-secrets';
import { DeploymentRepository, TemplateDeployments } from './application/deployments.port';
import { ComputeAndAppsHealth, DeploymentProviderHealth, TemplateAppsGateway } from './application/template-apps-gateway';
import { ComputeProviderModule } from '../servers/compute-provider.module';
import { TemplateApps } from './application/template-apps.port';
import { TemplateCatalog } from './application/template-catalog.port';
import { CheckHealthExecutor, DeployTemplateExecutor, RemoveDeploymentExecutor, UpdateDeploymentExecutor } from './application/template-executors';
import { SimulatedTemplateApps } from './infrastructure/simulated-template-apps';
import { TypeOrmDeploymentRepository, TypeOrmTemplateDeployments } from './infrastructure/typeorm-deployments.repository';
import { TypeOrmTemplateCatalog } from './infrastructure/typeorm-template-catalog';
import { DeploymentsController } from './interface/http/deployments.controller';

/** The template catalog alone (the seed loader writes it). */
@Module({
  providers: [{ provide: TemplateCatalog, useClass: TypeOrmTemplateCatalog }],
  exports: [TemplateCatalog],
})
export class TemplateCatalogModule {}

/**
 * The compute provider's apps: the TemplateApps adapter (the simulated one) behind its gateway
 * (circuit, failure classes). Deployment actions consult DeploymentProviderHealth: down while the
 * compute provider's circuit (ComputeHealth) or the apps' is open. One gateway per process.
 */
@Module({
  providers: [
    { provide: TemplateApps, useClass: SimulatedTemplateApps },
    TemplateAppsGateway,
    { provide: DeploymentProviderHealth, useClass: ComputeAndAppsHealth },
  ],
  imports: [ComputeProviderModule],
  exports: [TemplateApps, TemplateAppsGateway, DeploymentProviderHealth],
})
export class TemplateAppsModule {}

/**
 * Templates (one-click applications) and their deployments on servers: GET /v1/templates, the
 * deployment routes, the template.* executors. TemplateDeployments is exported for the servers
 * module (a deleted server's deployments become removed).
 */
@Module({
  imports: [OperationsModule, IdempotencyModule, TemplateCatalogModule, TemplateAppsModule],
  controllers: [DeploymentsController],
  providers: [
    { provide: DeploymentRepository, useClass: TypeOrmDeploymentRepository },
    { provide: TemplateDeployments, useClass: TypeOrmTemplateDeployments },
    DeploymentSecrets,
    TemplateQueries,
    DeploymentActionRunner,
    DeployTemplate,
    UpdateDeployment,
    CheckDeploymentHealth,
    RemoveDeployment,
    DeployTemplateExecutor,
    UpdateDeploymentExecutor,
    CheckHealthExecutor,
    RemoveDeploymentExecutor,
  ],
  exports: [TemplateDeployments, TemplateCatalogModule, TemplateAppsModule],
})
export class TemplatesModule {}
