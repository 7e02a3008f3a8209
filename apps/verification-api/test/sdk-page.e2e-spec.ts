/**
 * The hosted page in a real browser: Debian's chromium driven by playwright-core against the real app
 * (verification-api serving the Vite build of apps/sdk-web, real Postgres and Redis).
 * Screenshots of every screen go to `.tessera/artifacts/sdk-web/` at the repository root (git-ignored; CI keeps it).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isCountryCode } from '@tessera/contracts';
import { mediaFixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  ARTIFACTS as SHOTS,
  launchChromium,
  linkMaker,
  PERSONAL_INFO,
  startPageApp,
  standInPhoto,
} from './browser';
import type { Credential, Harness } from './harness';
import type { MediaHarness } from './media';

// A real browser on a shared 2-core machine: allow a screen flow more than the default 30 s.
jest.setTimeout(120_000);

let h: Harness;
let mh: MediaHarness;
let key: Credential;
let browser: Browser;
let origin: string;
let partner: Server;
let partnerOrigin: string;

const QUESTIONNAIRE = {
  id: 'profile',
  title: 'Your profile',
  questions: [
    {
      id: 'occupation',
      text: 'Occupation',
      type: 'select',
      required: true,
      options: ['employed', 'self-employed'],
    },
    { id: 'pep', text: 'Politically exposed person?', type: 'boolean', required: true },
  ],
};

beforeAll(async () => {
  let productId: string;
  ({ mh, h, key, productId, origin } = await startPageApp());
  await h.admin('post', `/products/${productId}/questionnaires`, QUESTIONNAIRE);
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'WEB_FORMS',
    applicantType: 'individual',
    steps: [{ kind: 'personal_information' }, { kind: 'questionnaire' }, { kind: 'aml' }],
    attachedQuestionnaireId: 'profile',
    ...PERSONAL_INFO,
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'WEB_FULL',
    applicantType: 'individual',
    steps: [
      { kind: 'personal_information' },
      { kind: 'identity_doc' },
      { kind: 'selfie' },
      { kind: 'liveness' },
      { kind: 'aml' },
    ],
    personalInfoFields: ['firstName', 'lastName', 'dateOfBirth', 'nationality'],
    personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth'],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'WEB_KYB',
    applicantType: 'company',
    steps: [{ kind: 'company_data' }, { kind: 'company_documents' }],
    companyDataFields: ['companyName', 'legalForm', 'incorporatedOn', 'registrationCountry'],
    companyRequiredFields: ['companyName', 'legalForm', 'registrationCountry'],
    companyLegalForms: ['gmbh', 'ag'],
    companyRequiredDocuments: ['certificate_of_incorporation'],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'WEB_KYB_MIN',
    applicantType: 'company',
    steps: [{ kind: 'company_documents' }],
    companyRequiredDocuments: ['certificate_of_incorporation'],
    companyDocumentsMinRequired: 3,
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'WEB_BACK',
    applicantType: 'individual',
    steps: [{ kind: 'personal_information' }, { kind: 'questionnaire' }, { kind: 'selfie' }],
    attachedQuestionnaireId: 'profile',
    personalInfoFields: ['firstName', 'middleName', 'lastName', 'phone'],
    personalInfoRequiredFields: ['firstName', 'lastName'],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'WEB_DOCS',
    applicantType: 'individual',
    steps: [{ kind: 'identity_doc' }, { kind: 'selfie' }, { kind: 'liveness' }],
  });
  // The partner's site the page redirects to.
  partner = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Partner: ${req.url}</h1>`);
  });
  await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
  partnerOrigin = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  partner?.close();
  await mh?.close();
});

const newLink = linkMaker('web');
const link = (level: string, params?: Record<string, string>, claimed?: Record<string, string>) =>
  newLink({ h, key, origin }, level, params, claimed);

/** A page that records every request leaving for another origin and every CSP complaint. */
async function open(context: BrowserContext, url: string) {
  const page = await context.newPage();
  const foreign: string[] = [];
  const csp: string[] = [];
  page.on('request', (r) => {
    const u = r.url();
    if (
      !u.startsWith(origin) &&
      !u.startsWith('blob:') &&
      !u.startsWith('data:') &&
      !u.startsWith(partnerOrigin)
    ) {
      foreign.push(u);
    }
  });
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) csp.push(m.text());
  });
  const response = await page.goto(url);
  return { page, response, foreign, csp };
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const heading = (page: Page) => page.locator('h1#screen-title');
/** The id of the focused element (evaluated in the page; this file is compiled without DOM types). */
const activeId = (page: Page) => page.evaluate<string | undefined>('document.activeElement?.id');

