import { InitialSchema1763769600000 } from './1763769600000-initial-schema';
import { RegionUsedGb1764000000140 } from './1764000000140-region-used-gb';

/** Every migration, in order. Listed as classes so ts (tests) and js (dist) load the same set. */
export const MIGRATIONS = [InitialSchema1763769600000, RegionUsedGb1764000000140];
