import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** The decision history of an applicant; administrative events live here too but are never served. */
@Entity({ name: 'review_events' })
@Index('review_events_applicant_at_idx', ['applicantId', 'at'])
export class ReviewEventEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'applicant_id' })
  applicantId: string;

  @Column('uuid', { name: 'product_id' })
  productId: string;

  @Column('text', { name: 'event_type' })
  eventType: string;

  @Column('text', { name: 'actor_type' })
  actorType: string;

  @Column('jsonb', { default: () => `'{}'` })
  data: Record<string, unknown>;

  @Column('timestamptz', { default: () => 'clock_timestamp()' })
  at: Date;
}
