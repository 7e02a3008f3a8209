import { Init1795220341858 } from './1795220341858-Init';

/** Every migration of schema "verification", oldest first. */
export const migrations = [Init1795220341858];
