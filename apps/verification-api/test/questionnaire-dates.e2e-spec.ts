import { applicantWithToken, type Credential, type Harness, startHarness } from './harness';

/**
 * A questionnaire's `date` answer is a calendar date that exists: 2023-02-29, 2024-02-30 and 2024-04-31 are 400,
 * not stored (Date.parse rolled them over into the next month). The worker's questionnaire check uses the same
 * rule (`checkAnswer`), so nothing the SDK refuses is accepted there.
 */
let h: Harness;
let key: Credential;

beforeAll(async () => {
  h = await startHarness();
  const t = await h.tenant();
  key = t.key;
  await h.admin('post', `/products/${t.productId}/questionnaires`, {
    id: 'q1',
    title: 'Q',
    questions: [{ id: 'since', text: 'Customer since', type: 'date', required: true }],
  });
  await h.admin('post', `/products/${t.productId}/levels`, {
    name: 'QLEVEL',
    applicantType: 'individual',
    steps: [{ kind: 'questionnaire' }],
    attachedQuestionnaireId: 'q1',
  });
});
afterAll(() => h?.close());

it('400 for a date that does not exist, nothing stored; a leap day and a real date are kept', async () => {
  const { token } = await applicantWithToken(h, key, {
    externalUserId: 'qd',
    verificationLevelName: 'QLEVEL',
  });
  const answer = (since: string) =>
    h
      .http()
      .post('/api/v1/sdk/questionnaire')
      .set({ authorization: `Bearer ${token}` })
      .send({ answers: { since } });
  for (const date of ['2023-02-29', '2024-02-30', '2024-04-31', '2024-13-01']) {
    const res = await answer(date);
    expect([date, res.status, res.body]).toEqual([
      date,
      400,
      { message: 'answers.since: must be a date YYYY-MM-DD' },
    ]);
  }
  expect((await answer('2024-02-29').expect(200)).body.answers).toEqual({ since: '2024-02-29' });
  expect((await answer('2031-12-31').expect(200)).body.answers).toEqual({ since: '2031-12-31' });
});