describe('hosted page', () => {
  it('full flow: claimed field disabled, the rest filled, document front and back, selfie, recorded clip, submit, successUrl', async () => {
    const { url, externalUserId } = await link(
      'WEB_FULL',
      { successUrl: `${partnerOrigin}/kyc/done`, returnUrl: `${partnerOrigin}/kyc/back` },
      { lastName: 'Turing' },
    );
    const context = await browser.newContext({ locale: 'en-GB', colorScheme: 'light' });
    const { page, foreign, csp } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();

    await page.getByText('Step 1 of 4').waitFor();
    await expect(page.getByLabel('Last name').isDisabled()).resolves.toBe(true);
    await page.getByLabel('First name').fill('Alan');
    await page.getByLabel('Date of birth').fill('1912-06-23');
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByText('Step 2 of 4').waitFor();
    await page.getByLabel('ID card').check();
    await page.locator('#doc-front-file').setInputFiles({
      name: 'front.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'IDENTITY CARD · TURING · front'),
    });
    await page.locator('#doc-front-status', { hasText: 'Uploaded' }).waitFor();
    await page.locator('#doc-back-file').setInputFiles({
      name: 'back.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'IDENTITY CARD · back · MRZ <<<'),
    });
    await page.locator('#doc-back-status', { hasText: 'Uploaded' }).waitFor();
    await expect(page.locator('img.preview').count()).resolves.toBe(2);
    await shot(page, '11-identity-document-uploaded');
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByText('Step 3 of 4').waitFor();
    // Back: the document type and both stored sides are still there.
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByText('Step 2 of 4').waitFor();
    await expect(page.getByLabel('ID card').isChecked()).resolves.toBe(true);
    await expect(page.locator('#doc-front-status').textContent()).resolves.toBe('✓ Uploaded');
    await expect(page.locator('#doc-back-status').textContent()).resolves.toBe('✓ Uploaded');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 3 of 4').waitFor();
    await expect(page.locator('input[type=file][capture=user]').count()).resolves.toBe(1);
    await page.locator('#selfie-file').setInputFiles({
      name: 'selfie.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, '🙂 selfie'),
    });
    await page.locator('#selfie-status', { hasText: 'Uploaded' }).waitFor();
    await shot(page, '12-selfie');
    await page.getByRole('button', { name: 'Continue' }).click();

    // Liveness: the fake camera records a real WebM clip through MediaRecorder.
    await page.getByText('Step 4 of 4').waitFor();
    await page.getByRole('button', { name: 'Start the camera' }).click();
    await page.getByRole('button', { name: 'Record 3 seconds' }).click();
    await page.getByText('✓ Uploaded').waitFor({ timeout: 15_000 });
    await shot(page, '13-liveness');
    await page.getByRole('button', { name: 'Submit' }).click();

    await page.waitForURL(`${partnerOrigin}/kyc/done`);
    expect(foreign).toEqual([]);
    expect(csp).toEqual([]);
    const steps = await h.http().get(`/v1/applicants/${externalUserId}/steps`).set(h.auth(key)).expect(200);
    expect(
      steps.body.steps.map((st: { kind: string; reviewStatus: string }) => st.reviewStatus),
    ).not.toContain('pending');
    const resources = await h
      .http()
      .get(`/v1/applicants/${externalUserId}/resources`)
      .set(h.auth(key))
      .expect(200);
    expect(
      resources.body.items
        .map((r: { slot: string; mime: string; documentType?: string }) => [
          r.slot,
          r.mime,
          r.documentType ?? null,
        ])
        .sort(),
    ).toEqual([
      ['document_back', 'image/png', 'id_card'],
      ['document_front', 'image/png', 'id_card'],
      ['liveness_video', 'video/webm', null],
      ['selfie', 'image/png', null],
    ]);
    await context.close();
  });

  it('served with a strict CSP; a claimed field is disabled; a required one is announced; questionnaire; submit lands on successUrl', async () => {
    const { url, externalUserId } = await link(
      'WEB_FORMS',
      { successUrl: `${partnerOrigin}/kyc/success`, errorUrl: `${partnerOrigin}/kyc/error` },
      { firstName: 'Ada' },
    );
    const context = await browser.newContext({ locale: 'en-GB', colorScheme: 'light' });
    const { page, response, foreign, csp } = await open(context, url);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['referrer-policy']).toBe('no-referrer');

    await expect(heading(page).textContent()).resolves.toBe('Verify your identity');
    await shot(page, '01-welcome');
    await page.getByRole('button', { name: 'Start' }).click();

    await page.getByText('Step 1 of 2').waitFor();
    await expect(activeId(page)).resolves.toBe('screen-title');
    const first = page.getByLabel('First name');
    await expect(first.isDisabled()).resolves.toBe(true);
    await expect(first.inputValue()).resolves.toBe('Ada');
    await expect(page.locator('#hint-firstName').textContent()).resolves.toContain('cannot be changed');
    await shot(page, '02-personal-information');

    // A required field left empty: announced in the alert region, focus on the field.
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toBe('Last name is required.');
    await expect(activeId(page)).resolves.toBe('field-lastName');
    await shot(page, '03-personal-information-error');

    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Date of birth').fill('1815-12-10');
    await page.getByLabel('Nationality').selectOption('GB');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.keyboard.press('Enter');

    await page.getByText('Step 2 of 2').waitFor();
    await expect(heading(page).textContent()).resolves.toBe('Questionnaire');
    await page.getByLabel('Occupation').selectOption('employed');
    await page.getByLabel('No').check();
    await shot(page, '04-questionnaire');
    await page.getByRole('button', { name: 'Submit' }).click();

    await page.waitForURL(`${partnerOrigin}/kyc/success`);
    expect(foreign).toEqual([]);
    expect(csp).toEqual([]);
    const applicant = await h.http().get(`/v1/applicants/${externalUserId}`).set(h.auth(key)).expect(200);
    expect(applicant.body).toMatchObject({
      status: 'pending',
      info: {
        firstName: 'Ada',
        lastName: 'Lovelace',
        dateOfBirth: '1815-12-10',
        nationality: 'GB',
        email: 'ada@example.test',
      },
    });
    await context.close();
  });

  it('Back keeps what was saved: optional fields, answers and uploads are shown again and never sent as blanks', async () => {
    const { url, externalUserId } = await link('WEB_BACK', {}, { lastName: 'Lovelace' });
    const info = async () =>
      (await h.http().get(`/v1/applicants/${externalUserId}`).set(h.auth(key)).expect(200)).body.info;
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    const back = () => page.getByRole('button', { name: 'Back' }).click();
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 3').waitFor();
    // Meanwhile the same link in another tab saves the middle name: this tab's blank, untouched field must
    // not clear it.
    const other = await h
      .http()
      .get(`/api/v1/sdk/links/${url.split('/').pop()}`)
      .expect(200);
    await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set('authorization', `Bearer ${other.body.token}`)
      .send({ middleName: 'King' })
      .expect(200);
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Phone number').fill('+44 20 7946 0000');
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByText('Step 2 of 3').waitFor();
    await page.getByLabel('Occupation').selectOption('employed');
    await page.getByLabel('No').check();
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByText('Step 3 of 3').waitFor();
    await page.locator('#selfie-file').setInputFiles({
      name: 'selfie.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'selfie'),
    });
    await page.locator('#selfie-status', { hasText: 'Uploaded' }).waitFor();
    await back();
    await page.getByText('Step 2 of 3').waitFor();
    await expect(page.getByLabel('Occupation').inputValue()).resolves.toBe('employed');
    await expect(page.getByLabel('No').isChecked()).resolves.toBe(true);
    await back();
    await page.getByText('Step 1 of 3').waitFor();
    await expect(page.getByLabel('Phone number').inputValue()).resolves.toBe('+44 20 7946 0000');
    await expect(page.getByLabel('Middle name').inputValue()).resolves.toBe('King');
    // Continue skips the questionnaire, already submitted, to the first step still open.
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 3 of 3').waitFor();
    await expect(info()).resolves.toEqual({
      firstName: 'Ada',
      middleName: 'King',
      lastName: 'Lovelace',
      phone: '+44 20 7946 0000',
    });
    await expect(page.locator('#selfie-status').textContent()).resolves.toBe('✓ Uploaded');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Thank you!').waitFor();
    await expect(info()).resolves.toMatchObject({ phone: '+44 20 7946 0000', middleName: 'King' });
    await context.close();
  });

  it('in German with the dark theme from the link; the user can still switch language and theme', async () => {
    const { url } = await link('WEB_FORMS', { lang: 'de', theme: 'dark' });
    const context = await browser.newContext({ locale: 'en-US', colorScheme: 'light' });
    const { page } = await open(context, url);
    await expect(heading(page).textContent()).resolves.toBe('Bestätigen Sie Ihre Identität');
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('de');
    await page.locator("html[data-theme='dark']").waitFor({ state: 'attached' });
    const background = () => page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    await expect(background()).resolves.toBe('rgb(15, 17, 21)');
    await shot(page, '05-welcome-de-dark');
    await page.getByRole('button', { name: 'Los geht’s' }).click();
    await page.getByText('Schritt 1 von 2').waitFor();
    await expect(page.getByLabel('Geburtsdatum').count()).resolves.toBe(1);
    await shot(page, '06-personal-information-de-dark');

    await page.getByLabel('Sprache').selectOption('fr');
    await page.getByText('Étape 1 sur 2').waitFor();
    await page.getByLabel('Thème').selectOption('light');
    await page.locator("html[data-theme='light']").waitFor({ state: 'attached' });
    // Polled here, not by waitForFunction with a string: the page's CSP refuses the eval of its second try.
    for (let i = 0; i < 50 && (await background()) !== 'rgb(245, 246, 248)'; i++)
      await page.waitForTimeout(100);
    await expect(background()).resolves.toBe('rgb(245, 246, 248)');
    await context.close();
  });

  it('switching the language leaves the keyboard focus on the switch; the heading takes it when the screen changes', async () => {
    const { url } = await link('WEB_FORMS', {}, { firstName: 'Ada' });
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).waitFor();
    await expect(activeId(page)).resolves.toBe('screen-title');
    const language = page.locator('#pref-lang');
    await language.focus();
    await language.selectOption('fr');
    await expect(heading(page).textContent()).resolves.toBe('Vérifiez votre identité');
    await expect(activeId(page)).resolves.toBe('pref-lang');
    await page.getByRole('button', { name: 'Commencer' }).click();
    await page.getByText('Étape 1 sur 2').waitFor();
    await expect(activeId(page)).resolves.toBe('screen-title');
    await language.focus();
    await language.selectOption('en');
    await page.getByText('Step 1 of 2').waitFor();
    await expect(activeId(page)).resolves.toBe('pref-lang');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Date of birth').fill('1815-12-10');
    await page.getByLabel('Nationality').selectOption('GB');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 2 of 2').waitFor();
    await expect(activeId(page)).resolves.toBe('screen-title');
    await context.close();
  });

  it('offers every two-letter country code the API accepts, Kosovo (XK) too, and saves it (decision 0483)', async () => {
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
    const accepted = letters.flatMap((a) => letters.map((b) => a + b)).filter(isCountryCode);
    expect(accepted).toContain('XK');
    const { url, externalUserId } = await link('WEB_FORMS', {}, { firstName: 'Ada' });
    const context = await browser.newContext({ locale: 'en-GB' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 2').waitFor();
    const offered = await page
      .locator('#field-nationality option')
      .evaluateAll((options) => options.map((o) => o.getAttribute('value') ?? ''));
    expect(accepted.filter((code) => !offered.includes(code))).toEqual([]);
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Date of birth').fill('1815-12-10');
    await page.getByLabel('Nationality').selectOption('XK');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 2 of 2').waitFor();
    const applicant = await h.http().get(`/v1/applicants/${externalUserId}`).set(h.auth(key)).expect(200);
    expect(applicant.body.info).toMatchObject({ lastName: 'Lovelace', nationality: 'XK' });
    await context.close();
  });

  it("a value the server refuses is named in the page's language, its field marked invalid and focused; a 409 is translated", async () => {
    const { url, enrollmentId } = await link('WEB_FORMS', { lang: 'de' }, { firstName: 'Ada' });
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Los geht’s' }).click();
    await page.getByText('Schritt 1 von 2').waitFor();
    const alert = page.locator('#screen-error');
    const invalid = (key: string) => page.locator(`#field-${key}`).getAttribute('aria-invalid');
    await page.getByLabel('Nachname').fill('Lovelace');
    await page.getByLabel('Staatsangehörigkeit').selectOption('GB');
    await page.getByLabel('Geburtsdatum').fill('2999-01-01');
    await page.getByRole('button', { name: 'Weiter' }).click();
    await alert.getByText('Geburtsdatum:').waitFor();
    await expect(alert.textContent()).resolves.toBe(
      'Geburtsdatum: Geben Sie ein gültiges Datum ein, das nicht in der Zukunft liegt.',
    );
    await expect(invalid('dateOfBirth')).resolves.toBe('true');
    await expect(page.locator('#field-dateOfBirth').getAttribute('aria-describedby')).resolves.toBe(
      'screen-error',
    );
    await expect(activeId(page)).resolves.toBe('field-dateOfBirth');
    await shot(page, '18-server-error-de');

    await page.getByLabel('Geburtsdatum').fill('1815-12-10');
    await page.getByLabel('E-Mail').fill('ada@example');
    await page.getByRole('button', { name: 'Weiter' }).click();
    await alert.getByText('E-Mail:').waitFor();
    await expect(alert.textContent()).resolves.toBe('E-Mail: Geben Sie eine gültige E-Mail-Adresse ein.');
    await expect(invalid('email')).resolves.toBe('true');
    await expect(invalid('dateOfBirth')).resolves.toBe('false');
    await expect(activeId(page)).resolves.toBe('field-email');

    // Submitted meanwhile (another tab): the 409 in German, no field marked.
    await h.sql("UPDATE enrollments SET status = 'submitted' WHERE id = $1", [enrollmentId]);
    await page.getByLabel('E-Mail').fill('ada@example.test');
    await page.getByRole('button', { name: 'Weiter' }).click();
    await alert.getByText('Diese Prüfung wurde bereits abgeschickt.').waitFor();
    await expect(invalid('email')).resolves.toBe('false');
    await context.close();
  });

  it('the welcome text counts its steps with the plural forms of the language', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const one = await link('WEB_KYB_MIN', {}, { type: 'company', companyName: 'One Step Ltd' });
    const single = await open(context, one.url);
    await single.page
      .getByText('We will guide you through 1 short step. Have your documents at hand.')
      .waitFor();
    const russian = await link('WEB_FORMS', { lang: 'ru' });
    const few = await open(context, russian.url);
    await few.page.getByText('Мы проведём вас через 2 коротких шага. Подготовьте документы.').waitFor();
    const german = await link(
      'WEB_KYB_MIN',
      { lang: 'de' },
      { type: 'company', companyName: 'Ein Schritt GmbH' },
    );
    const de = await open(context, german.url);
    await de.page.getByText('Wir führen Sie durch 1 kurzen Schritt.', { exact: false }).waitFor();
    await context.close();
  });

  it("without a pinned lang the browser's language wins (else English); system theme follows the OS", async () => {
    const { url } = await link('WEB_FORMS');
    const context = await browser.newContext({ locale: 'ru-RU', colorScheme: 'dark' });
    const { page } = await open(context, url);
    await expect(heading(page).textContent()).resolves.toBe('Подтвердите свою личность');
    await page.locator("html[data-theme='dark']").waitFor({ state: 'attached' });
    await context.close();
    const other = await browser.newContext({ locale: 'ja-JP', colorScheme: 'light' });
    const second = await open(other, url);
    await expect(heading(second.page).textContent()).resolves.toBe('Verify your identity');
    await other.close();
  });

  it('with no redirect URLs the flow ends on the terminal screen', async () => {
    const { url } = await link(
      'WEB_FORMS',
      {},
      { firstName: 'Grace', lastName: 'Hopper', dateOfBirth: '1906-12-09', nationality: 'US' },
    );
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 2').waitFor();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 2 of 2').waitFor();
    await page.getByLabel('Occupation').selectOption('self-employed');
    await page.getByLabel('Yes').check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Thank you!').waitFor();
    expect(page.url()).toBe(url);
    await shot(page, '07-final');
    // A reload of a submitted link lands on the terminal screen again.
    await page.reload();
    await page.getByText('Thank you!').waitFor();
    await context.close();
  });

  it('company: claimed company name disabled, legal form from the level, the required document uploaded as PDF', async () => {
    const { url, externalUserId } = await link('WEB_KYB', {}, { type: 'company', companyName: 'Acme GmbH' });
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await expect(heading(page).textContent()).resolves.toBe('Verify your company');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 2').waitFor();
    await expect(page.getByLabel('Company name').isDisabled()).resolves.toBe(true);
    await expect(page.locator('#field-legalForm option').allTextContents()).resolves.toEqual([
      'Select…',
      'GmbH',
      'AG',
    ]);
    await page.getByLabel('Legal form').selectOption('gmbh');
    await page.getByLabel('Country of registration').selectOption('DE');
    await page.getByLabel('Date of incorporation').fill('2001-02-03');
    await shot(page, '15-company-data');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 2 of 2').waitFor();
    await page.locator('#company-certificate_of_incorporation-file').setInputFiles({
      name: 'certificate.pdf',
      mimeType: 'application/pdf',
      buffer: mediaFixture('tiny.pdf'),
    });
    await page.locator('#company-certificate_of_incorporation-status', { hasText: 'Uploaded' }).waitFor();
    await shot(page, '16-company-documents');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Thank you!').waitFor();
    const info = await h
      .http()
      .get(`/v1/applicants/${externalUserId}/company-info`)
      .set(h.auth(key))
      .expect(200);
    expect(info.body).toMatchObject({
      companyName: 'Acme GmbH',
      legalForm: 'gmbh',
      country: 'DE',
      incorporationDate: '2001-02-03',
    });
    await context.close();
  });

  it('company documents: a minimum above the required list asks for more documents, and they all count', async () => {
    const { url, externalUserId } = await link(
      'WEB_KYB_MIN',
      {},
      { type: 'company', companyName: 'Min Docs Ltd' },
    );
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    const slots = ['certificate_of_incorporation', 'other_1', 'other_2'];
    for (const [i, slot] of slots.entries()) {
      await page.locator(`#company-${slot}-file`).setInputFiles({
        name: `document-${i}.pdf`,
        mimeType: 'application/pdf',
        buffer: mediaFixture('tiny.pdf'),
      });
      await page.locator(`#company-${slot}-status`, { hasText: 'Uploaded' }).waitFor();
    }
    await expect(page.locator('input[type=file]').count()).resolves.toBe(3);
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Thank you!').waitFor();
    // media-store keeps one active upload per slot: the earlier documents are kept as superseded uploads.
    const docs = await h
      .http()
      .get(`/v1/applicants/${externalUserId}/resources?activeOnly=false`)
      .set(h.auth(key))
      .expect(200);
    expect(docs.body.items.map((d: { documentType: string }) => d.documentType).sort()).toEqual(
      [...slots].sort(),
    );
    await context.close();
  });

  it('a final reject goes to errorUrl, else returnUrl, else the rejected screen', async () => {
    const reject = (externalUserId: string) =>
      h.sql(
        "UPDATE applicants SET status = 'rejected', review_answer = 'RED', review_reject_type = 'FINAL' WHERE external_user_id = $1",
        [externalUserId],
      );
    const context = await browser.newContext({ locale: 'en-US' });
    const withError = await link('WEB_FORMS', {
      errorUrl: `${partnerOrigin}/kyc/error`,
      returnUrl: `${partnerOrigin}/kyc/back`,
    });
    await reject(withError.externalUserId);
    const first = await open(context, withError.url);
    await first.page.waitForURL(`${partnerOrigin}/kyc/error`);
    const withReturn = await link('WEB_FORMS', { returnUrl: `${partnerOrigin}/kyc/back` });
    await reject(withReturn.externalUserId);
    const second = await open(context, withReturn.url);
    await second.page.waitForURL(`${partnerOrigin}/kyc/back`);
    const bare = await link('WEB_FORMS');
    await reject(bare.externalUserId);
    const third = await open(context, bare.url);
    await expect(heading(third.page).textContent()).resolves.toBe('Verification not possible');
    await shot(third.page, '14-rejected');
    await context.close();
  });

  it('a reopened link lands by state: submitted or approved on successUrl; RED RETRY on a "new link" screen, no redirect; failed on the expired screen', async () => {
    const redirects = {
      successUrl: `${partnerOrigin}/kyc/success`,
      errorUrl: `${partnerOrigin}/kyc/error`,
      returnUrl: `${partnerOrigin}/kyc/back`,
    };
    const settle = async (
      { externalUserId, enrollmentId }: { externalUserId: string; enrollmentId: string },
      enrollment: string,
      review: [string, string, string | null] | null,
    ) => {
      await h.sql('UPDATE enrollments SET status = $2 WHERE id = $1', [enrollmentId, enrollment]);
      if (review) {
        await h.sql(
          'UPDATE applicants SET status = $2, review_answer = $3, review_reject_type = $4 WHERE external_user_id = $1',
          [externalUserId, ...review],
        );
      }
    };
    const context = await browser.newContext({ locale: 'en-US' });

    const retry = await link('WEB_FORMS', redirects);
    await settle(retry, 'rejected', ['rejected', 'RED', 'RETRY']);
    const retried = await open(context, retry.url);
    await expect(heading(retried.page).textContent()).resolves.toBe('Your verification needs another try');
    await expect(retried.page.locator('main').getByRole('status').textContent()).resolves.toContain(
      'send you a new link',
    );
    expect(retried.page.url()).toBe(retry.url);
    await shot(retried.page, '17-retry');

    const failed = await link('WEB_FORMS', redirects);
    await settle(failed, 'failed', null);
    const gone = await open(context, failed.url);
    await expect(heading(gone.page).textContent()).resolves.toBe('This link has expired');
    expect(gone.page.url()).toBe(failed.url);

    const submitted = await link('WEB_FORMS', redirects);
    await settle(submitted, 'submitted', null);
    await (await open(context, submitted.url)).page.waitForURL(redirects.successUrl);
    const approved = await link('WEB_FORMS', redirects);
    await settle(approved, 'completed', ['approved', 'GREEN', null]);
    await (await open(context, approved.url)).page.waitForURL(redirects.successUrl);
    await context.close();
  });

  it('an expired link and an unknown link show clear pages', async () => {
    const { url, enrollmentId } = await link('WEB_FORMS');
    await h.sql("UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1", [
      enrollmentId,
    ]);
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await expect(heading(page).textContent()).resolves.toBe('This link has expired');
    await shot(page, '08-expired');
    const unknown = await open(context, `${origin}/sdk/AAAAAAAAAAAA`);
    await expect(heading(unknown.page).textContent()).resolves.toBe('Link not found');
    await shot(unknown.page, '09-not-found');
    await context.close();
  });

  it('document capture offers the type, both sides of a two-sided document, the camera, and refuses a wrong file type', async () => {
    const { url } = await link('WEB_DOCS');
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 3').waitFor();
    await expect(page.locator('input[type=file][capture=environment]').count()).resolves.toBe(1);
    await page.getByLabel('ID card').check();
    await page.getByRole('group', { name: 'Back side' }).waitFor();
    await expect(page.locator('input[type=file][capture=environment]').count()).resolves.toBe(2);
    await page
      .locator('#doc-front-file')
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') });
    await expect(page.locator('#doc-front-error').textContent()).resolves.toBe(
      'This file type is not accepted. Please use JPG, PNG, HEIC, WEBP.',
    );
    await shot(page, '10-identity-document');
    // An empty file is refused by the page itself, before anything is sent (decision 0487).
    await page
      .locator('#doc-front-file')
      .setInputFiles({ name: 'empty.png', mimeType: 'image/png', buffer: Buffer.alloc(0) });
    await expect(page.locator('#doc-front-error').textContent()).resolves.toBe(
      'This file is empty. Please choose another file.',
    );
    await expect(page.locator('#doc-front-status').textContent()).resolves.toBe('');
    // Continue without the captures: the missing side is named.
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.locator('#screen-error').textContent()).resolves.toBe('Please add: Front side.');
    await context.close();
  });

  it('an upload the server refuses leaves no preview of the refused file; a 409 is explained; a 401 shows the expired screen', async () => {
    const { url, enrollmentId } = await link('WEB_DOCS');
    const context = await browser.newContext({ locale: 'en-US' });
    const { page } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 3').waitFor();
    const front = page.locator('#doc-front-file');
    const error = (text: string) => page.locator('#doc-front-error', { hasText: text }).waitFor();
    const previews = page.locator('img.preview');
    // Named and typed as PNG, so the page sends it; its bytes are no image, so the server answers 415.
    const fake = { name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') };
    await front.setInputFiles(fake);
    await error('This file type is not accepted. Please use JPG, PNG, HEIC, WEBP.');
    await expect(previews.count()).resolves.toBe(0);
    await expect(page.locator('#doc-front-status').textContent()).resolves.toBe('');

    await front.setInputFiles({
      name: 'front.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'PASSPORT · photo page'),
    });
    await page.locator('#doc-front-status', { hasText: 'Uploaded' }).waitFor();
    await expect(previews.count()).resolves.toBe(1);
    const stored = await previews.getAttribute('src');
    // Refused again: the stored upload's preview stays, the refused file never shows.
    await front.setInputFiles(fake);
    await error('This file type is not accepted.');
    await expect(previews.count()).resolves.toBe(1);
    await expect(previews.getAttribute('src')).resolves.toBe(stored);

    // Submitted meanwhile (another tab): 409, explained.
    await h.sql("UPDATE enrollments SET status = 'submitted' WHERE id = $1", [enrollmentId]);
    await front.setInputFiles({
      name: 'again.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'again'),
    });
    await error('This verification was already submitted.');
    await expect(previews.getAttribute('src')).resolves.toBe(stored);
    // Expired meanwhile: 401, the expired screen.
    await h.sql(
      "UPDATE enrollments SET status = 'open', expires_at = now() - interval '1 second' WHERE id = $1",
      [enrollmentId],
    );
    await front.setInputFiles({
      name: 'late.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'late'),
    });
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    await context.close();
  });

  it('API: a media step is 409 naming the missing upload until the uploads are in (two-sided document needs its back)', async () => {
    const { externalUserId } = await link('WEB_DOCS');
    const enrollment = await h
      .http()
      .post(`/v1/applicants/${externalUserId}/verifications`)
      .set(h.auth(key))
      .expect(202);
    const { token } = (await h.http().get(`/api/v1/sdk/links/${enrollment.body.shortCode}`).expect(200)).body;
    const auth = { authorization: `Bearer ${token}` };
    const submit = (kind: string) => h.http().post(`/api/v1/sdk/steps/${kind}/submit`).set(auth);
    const send = (slot: string, file: string, fields: Record<string, string> = {}) => {
      const req = h.http().post(`/api/v1/sdk/uploads/${slot}`).set(auth);
      for (const [name, value] of Object.entries(fields)) void req.field(name, value);
      return req.attach('file', mediaFixture(file), file).expect(201);
    };
    expect((await submit('identity_doc').expect(409)).body).toEqual({
      message: 'identity_doc is incomplete: document_front is missing',
    });
    await send('document_front', 'tiny.jpg', { documentType: 'driving_licence' });
    expect((await submit('identity_doc').expect(409)).body).toEqual({
      message: 'identity_doc is incomplete: document_back is missing',
    });
    await send('document_back', 'tiny.png', { documentType: 'driving_licence' });
    await submit('identity_doc').expect(200);
    expect((await submit('selfie').expect(409)).body).toEqual({
      message: 'selfie is incomplete: selfie is missing',
    });
    await send('selfie', 'tiny.webp');
    await submit('selfie').expect(200);
    expect((await submit('liveness').expect(409)).body).toEqual({
      message: 'liveness is incomplete: liveness_video is missing',
    });
    await send('liveness_video', 'tiny.mp4');
    await submit('liveness').expect(200);
    await submit('liveness').expect(200);
    const done = await h.http().post('/api/v1/sdk/submit').set(auth).expect(202);
    // A link to another level replaces this session: its token no longer uploads anything.
    await h
      .http()
      .post(`/v1/applicants/${externalUserId}/verification-sessions?verificationLevelName=WEB_FORMS`)
      .set(h.auth(key))
      .expect(202);
    await h
      .http()
      .post('/api/v1/sdk/uploads/selfie')
      .set(auth)
      .attach('file', mediaFixture('tiny.png'), 'tiny.png')
      .expect(401);
    expect(done.body.steps.map((st: { reviewStatus: string }) => st.reviewStatus)).toEqual([
      'submitted',
      'submitted',
      'submitted',
    ]);
  });

  it('the assets carry the CSP and are cached as immutable; nothing outside the build is reachable', async () => {
    const res = await fetch(`${origin}/sdk/whatever-code`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const asset = /src="(\/sdk\/assets\/[^"]+\.js)"/.exec(html)![1];
    const js = await fetch(`${origin}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${origin}/sdk/assets/nope.js`)).status).toBe(404);
    expect([403, 404]).toContain((await fetch(`${origin}/sdk/assets/..%2f..%2fpackage.json`)).status);
  });
});
