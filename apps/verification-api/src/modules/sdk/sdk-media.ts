import type { ResourceSummary } from './step-requirements';

/**
 * Where the SDK API reads the enrollment's uploads from (the resources module of the media issue).
 * Bound in SdkModule; the presence rules of `steps/{kind}/submit` read it.
 */
export interface SdkMediaSource {
  listForEnrollment(productId: string, applicantId: string, enrollmentId: string): Promise<ResourceSummary[]>;
}

export const SDK_MEDIA_SOURCE = Symbol('SDK_MEDIA_SOURCE');
