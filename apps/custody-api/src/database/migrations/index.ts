import { Init1795220342744 } from './1795220342744-Init';

/** Every migration of schema "custody", oldest first. */
export const migrations = [Init1795220342744];
