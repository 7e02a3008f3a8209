import { z } from 'zod';
import { custodyTransactionAdvancePayload } from './custody';
import { QUEUES, type QueueName } from './queues';

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  queue: QueueName;
  /** Versioned: a breaking change to the payload is a new name (".v2"), never an edit. */
  name: string;
  schema: S;
}

function defineJob<S extends z.ZodType>(queue: QueueName, name: string, schema: S): JobDefinition<S> {
  return { queue, name, schema };
}

/** A partner-visible event committed to a producer's outbox (ARCHITECTURE.md, "Transactional outbox"). */
export const webhookEventPayload = z.object({
  eventId: z.string().uuid(),
  source: z.enum(['custody', 'verification']),
  tenantId: z.string().min(1),
  eventType: z.string().min(1),
  entityType: z.string().min(1),
  entityId: z.string().min(1),
  /**
   * Gap-free per (tenantId, entityType, entityId), assigned in the producer's outbox transaction (decision
   * 0225). Optional only for jobs enqueued before producers numbered their outbox.
   */
  sequence: z.number().int().min(1).optional(),
  occurredAt: z.string().datetime({ offset: true }),
  data: z.record(z.string(), z.unknown()),
});
export type WebhookEventPayload = z.infer<typeof webhookEventPayload>;

/** Most events in one `webhook.events.v1` job (decision 0402). */
export const WEBHOOK_EVENTS_PER_JOB = 100;

/**
 * Several relayed events in one job: what an outbox relay enqueues (decision 0402), so the dispatcher pays
 * one queue round trip and one inbox/delivery statement per batch rather than per event. Each event is
 * handled exactly as a `webhook.event.v1` job would be; a redelivered batch changes nothing.
 */
export const webhookEventsPayload = z.object({
  events: z.array(webhookEventPayload).min(1).max(WEBHOOK_EVENTS_PER_JOB),
});
export type WebhookEventsPayload = z.infer<typeof webhookEventsPayload>;

/** One submitted step to check (verification worker). Redelivery is harmless: the step's status is the guard. */
export const verificationStepCheckPayload = z.object({
  stepId: z.string().uuid(),
  applicantId: z.string().uuid(),
  kind: z.string().min(1),
  /** The step's `updated_at` when it was found `submitted`: one job per submission. */
  submittedAt: z.string().datetime({ offset: true }),
});
export type VerificationStepCheckPayload = z.infer<typeof verificationStepCheckPayload>;

/** A sweep of enrollments whose link expired (verification worker, repeated). */
export const verificationEnrollmentExpiryPayload = z.object({
  /** Enrollments handled per sweep. */
  batchSize: z.number().int().min(1).max(10000).default(500),
});

export const JOBS = {
  /** One event: still consumed (jobs queued by an earlier relay, tools and tests). */
  WEBHOOK_EVENT: defineJob(QUEUES.WEBHOOK_EVENTS, 'webhook.event.v1', webhookEventPayload),
  WEBHOOK_EVENTS: defineJob(QUEUES.WEBHOOK_EVENTS, 'webhook.events.v1', webhookEventsPayload),
  CUSTODY_TRANSACTION_ADVANCE: defineJob(
    QUEUES.CUSTODY_TRANSACTIONS,
    'custody.transaction.advance.v1',
    custodyTransactionAdvancePayload,
  ),
  VERIFICATION_STEP_CHECK: defineJob(
    QUEUES.VERIFICATION_CHECKS,
    'verification.step.check.v1',
    verificationStepCheckPayload,
  ),
  VERIFICATION_ENROLLMENT_EXPIRY: defineJob(
    QUEUES.VERIFICATION_CHECKS,
    'verification.enrollments.expire.v1',
    verificationEnrollmentExpiryPayload,
  ),
} as const;

export type JobKey = keyof typeof JOBS;
export type JobPayload<K extends JobKey> = z.infer<(typeof JOBS)[K]['schema']>;

const BY_NAME = new Map<string, JobDefinition>(Object.values(JOBS).map((job) => [job.name, job]));

export function jobDefinition(name: string): JobDefinition | undefined {
  return BY_NAME.get(name);
}

export function jobsOfQueue(queue: QueueName): JobDefinition[] {
  return Object.values(JOBS).filter((job) => job.queue === queue);
}

/** A payload that does not match its schema: a bug in the producer, never worth a retry. */
export class JobPayloadError extends Error {
  constructor(
    readonly jobName: string,
    readonly issues: string[],
  ) {
    super(`Job ${jobName} has an invalid payload: ${issues.join('; ')}`);
    this.name = 'JobPayloadError';
  }
}

export function parseJobPayload<S extends z.ZodType>(job: JobDefinition<S>, data: unknown): z.infer<S> {
  const result = job.schema.safeParse(data);
  if (!result.success) {
    throw new JobPayloadError(
      job.name,
      result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  }
  return result.data;
}

/**
 * Startup check: every job of every consumed queue has exactly one processor.
 * `handled` lists job names, once per registered processor.
 */
export function assertJobCoverage(consumed: readonly QueueName[], handled: readonly string[]): void {
  const problems: string[] = [];
  for (const queue of consumed) {
    for (const job of jobsOfQueue(queue)) {
      const count = handled.filter((name) => name === job.name).length;
      if (count === 0) problems.push(`job ${job.name} on queue ${queue} has no processor`);
      if (count > 1) problems.push(`job ${job.name} on queue ${queue} has ${count} processors`);
    }
  }
  for (const name of new Set(handled)) {
    const job = BY_NAME.get(name);
    if (!job) problems.push(`processor for unknown job ${name}`);
    else if (!consumed.includes(job.queue))
      problems.push(`processor for job ${name} but queue ${job.queue} is not consumed`);
  }
  if (problems.length > 0) throw new Error(`Job processor check failed: ${problems.join('; ')}`);
}
