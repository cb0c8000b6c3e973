/** Jest setupFiles (each test file, before it loads): its worker's PostgreSQL database (worker-databases.ts). */
import { pointAtWorkerDatabase } from './worker-databases';

pointAtWorkerDatabase();
