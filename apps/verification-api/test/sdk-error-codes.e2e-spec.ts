/**
 * The hosted SDK API names its known refusals in `X-Error-Code` beside the contract's `{message}` (decision
 * 0458), and the page explains them from that header, never from the English message. Against the real app
 * and media-store; the page in a real browser (Debian's chromium through playwright-core).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SDK_ERROR_CODES } from '@tessera/contracts';
import { mediaFixture as fixture } from '@tessera/testing';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, linkMaker, startPageApp } from './browser';
import type { Credential, Harness } from './harness';
import type { MediaHarness } from './media';

jest.setTimeout(120_000);

let mh: MediaHarness;
let h: Harness;
let key: Credential;
let browser: Browser;
let origin: string;

const PNG = fixture('tiny.png');

beforeAll(async () => {
  let productId: string;
  ({ mh, h, key, productId, origin } = await startPageApp({ MEDIA_MAX_UPLOADS_PER_SLOT: '1' }));
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'CODES',
    applicantType: 'individual',
    steps: [{ kind: 'personal_information' }, { kind: 'selfie' }],
    personalInfoFields: ['firstName'],
    personalInfoRequiredFields: ['firstName'],
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await mh?.close();
});

const newLink = linkMaker('codes');

/** A fresh link of the level and its SDK token. */
async function session() {
  const link = await newLink({ h, key, origin }, 'CODES');
  const shortCode = link.url.split('/sdk/')[1];
  const resolved = await h.http().get(`/api/v1/sdk/links/${shortCode}`).expect(200);
  return { ...link, token: resolved.body.token as string };
}

const sdk = (token: string, path: string) =>
  h.http().post(`/api/v1/sdk/${path}`).set('authorization', `Bearer ${token}`);

describe('X-Error-Code on the SDK API', () => {
  it('verification_submitted on every write after the submit, the body still only {message}', async () => {
    const s = await session();
    await h.sql("UPDATE enrollments SET status = 'submitted' WHERE id = $1", [s.enrollmentId]);
    const answers = [
      await sdk(s.token, 'personal-info').send({ firstName: 'Ada' }),
      await sdk(s.token, 'uploads/selfie').attach('file', PNG, 'selfie.png'),
      await sdk(s.token, 'steps/personal_information/submit'),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(409);
      expect(answer.headers['x-error-code']).toBe('verification_submitted');
      expect(answer.body).toEqual({ message: expect.any(String) });
    }
  });

  it('upload_limit when the slot holds its uploads (relayed from media-store); none on other errors', async () => {
    const s = await session();
    await sdk(s.token, 'uploads/selfie').attach('file', PNG, 'selfie.png').expect(201);
    const full = await sdk(s.token, 'uploads/selfie').attach('file', PNG, 'selfie.png').expect(409);
    expect(full.headers['x-error-code']).toBe('upload_limit');
    expect(full.body).toEqual({ message: expect.stringMatching(/at most 1 uploads/) });
    const unknown = await sdk(s.token, 'uploads/nowhere').attach('file', PNG, 'x.png').expect(400);
    expect(unknown.headers['x-error-code']).toBeUndefined();
  });
});

describe('the page', () => {
  it('takes the codes from libs/contracts, the list the server sends: no copy of one in its sources (decision 0479)', () => {
    const web = join(__dirname, '../../sdk-web');
    const sources = readdirSync(join(web, 'src'))
      .filter((name) => /\.tsx?$/.test(name))
      .map((name) => readFileSync(join(web, 'src', name), 'utf8'))
      .join('\n');
    expect(sources).toContain("from '@tessera/contracts/src/sdk-error-codes'");
    const bundle = readdirSync(join(web, 'dist/assets'))
      .filter((name) => name.endsWith('.js'))
      .map((name) => readFileSync(join(web, 'dist/assets', name), 'utf8'))
      .join('\n');
    for (const code of Object.values(SDK_ERROR_CODES)) {
      expect(sources).not.toMatch(new RegExp(`['"]${code}['"]`));
      expect(bundle).toContain(code);
    }
  });

  /** Serves the SDK API's real answers with their message reworded: only the status and headers stay. */
  async function rewordErrors(page: Page) {
    await page.route('**/api/v1/sdk/**', async (route) => {
      const response = await route.fetch();
      if (response.status() < 400) return route.fulfill({ response });
      return route.fulfill({ response, body: JSON.stringify({ message: 'Reworded by the server' }) });
    });
  }

  it('explains "already submitted" and the upload limit from X-Error-Code, whatever the message says', async () => {
    const s = await session();
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await rewordErrors(page);
    await page.goto(s.url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByLabel('First name').fill('Ada');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 2 of 2').waitFor();

    // The upload limit (one upload a slot here): the second selfie is refused.
    const file = page.locator('input[type=file]').first();
    await file.setInputFiles({ name: 'one.png', mimeType: 'image/png', buffer: PNG });
    await page.getByText('Uploaded').first().waitFor();
    await file.setInputFiles({ name: 'two.png', mimeType: 'image/png', buffer: PNG });
    await page.getByRole('alert').filter({ hasText: 'too many times' }).waitFor();

    // Submitted meanwhile (another tab): Back to the form, whose save is refused.
    await h.sql("UPDATE enrollments SET status = 'submitted' WHERE id = $1", [s.enrollmentId]);
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByLabel('First name').fill('Grace');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('alert').filter({ hasText: 'This verification was already submitted.' }).waitFor();
    await expect(page.getByText('Reworded by the server').count()).resolves.toBe(0);
    await context.close();
  });
});
