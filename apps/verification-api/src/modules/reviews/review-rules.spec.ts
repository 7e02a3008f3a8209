import { type ReviewVerdict, type StepOutcome, verdictOf, withChildren } from './review-rules';

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

describe('withChildren', () => {
  const green: ReviewVerdict = {
    reviewAnswer: 'GREEN',
    reviewRejectType: null,
    rejectLabels: [],
    moderationComment: 'documents fine',
  };
  const red: ReviewVerdict = {
    reviewAnswer: 'RED',
    reviewRejectType: 'RETRY',
    rejectLabels: ['COMPANY_DOCUMENTS_MISSING'],
    moderationComment: 'upload the register extract',
  };
  const child = (status: string, reviewRejectType: string | null = null) => ({ status, reviewRejectType });

  it("is the company's own verdict when no child was rejected (or there is none)", () => {
    expect(withChildren(green, [])).toBe(green);
    expect(withChildren(green, [child('approved'), child('approved')])).toBe(green);
    expect(withChildren(red, [child('approved')])).toBe(red);
  });

  it('is RED UBO_REJECTED, without the GREEN comments, when a child was rejected', () => {
    expect(withChildren(green, [child('approved'), child('rejected', 'RETRY')])).toEqual({
      reviewAnswer: 'RED',
      reviewRejectType: 'RETRY',
      rejectLabels: ['UBO_REJECTED'],
      moderationComment: null,
    });
    expect(withChildren(green, [child('rejected', null)]).reviewRejectType).toBe('RETRY');
  });

  it('takes the strongest reject type of its own and its children, FINAL over RETRY over EXPIRED', () => {
    expect(
      withChildren(green, [child('rejected', 'RETRY'), child('rejected', 'FINAL')]).reviewRejectType,
    ).toBe('FINAL');
    expect(withChildren(green, [child('rejected', 'EXPIRED')]).reviewRejectType).toBe('EXPIRED');
    expect(withChildren(red, [child('rejected', 'FINAL')])).toEqual({
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['COMPANY_DOCUMENTS_MISSING', 'UBO_REJECTED'],
      moderationComment: 'upload the register extract',
    });
    expect(
      withChildren({ ...red, reviewRejectType: 'FINAL' }, [child('rejected', 'RETRY')]).reviewRejectType,
    ).toBe('FINAL');
  });
});
