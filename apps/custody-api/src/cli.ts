import 'reflect-metadata';
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { badRequest, cliFailure, PlatformModule } from '@tessera/platform';
import { readFileSync } from 'node:fs';
import { idParam } from './common/validation';
import { loadEnv } from './config/env';
import { entities, SCHEMA } from './database/database';
import { migrations } from './database/migrations';
import { AssetsCoreModule } from './modules/assets/assets.module';
import { AssetsService } from './modules/assets/assets.service';
import { PoliciesCoreModule } from './modules/policies/policies.module';
import { PoliciesService } from './modules/policies/policies.service';
import { ReconciliationCoreModule } from './modules/reconciliation/reconciliation.module';
import { ReconciliationService } from './modules/reconciliation/reconciliation.service';
import { TenantsModule } from './modules/tenants/tenants.module';
import { TenantsService } from './modules/tenants/tenants.service';

const USAGE = `Usage: pnpm --filter @tessera/custody-api cli <command>
  create-tenant <name>
  create-key <tenantId> --environment test|live --scopes s1,s2 [--ip-allow-list cidr1,cidr2]
  revoke-key <apiKey>
  tenant-assets <tenantId>
  disable-asset <tenantId> <assetId|symbol>
  enable-asset <tenantId> <assetId|symbol>
  gas-station <tenantId>        the address paying the tenant's live USDT gas (fund it with ETH)
  policies <tenantId> test|live                   the tenant's withdrawal policy for that environment
  set-policies <tenantId> test|live <file.json|->  replace it with the JSON document in the file (- reads stdin)
  reconcile [--tenant <tenantId>]   reconcile the ledger (and the EVM chain) now; prints the report
  reconciliation <runId>        a stored reconciliation report
Prints JSON; the same calls as the operator API (POST /admin/...).`;

@Module({})
class CliModule {
  static forRoot(): DynamicModule {
    const env = loadEnv();
    return {
      module: CliModule,
      imports: [
        PlatformModule.forRoot({
          service: 'custody-cli',
          env: { ...env, LOG_LEVEL: 'error' },
          config: env,
          errorShape: 'custody',
          database: { schema: SCHEMA, entities, migrations },
          logDestination: process.stderr,
        }),
        TenantsModule,
        AssetsCoreModule,
        PoliciesCoreModule,
        ReconciliationCoreModule,
      ],
    };
  }
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

const list = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

async function run(args: string[]): Promise<unknown> {
  const [command, first, second] = args;
  const commands = [
    'create-tenant',
    'create-key',
    'revoke-key',
    'tenant-assets',
    'disable-asset',
    'enable-asset',
    'gas-station',
    'policies',
    'set-policies',
    'reconcile',
    'reconciliation',
  ];
  if (!command || !commands.includes(command)) {
    throw Object.assign(new Error(USAGE), { usage: true });
  }
  // Read (and parse) the policy file before booting: a bad file is reported without touching the database.
  const policyDocument = command === 'set-policies' ? readPolicyFile(args[3]) : undefined;
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(), { logger: ['error'] });
  try {
    const tenants = app.get(TenantsService);
    const assets = app.get(AssetsService);
    if (command === 'tenant-assets') return await assets.tenantAssets(first ?? '');
    if (command === 'disable-asset' || command === 'enable-asset') {
      return await assets.setEnabledFor(first ?? '', second ?? '', command === 'enable-asset');
    }
    if (command === 'gas-station') return await tenants.gasStation(first ?? '');
    const policies = app.get(PoliciesService);
    if (command === 'policies') return await policies.adminGet(first ?? '', second ?? '');
    if (command === 'set-policies') return await policies.adminSet(first ?? '', second ?? '', policyDocument);
    const reconciliation = app.get(ReconciliationService);
    if (command === 'reconcile') {
      const tenantId = option(args, '--tenant');
      return await reconciliation.start(tenantId === undefined ? {} : { tenantId }, 'cli');
    }
    if (command === 'reconciliation') return await reconciliation.get(idParam(first ?? '', 'Reconciliation'));
    if (command === 'create-tenant') return await tenants.createTenant({ name: first });
    if (command === 'create-key') {
      return await tenants.createKey(first, {
        environment: option(args, '--environment'),
        scopes: list(option(args, '--scopes')),
        ipAllowList: list(option(args, '--ip-allow-list')),
      });
    }
    return await tenants.revokeKey(first);
  } finally {
    await app.close();
  }
}

function readPolicyFile(path: string | undefined): unknown {
  if (!path) throw Object.assign(new Error(USAGE), { usage: true });
  const text = readFileSync(path === '-' ? 0 : path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`The policy file is not JSON: ${(err as Error).message}`);
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.exit(0);
  },
  (err: Error & { usage?: boolean }) => {
    if (err.usage) process.stderr.write(`${err.message}\n`);
    else process.stdout.write(`${JSON.stringify(cliFailure(err), null, 2)}\n`);
    process.exit(1);
  },
);
