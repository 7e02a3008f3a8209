import { runMigrateCli } from '@tessera/platform';
import { databaseOptions } from './database';

void runMigrateCli(databaseOptions);
