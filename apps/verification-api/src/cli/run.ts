import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { APPLICANT_ACTIONS, levelCreateSchema, levelPatchSchema, stepReviewSchema } from '@tessera/contracts';
import { cliFailure, PlatformModule } from '@tessera/platform';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { type Env, loadEnv, loadScreeningEnv } from '../config/env';
import { entities, SCHEMA } from '../database/database';
import { migrations } from '../database/migrations';
import { LevelsModule } from '../modules/levels/levels.module';
import { LevelsService } from '../modules/levels/levels.service';
import { ProductsModule } from '../modules/products/products.module';
import { ProductsService } from '../modules/products/products.service';
import { ReviewsModule } from '../modules/reviews/reviews.module';
import { ReviewsService } from '../modules/reviews/reviews.service';
import { SanctionsListRepository } from '../modules/screening/sanctions-list.repository';
import { qualityReport } from '../modules/screening/screening-quality';
import { ScreeningService } from '../modules/screening/screening.service';

@Module({})
class CliModule {
  static forRoot(env: Env): DynamicModule {
    return {
      module: CliModule,
      imports: [
        PlatformModule.forRoot({
          service: 'verification-api-cli',
          env: { ...env, LOG_LEVEL: 'warn' },
          config: env,
          errorShape: 'verification',
          database: { schema: SCHEMA, entities, migrations },
          logDestination: process.stderr,
        }),
        ProductsModule,
        LevelsModule,
        ReviewsModule,
      ],
    };
  }
}

export const CLI_USAGE = `Usage: pnpm --filter @tessera/verification-api cli <command> [options]
  create-product --name <name>
  create-key --product <productId> --environment production|sandbox
  deactivate-key --key <apiKey>
  create-level --product <productId> (--json '<level body>' | --file <path>)
  update-level --product <productId> --level <levelName> (--json '<partial level>' | --file <path>)
  review-step --product <productId> --applicant <externalUserId> --step <kind> (--json '<decision>' | --file <path>)
    decision: {"reviewAnswer":"GREEN"|"RED","reviewRejectType"?:"RETRY"|"FINAL","rejectLabels"?:[...],"moderationComment"?,"clientComment"?}
  reset-applicant | deactivate-applicant | activate-applicant | blocklist-applicant | unblock-applicant
    --product <productId> --applicant <externalUserId> [--reason <text>]
  import-sanctions --sdn <sdn.csv> [--alt <alt.csv>] [--out <file>]
    parses a fresh OFAC SDN list (legacy CSV) into the list file the AML screening reads
    (default: SANCTIONS_LIST_FILE, else the bundled snapshot); restart the workers to use it
  screen --name <name> [--kind individual|organisation] [--dob YYYY-MM-DD]
  screening-quality
    screens the quality set (names built from the list and ordinary names) and prints the table`;

/** Screening commands need only the list file, not the database. */
function runScreeningCommand(
  command: string,
  opts: Record<string, string>,
  env: Pick<Env, 'SANCTIONS_LIST_FILE'>,
): { code: number; output: unknown } | undefined {
  if (!['import-sanctions', 'screen', 'screening-quality'].includes(command)) return undefined;
  Logger.overrideLogger(['error']);
  const screening = new ScreeningService(new SanctionsListRepository(), env);
  switch (command) {
    case 'import-sanctions':
      return {
        code: 0,
        output: screening.importList({ sdnCsv: need(opts, 'sdn'), altCsv: opts.alt, out: opts.out }),
      };
    case 'screen':
      return {
        code: 0,
        output: screening.screen({
          kind: z.enum(['individual', 'organisation']).parse(opts.kind ?? 'individual'),
          names: [need(opts, 'name')],
          dateOfBirth: opts.dob,
        }),
      };
    default:
      return { code: 0, output: qualityReport(screening) };
  }
}

function options(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`Unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    if (eq > 0) out[arg.slice(2, eq)] = arg.slice(eq + 1);
    else out[arg.slice(2)] = argv[++i] ?? '';
  }
  return out;
}

const need = (opts: Record<string, string>, name: string): string => {
  if (!opts[name]) throw new Error(`--${name} is required`);
  return opts[name];
};

const body = (opts: Record<string, string>): unknown => {
  if (opts.json) return JSON.parse(opts.json);
  if (opts.file) return JSON.parse(readFileSync(opts.file, 'utf8'));
  throw new Error('--json or --file is required');
};

/**
 * Runs one operator command against the database and returns what to print (JSON) and the exit code.
 * The same services as the operator API answer, so both speak the same shapes.
 */
export async function runCli(
  argv: string[],
  /** The environment to read; the process environment (through loadEnv) when omitted. */
  envVars?: Record<string, string | undefined>,
): Promise<{ code: number; output: unknown }> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help')
    return { code: command ? 0 : 1, output: { usage: CLI_USAGE } };
  const screeningOutput = runScreeningCommand(
    command,
    options(rest),
    envVars ? loadScreeningEnv(envVars) : loadScreeningEnv(),
  );
  if (screeningOutput) return screeningOutput;
  const env = envVars ? loadEnv(envVars) : loadEnv();
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(env), { logger: ['error'] });
  try {
    const opts = options(rest);
    const products = app.get(ProductsService);
    const levels = app.get(LevelsService);
    switch (command) {
      case 'create-product':
        return { code: 0, output: await products.createProduct(need(opts, 'name')) };
      case 'create-key': {
        const environment = z.enum(['production', 'sandbox']).parse(need(opts, 'environment'));
        return {
          code: 0,
          output: await products.issueKey(z.uuid().parse(need(opts, 'product')), environment),
        };
      }
      case 'deactivate-key': {
        const apiKey = need(opts, 'key');
        await products.deactivateKey(apiKey);
        return { code: 0, output: { apiKey, active: false } };
      }
      case 'create-level': {
        const productId = z.uuid().parse(need(opts, 'product'));
        await products.assertProduct(productId);
        return { code: 0, output: await levels.create(productId, levelCreateSchema.parse(body(opts))) };
      }
      case 'update-level': {
        const productId = z.uuid().parse(need(opts, 'product'));
        await products.assertProduct(productId);
        return {
          code: 0,
          output: await levels.update(productId, need(opts, 'level'), levelPatchSchema.parse(body(opts))),
        };
      }
      case 'review-step': {
        const decision = stepReviewSchema.parse(body(opts));
        return {
          code: 0,
          output: await app
            .get(ReviewsService)
            .reviewStep(need(opts, 'product'), need(opts, 'applicant'), need(opts, 'step'), decision),
        };
      }
      case 'reset-applicant':
      case 'deactivate-applicant':
      case 'activate-applicant':
      case 'blocklist-applicant':
      case 'unblock-applicant': {
        const action = z.enum(APPLICANT_ACTIONS).parse(command.replace('-applicant', ''));
        return {
          code: 0,
          output: await app
            .get(ReviewsService)
            .applicantAction(need(opts, 'product'), need(opts, 'applicant'), action, opts.reason),
        };
      }
      default:
        return { code: 1, output: { message: `Unknown command ${command}`, usage: CLI_USAGE } };
    }
  } catch (err) {
    return { code: 1, output: cliFailure(err) };
  } finally {
    await app.close();
  }
}
