import { Inject } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';

/** Injects the custody app's parsed Env (src/config/env.ts). */
export const InjectEnv = () => Inject(APP_CONFIG);
