import { Init1795220333637 } from './1795220333637-Init';

/** Every migration of schema "webhooks", oldest first. */
export const migrations = [Init1795220333637];
