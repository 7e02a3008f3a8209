import { Init1795220212136 } from './1795220212136-Init';

/** Every migration of schema "media", oldest first. */
export const migrations = [Init1795220212136];
