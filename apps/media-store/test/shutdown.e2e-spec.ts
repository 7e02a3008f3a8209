import { describeShutdownAfterBoot } from '@tessera/testing';
import { MEDIA_STORE, MEDIA_STORE_ROLES, mediaStoreEnv, mediaStoreMigrator } from './entry-points';

/** The built media-store stopped by SIGTERM right after it reports started shuts down cleanly (decision 0465). */
describeShutdownAfterBoot(MEDIA_STORE, mediaStoreMigrator(), MEDIA_STORE_ROLES, mediaStoreEnv());
