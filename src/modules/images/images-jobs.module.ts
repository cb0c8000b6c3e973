import { Module } from '@nestjs/common';
import { ComputeProviderModule } from '../servers/compute-provider.module';
import { CleanUpOrphanImages } from './application/clean-up-orphan-images.use-case';
import { ImagesModule } from './images.module';
import { CleanUpOrphanImagesJob } from './interface/jobs/clean-up-orphan-images.job';

/** The orphan server image sweep (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [ImagesModule, ComputeProviderModule],
  providers: [CleanUpOrphanImages, CleanUpOrphanImagesJob],
  exports: [CleanUpOrphanImages],
})
export class ImagesJobsModule {}
