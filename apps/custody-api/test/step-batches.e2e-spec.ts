import { StepBatches } from '../src/modules/transactions/step-batches';
import { statusUpdatedEvent } from '../src/modules/transactions/transaction.record';
import type { TransitionMove } from '../src/modules/transactions/transactions.repository';
import {
  client,
  type Client,
  createKey,
  createTenant,
  creditedWallet,
  type Harness,
  newIdempotencyKey,
  sql,
  startHarness,
  statusEvents as statusEventsOf,
} from './support';

/**
 * The state machine's group commit (decision 0423): steps that run together commit in one database
 * transaction, each row still moves only from the status its job expected, and a transaction's two jobs
 * never move it twice.
 */
let h: Harness;
let api: Client;
let steps: StepBatches;
const transfers: string[] = [];

const toPendingSignature: TransitionMove = {
  next: 'PendingSignature',
  patch: { terminal: false },
  deltas: [],
  events: (t) => [statusUpdatedEvent(t, 'Submitted')],
};

beforeAll(async () => {
  // The transfers stay Submitted: the worker's first step waits ten minutes, and the test moves them itself.
  h = await startHarness({ CHAIN_SIM_STEP_DELAY_MS: '600000' });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  const [a, b] = [await creditedWallet(h, api, '1'), await creditedWallet(h, api, '1')];
  steps = h.worker!.get(StepBatches);
  for (let i = 0; i < 4; i++) {
    const res = await api
      .post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.01' },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    transfers.push(res.body.transactionId);
  }
}, 60_000);
afterAll(() => h?.close());

const statusEvents = (ids: string[]) => statusEventsOf(h, ids);

describe('state-machine steps in one commit (custody worker)', () => {
  it('moves that run together commit together; a move from a status the row has left moves nothing', async () => {
    const [a, b, c] = transfers as [string, string, string];
    const results = await Promise.all([
      steps.transition(a, 'Submitted', toPendingSignature),
      steps.transition(b, 'Submitted', toPendingSignature),
      steps.transition(c, 'PendingSignature', { ...toPendingSignature, next: 'Broadcasting' }),
    ]);
    expect(results.map((r) => r?.status)).toEqual(['PendingSignature', 'PendingSignature', undefined]);
    const rows = await sql<{ id: string; status: string; updatedAt: string }>(
      h,
      `SELECT id, status, updated_at::text AS "updatedAt" FROM transactions WHERE id = ANY($1::uuid[])`,
      [[a, b, c]],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect([a, b, c].map((id) => byId.get(id)!.status)).toEqual([
      'PendingSignature',
      'PendingSignature',
      'Submitted',
    ]);
    // now() is the transaction's start: the same instant on both rows means one database transaction.
    expect(byId.get(a)!.updatedAt).toBe(byId.get(b)!.updatedAt);
    const events = await statusEvents([a, b, c]);
    expect(events.map((e) => [e.entityId, e.previousStatus, e.status]).sort()).toEqual(
      [
        [a, 'Submitted', 'PendingSignature'],
        [b, 'Submitted', 'PendingSignature'],
      ].sort(),
    );
    // Numbered after each transaction's transaction.created (sequence 1).
    expect(events.every((e) => e.sequence === 2)).toBe(true);
  });

  it("a transaction's two jobs for one step at once: it moves once, with one event", async () => {
    const d = transfers[3]!;
    const results = await Promise.all([
      steps.transition(d, 'Submitted', toPendingSignature),
      steps.transition(d, 'Submitted', toPendingSignature),
    ]);
    expect(results.filter((r) => r?.status === 'PendingSignature')).toHaveLength(1);
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    expect(await statusEvents([d])).toHaveLength(1);
  });

  it('loads the steps of one turn with one read, each caller its own record', async () => {
    const [a, , c] = transfers as [string, string, string];
    const missing = '00000000-0000-4000-8000-000000000000';
    const [ra, rc, rm] = await Promise.all([steps.load(a), steps.load(c), steps.load(missing)]);
    expect([ra?.id, ra?.status]).toEqual([a, 'PendingSignature']);
    expect([rc?.id, rc?.status]).toEqual([c, 'Submitted']);
    expect(rm).toBeUndefined();
  });
});
