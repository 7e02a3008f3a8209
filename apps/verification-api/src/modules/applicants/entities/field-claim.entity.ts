import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/** An identity field committed by the partner: locked against edits from the SDK. */
@Entity({ name: 'field_claims' })
@Check('field_claims_claimed_by_check', `"claimed_by" IN ('partner')`)
export class FieldClaimEntity {
  @PrimaryColumn('uuid', { name: 'applicant_id' })
  applicantId: string;

  /** Level key (incorporatedOn, legalAddress, registrationCountry, firstName...). */
  @PrimaryColumn('text')
  field: string;

  @Column('jsonb')
  value: unknown;

  @Column('text', { name: 'claimed_by', default: 'partner' })
  claimedBy: 'partner';

  @Column('timestamptz', { name: 'claimed_at', default: () => 'now()' })
  claimedAt: Date;
}
