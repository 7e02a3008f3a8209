import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createTestEnvironment, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { RECORD_BATCH } from '../src/modules/deliveries/deliveries.repository';
import { bootDispatcher, dispatcherMigrator } from './support/harness';

// Decision 0413: the hot batch statements are prepared once per connection and planned generically; on a young
// table a generic plan that scans the table would stay until the next ANALYZE. The dispatcher's sessions turn
// sequential scans off, so the attempt batch finds its deliveries by primary key at any size.

let env: TestEnvironment;
let app: NestFastifyApplication;

beforeAll(async () => {
  env = await createTestEnvironment([dispatcherMigrator()]);
  app = await bootDispatcher(env, {});
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/**
 * How the plan reads webhook_deliveries: each scan of it ("Seq Scan", "Index Scan PK_…", or "Bitmap Heap Scan"
 * followed by the "Bitmap Index Scan PK_…" under it).
 */
function deliveryScans(node: PlanNode, underScan = false): string[] {
  const scan = node['Node Type'] !== 'ModifyTable' && node['Relation Name'] === 'webhook_deliveries';
  const own =
    scan || (underScan && node['Index Name'])
      ? [`${node['Node Type']} ${node['Index Name'] ?? ''}`.trim()]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => deliveryScans(child, scan))];
}

/** The generic plan of the attempt batch on one of the dispatcher's own pooled sessions, after `settings`. */
async function genericPlan(...settings: string[]): Promise<string[]> {
  const runner = app.get(DataSource).createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SET plan_cache_mode = force_generic_plan');
    for (const setting of settings) await runner.query(setting);
    await runner.query(`PREPARE plan_probe(jsonb) AS ${RECORD_BATCH}`);
    const [row] = (await runner.query(`EXPLAIN (FORMAT JSON) EXECUTE plan_probe('[]')`)) as {
      'QUERY PLAN': { Plan: PlanNode }[];
    }[];
    return deliveryScans(row!['QUERY PLAN'][0]!.Plan);
  } finally {
    await runner.query('DEALLOCATE plan_probe').catch(() => undefined);
    await runner.query('RESET plan_cache_mode');
    await runner.query('RESET enable_seqscan');
    await runner.release();
  }
}

describe('plans of the batch statements on a young table', () => {
  it("the dispatcher's sessions start with sequential scans off", async () => {
    const [row] = (await app.get(DataSource).query('SHOW enable_seqscan')) as { enable_seqscan: string }[];
    expect(row!.enable_seqscan).toBe('off');
  });

  it('the attempt batch finds its deliveries through the primary key, not a scan of the table', async () => {
    const scans = await genericPlan();
    expect(scans).not.toContain('Seq Scan');
    expect(scans.some((s) => /^(Bitmap )?Index Scan PK_/.test(s))).toBe(true);
  });

  it('with sequential scans on, the same generic plan scans the table (what the setting prevents)', async () => {
    expect(await genericPlan('SET enable_seqscan = on')).toEqual(['Seq Scan']);
  });
});
