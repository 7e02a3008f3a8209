/** Handwritten verification shapes from the contract and DECISIONS.md; the fallback of openapi-types.ts. */
export type ApplicantStatusValue =
  'init' | 'pending' | 'in_review' | 'awaiting_user' | 'approved' | 'rejected' | 'expired' | 'deactivated';

export interface ApplicantCreate {
  externalUserId: string;
  type?: 'individual' | 'company';
  verificationLevelName?: string;
  firstName?: string;
  lastName?: string;
  middleName?: string;
  dateOfBirth?: string;
  nationality?: string;
  country?: string;
  email?: string;
  phone?: string;
  address?: string;
  companyName?: string;
  registrationNumber?: string;
  legalForm?: string;
  incorporationDate?: string;
  registeredAddress?: string;
}

export interface Applicant {
  id: string;
  externalUserId: string;
  type: 'individual' | 'company';
  verificationLevelName: string | null;
  status: ApplicantStatusValue;
  riskLevel: string;
  createdAtUtc: string;
  updatedAtUtc: string;
  lockedFields: string[];
  info: Record<string, unknown>;
}

export interface ApplicantStatus {
  externalUserId: string;
  applicantId: string;
  levelName: string | null;
  status: ApplicantStatusValue;
  reviewAnswer: 'GREEN' | 'RED' | null;
  reviewRejectType: 'FINAL' | 'RETRY' | 'EXPIRED' | null;
  rejectLabels: string[];
  moderationComment: string | null;
  riskLevel: string;
  attempt: number;
  createdAtUtc: string;
  reviewedAtUtc: string | null;
}

export interface StepResult {
  kind: string;
  optional: boolean;
  reviewAnswer: 'GREEN' | 'RED' | null;
  reviewStatus: string;
  reviewRejectType: 'FINAL' | 'RETRY' | 'EXPIRED' | null;
  lastUpdatedAtUtc: string;
}

export interface ApplicantSteps {
  externalUserId: string;
  levelId: string | null;
  levelName: string | null;
  steps: StepResult[];
}

export interface LevelSummary {
  name: string;
  applicantType: 'individual' | 'company';
  isActive: boolean;
  isDefault: boolean;
  requiredSteps: string[];
}

export interface LevelDetail extends LevelSummary {
  id: string;
  steps: unknown[];
  attachedQuestionnaireId: string | null;
  personalInfoFields: string[];
  personalInfoRequiredFields: string[];
  companyDataFields: string[];
  companyRequiredFields: string[];
  companyRequiredDocuments: string[];
  companyDocumentsMinRequired: number | null;
  companyLegalForms: string[];
}

export interface ListOf<T> {
  items: T[];
  totalItems: number;
}

export interface ReviewHistoryItem {
  atUtc: string;
  eventType: string;
  actorType: string;
}

export interface SessionLink {
  url: string;
  shortCode: string;
  expiresAtUtc: string;
  enrollmentId: string;
  levelName: string;
}

export interface Presentation {
  lang?: string;
  theme?: 'light' | 'dark' | 'system';
  returnUrl?: string;
  successUrl?: string;
  errorUrl?: string;
  ttlDays?: number;
}

export interface ResourceMetadata {
  id: string;
  enrollmentId: string;
  kind: 'image' | 'pdf' | 'video';
  slot: string;
  documentType?: string;
  side?: string;
  mime: string;
  addedAtUtc: string;
  source: string;
  active: boolean;
}

export interface SdkLink {
  url: string;
  shortCode: string;
  expiresAtUtc: string;
  token: string;
}

export interface SpawnResult {
  uboIndex: number;
  childApplicantId: string;
  childExternalUserId: string;
  alreadyLinked: boolean;
  sdkLink: SdkLink;
}

export interface UboRow {
  uboIndex: number;
  fullName: string;
  dateOfBirth: string;
  ownershipPercent: number;
  roles: string[];
  [key: string]: unknown;
}

export interface UboCreate {
  fullName: string;
  dateOfBirth: string;
  ownershipPercent: number;
  roles: string[];
  email?: string;
  nationality?: string;
}

export interface SandboxReview {
  reviewAnswer: 'GREEN' | 'RED';
  reviewRejectType?: 'FINAL' | 'RETRY';
  rejectLabels?: string[];
  moderationComment?: string;
  steps?: Record<string, 'GREEN' | 'RED'>;
}
