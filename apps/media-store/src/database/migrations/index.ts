import { Init1795220212136 } from './1795220212136-Init';
import { MediaSlots1795250000000 } from './1795250000000-MediaSlots';
import { StagedUploads1795600001000 } from './1795600001000-StagedUploads';

/** Every migration of schema "media", oldest first. */
export const migrations = [Init1795220212136, MediaSlots1795250000000, StagedUploads1795600001000];
