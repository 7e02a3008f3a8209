import { describeRedisOutage } from '@tessera/testing';
import { MEDIA_STORE, MEDIA_STORE_ROLES, mediaStoreEnv, mediaStoreMigrator } from './entry-points';

/**
 * The built media-store while Redis or Postgres is unreachable (decision 0470): started, it exits 1 with one line
 * naming the dependency (it exited 1 with a stack); stopped while Redis is away, it exits 0 at once.
 */
describeRedisOutage(MEDIA_STORE, mediaStoreMigrator(), MEDIA_STORE_ROLES, mediaStoreEnv());
