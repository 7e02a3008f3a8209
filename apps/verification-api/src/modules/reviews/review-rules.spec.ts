import { type StepOutcome, verdictOf } from './review-rules';

const level = {
  steps: [
    { kind: 'identity_doc', optional: false, config: {} },
    { kind: 'selfie', optional: false, config: {} },
    { kind: 'aml', optional: true, config: {} },
  ],
};

const step = (kind: string, over: Partial<StepOutcome> = {}): StepOutcome => ({
  kind,
  reviewStatus: 'completed',
  reviewAnswer: 'GREEN',
  reviewRejectType: null,
  rejectLabels: [],
  moderationComment: null,
  clientComment: null,
  updatedAt: new Date(),
  ...over,
});

describe('verdictOf', () => {
  it('is undefined while a required step is missing, not completed, or completed without an answer', () => {
    expect(verdictOf(level, [step('identity_doc')])).toBeUndefined();
    expect(
      verdictOf(level, [step('identity_doc'), step('selfie', { reviewStatus: 'in_review' })]),
    ).toBeUndefined();
    expect(verdictOf(level, [step('identity_doc'), step('selfie', { reviewAnswer: null })])).toBeUndefined();
    expect(verdictOf({ steps: [] }, [])).toBeUndefined();
  });

  it('is GREEN when every required step is GREEN; optional steps do not count', () => {
    expect(
      verdictOf(level, [
        step('identity_doc', { moderationComment: 'ok' }),
        step('selfie'),
        step('aml', { reviewStatus: 'awaitingOperatorReview', reviewAnswer: null }),
      ]),
    ).toEqual({ reviewAnswer: 'GREEN', reviewRejectType: null, rejectLabels: [], moderationComment: 'ok' });
    expect(
      verdictOf(level, [step('identity_doc'), step('selfie'), step('aml', { reviewAnswer: 'RED' })]),
    ).toMatchObject({ reviewAnswer: 'GREEN' });
  });

  it('is RED with the strongest reject type, the RED labels once each, and the RED comments in level order', () => {
    expect(
      verdictOf(level, [
        step('selfie', {
          reviewAnswer: 'RED',
          reviewRejectType: 'FINAL',
          rejectLabels: ['FORGERY', 'BAD_QUALITY'],
          moderationComment: 'second',
        }),
        step('identity_doc', {
          reviewAnswer: 'RED',
          reviewRejectType: 'RETRY',
          rejectLabels: ['BAD_QUALITY'],
          moderationComment: 'first',
        }),
      ]),
    ).toEqual({
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['BAD_QUALITY', 'FORGERY'],
      moderationComment: 'first\nsecond',
    });
    expect(
      verdictOf(level, [
        step('identity_doc', { reviewAnswer: 'RED', reviewRejectType: 'EXPIRED' }),
        step('selfie', { reviewAnswer: 'RED', reviewRejectType: 'RETRY', moderationComment: null }),
      ]),
    ).toMatchObject({ reviewRejectType: 'RETRY', moderationComment: null });
    expect(
      verdictOf(level, [
        step('identity_doc', { reviewAnswer: 'RED' }),
        step('selfie', { moderationComment: 'x' }),
      ]),
    ).toEqual({ reviewAnswer: 'RED', reviewRejectType: 'RETRY', rejectLabels: [], moderationComment: null });
  });
});
