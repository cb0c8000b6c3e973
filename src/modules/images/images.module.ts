import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { ServersModule } from '../servers/servers.module';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { CreateImageExecutor, DeleteImageExecutor, RenewImageExecutor } from './application/image-executors';
import { ImageTerms } from './application/image-terms.use-case';
import { CreateImage, DeleteImage, ImageQueries, RenewImage, UpdateImage } from './application/image.use-cases';
import { ImageRepository } from './application/images.port';
import { TypeOrmImageRepository } from './infrastructure/typeorm-images.repository';
import { ImagesController, ServerImagesController } from './interface/http/images.controller';

/**
 * Server images: copies of servers' boot disks, prepaid for a term, kept after their server,
 * to buy or rebuild servers from in their region; and GET /v1/images, the catalog's images beside
 * them. The compute provider copies and deletes them; the term sweep suspends and releases them
 * (ImageTerms).
 */
@Module({
  imports: [OperationsModule, WalletModule, IdempotencyModule, AuditModule, ServersModule, EventOutboxModule],
  controllers: [ServerImagesController, ImagesController],
  providers: [
    { provide: ImageRepository, useClass: TypeOrmImageRepository },
    CreateImage,
    RenewImage,
    DeleteImage,
    UpdateImage,
    ImageQueries,
    CreateImageExecutor,
    RenewImageExecutor,
    DeleteImageExecutor,
    ImageTerms,
  ],
  exports: [ImageRepository, ImageTerms],
})
export class ImagesModule {}
