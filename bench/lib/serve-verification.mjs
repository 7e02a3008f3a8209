// verification-api as a bench server child: the real AppModule on the real Fastify adapter (bootApp of
// libs/testing, without the RPC responder, which no bench call needs), logging as deployed, the per-credential
// rate limit raised (the default, 600 per minute, would refuse the load). Env BENCH_ENV (JSON). Tells its URL.
import { DEPLOYED_LOGGING, requireFrom } from './proc.mjs';

const appRequire = requireFrom('apps/verification-api');
const { bootApp } = appRequire('@tessera/testing');
const { AppModule } = appRequire('./dist/app.module');
const { loadEnv } = appRequire('./dist/config/env');
const env = JSON.parse(process.env.BENCH_ENV);
const app = await bootApp(
  AppModule.forRoot(
    loadEnv({
      ...env,
      ...DEPLOYED_LOGGING,
      RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '100000000',
      SDK_RATE_LIMIT_PER_TOKEN_PER_MINUTE: '100000000',
      SDK_RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
    }),
  ),
  { rpc: false, listen: true },
);
process.send({ url: await app.getUrl() });
process.on('SIGTERM', async () => {
  await app.close().catch(() => undefined);
  process.exit(0);
});
