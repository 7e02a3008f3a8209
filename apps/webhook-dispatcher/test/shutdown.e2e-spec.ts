import { join } from 'node:path';
import { describeShutdownAfterBoot } from '@tessera/testing';
import { dispatcherMigrator } from './support/harness';

/**
 * The built dispatcher stopped by SIGTERM right after it reports started shuts down cleanly (decision 0465). Its
 * BullMQ worker was still connecting then, and closing it under its version check printed an unhandled
 * "Connection is closed." and exited 1.
 */
describeShutdownAfterBoot('@tessera/webhook-dispatcher', dispatcherMigrator(), {
  dispatcher: join(__dirname, '../dist/main.js'),
});
