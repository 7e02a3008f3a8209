import type { EntityManager } from 'typeorm';

/** Who wrote a review-history event (`actorType` of GET .../review-history). */
export type ReviewActor = 'system' | 'sdk' | 'partner' | 'operator';

/**
 * Records one review-history event of an applicant inside the caller's transaction, so the event commits or
 * rolls back with the change it describes. `at` defaults to the column's `clock_timestamp()`, so events of one transaction keep their order.
 */
export async function recordReviewEvent(
  manager: EntityManager,
  applicant: { id: string; productId: string },
  eventType: string,
  actorType: ReviewActor,
  data: Record<string, unknown> = {},
  at?: Date,
): Promise<void> {
  await manager.query(
    `INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, data, at)
     VALUES ($1, $2, $3, $4, $5::jsonb, coalesce($6::timestamptz, clock_timestamp()))`,
    [applicant.id, applicant.productId, eventType, actorType, JSON.stringify(data), at ?? null],
  );
}
