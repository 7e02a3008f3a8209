import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'webhook_attempts' })
@Index('webhook_attempts_delivery_number_uq', ['deliveryId', 'attemptNumber'], { unique: true })
export class WebhookAttemptEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'delivery_id' })
  deliveryId: string;

  @Column('int', { name: 'attempt_number' })
  attemptNumber: number;

  @Column('text', { name: 'request_url' })
  requestUrl: string;

  @Column('int', { name: 'http_status_code', nullable: true })
  httpStatusCode: number | null;

  @Column('text', { name: 'response_body', nullable: true })
  responseBody: string | null;

  @Column('text', { name: 'error_message', nullable: true })
  errorMessage: string | null;

  @Column('int', { name: 'duration_ms' })
  durationMs: number;

  @Column('timestamptz', { name: 'attempted_at' })
  attemptedAt: Date;

  @Column('boolean')
  success: boolean;
}
