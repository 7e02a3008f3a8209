import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A staged upload (decision 0460): its bytes may be in blob storage under `storageKey` and nothing records them
 * yet. Written before the bytes are stored, deleted in the commit's transaction (with the resource row) or once
 * the discard or the sweeper removed the bytes. A row older than MEDIA_STAGED_TTL_SECONDS is swept.
 */
@Entity({ name: 'staged_uploads' })
@Index('staged_uploads_created_idx', ['createdAt'])
export class StagedUploadEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text', { name: 'storage_key' })
  storageKey: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
