/**
 * The hosted page across reloads (decision 0447), in a real browser (Debian's chromium through playwright-core)
 * against the real app and the real media-store: the uploads of a step not yet submitted stay done after a
 * reload, and the per-slot upload quota (decision 0446) is explained on the page. Each slot takes
 * MEDIA_MAX_UPLOADS_PER_SLOT = 2 uploads here.
 */
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ARTIFACTS as SHOTS, launchChromium, linkMaker, standInPhoto, startPageApp } from './browser';
import type { Credential, Harness } from './harness';
import type { MediaHarness } from './media';
import { SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';

const QUOTA = 2;

// A real browser on a shared 2-core machine: allow a screen flow more than the default 30 s.
jest.setTimeout(120_000);

let mh: MediaHarness;
let h: Harness;
let key: Credential;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  let productId: string;
  ({ mh, h, key, productId, origin } = await startPageApp({ MEDIA_MAX_UPLOADS_PER_SLOT: String(QUOTA) }));
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'RELOAD_DOCS',
    applicantType: 'individual',
    steps: [{ kind: 'identity_doc' }, { kind: 'selfie' }],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'RELOAD_SELFIE',
    applicantType: 'individual',
    steps: [{ kind: 'selfie' }],
  });
  browser = await launchChromium();
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await mh?.close();
});

const newLink = linkMaker('reload');
const link = (level: string) => newLink({ h, key, origin }, level);

/** The page, with the uploads it sends counted (a reload must not make the user send a file again). */
async function open(context: BrowserContext, url: string) {
  const page = await context.newPage();
  const uploads: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().includes('/api/v1/sdk/uploads/')) uploads.push(r.url());
  });
  await page.goto(url);
  return { page, uploads };
}

/** A generated document or face: an HTML card rendered and photographed by the browser itself (PNG). */
async function photo(context: BrowserContext, text: string) {
  return {
    name: `${text.replace(/\W+/g, '-')}.png`,
    mimeType: 'image/png',
    buffer: await standInPhoto(context, text),
  };
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const text = (page: Page, selector: string) => page.locator(selector).textContent();

/** Reloads the page and starts again from the welcome screen. */
async function reloadAndStart(page: Page) {
  await page.reload();
  await page.getByRole('button', { name: 'Start' }).click();
}

async function partnerView(externalUserId: string) {
  const get = async (path: string) =>
    (await h.http().get(`/v1/applicants/${externalUserId}/${path}`).set(h.auth(key)).expect(200)).body;
  const slots = (items: { slot: string }[]) => items.map((r) => r.slot).sort();
  return {
    active: slots((await get('resources')).items),
    superseded: slots((await get('uploads/history')).items),
    statuses: (await get('steps')).steps.map((s: { reviewStatus: string }) => s.reviewStatus),
  };
}

describe('hosted page: a reload keeps the uploads of the step in progress', () => {
  it('uploaded sides stay done after a reload (document type too); Continue without sending them again; Replace still works; Submit', async () => {
    const { url, externalUserId } = await link('RELOAD_DOCS');
    const context = await browser.newContext({ locale: 'en-GB' });
    const { page, uploads } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 2').waitFor();
    await page.getByLabel('ID card').check();
    await page.locator('#doc-front-file').setInputFiles(await photo(context, 'ID CARD front'));
    await page.locator('#doc-front-status', { hasText: 'Uploaded' }).waitFor();
    await page.locator('#doc-back-file').setInputFiles(await photo(context, 'ID CARD back'));
    await page.locator('#doc-back-status', { hasText: 'Uploaded' }).waitFor();

    await reloadAndStart(page);
    await page.getByText('Step 1 of 2').waitFor();
    await expect(page.getByLabel('ID card').isChecked()).resolves.toBe(true);
    await expect(text(page, '#doc-front-status')).resolves.toBe('✓ Uploaded');
    await expect(text(page, '#doc-back-status')).resolves.toBe('✓ Uploaded');
    // "Replace", and for screen readers which side (two capture slots on the screen, decision 0459).
    await expect(text(page, 'label[for=doc-front-file]')).resolves.toBe('Replace (Front side)');
    await expect(page.getByText('You uploaded this earlier. Continue, or replace it.').count()).resolves.toBe(
      2,
    );
    // Another document type does not count the card's sides; back on the card they are there again.
    await page.getByLabel('Passport').check();
    await expect(text(page, '#doc-front-status')).resolves.toBe('');
    await page.getByLabel('ID card').check();
    await expect(text(page, '#doc-front-status')).resolves.toBe('✓ Uploaded');
    await shot(page, 'reload-01-uploads-kept');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Step 2 of 2').waitFor();
    expect(uploads).toHaveLength(2);

    await page.locator('#selfie-file').setInputFiles(await photo(context, 'selfie one'));
    await page.locator('#selfie-status', { hasText: 'Uploaded' }).waitFor();
    await reloadAndStart(page);
    // The document step was submitted: the page goes straight on to the selfie, which it still holds.
    await page.getByText('Step 2 of 2').waitFor();
    await expect(text(page, '#selfie-status')).resolves.toBe('✓ Uploaded');
    await expect(page.locator('img.preview').count()).resolves.toBe(0);
    // Replace: a new selfie is sent, and shown.
    await page.locator('#selfie-file').setInputFiles(await photo(context, 'selfie two'));
    await page.locator('img.preview').waitFor();
    await expect(text(page, '#selfie-status')).resolves.toBe('✓ Uploaded');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor();

    expect(uploads).toHaveLength(4);
    expect(await partnerView(externalUserId)).toEqual({
      active: ['document_back', 'document_front', 'selfie'],
      superseded: ['selfie'],
      statuses: expect.not.arrayContaining(['pending']),
    });
    await context.close();
  });
});

describe('hosted page: the upload quota of a slot (decision 0446)', () => {
  it("past the quota the page shows the 'uploadLimit' message, keeps the stored upload, and the step still submits, after a reload too", async () => {
    const { url, externalUserId } = await link('RELOAD_SELFIE');
    const context = await browser.newContext({ locale: 'en-GB' });
    const { page, uploads } = await open(context, url);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('Step 1 of 1').waitFor();
    for (let i = 1; i <= QUOTA; i++) {
      await page.locator('#selfie-file').setInputFiles(await photo(context, `selfie ${i}`));
      await page.locator('#selfie-status', { hasText: 'Uploaded' }).waitFor();
    }
    const stored = await page.locator('img.preview').getAttribute('src');
    await page.locator('#selfie-file').setInputFiles(await photo(context, 'one too many'));
    await page
      .locator('#selfie-error', {
        hasText: 'You have uploaded this file too many times. Ask for a new link to try again.',
      })
      .waitFor();
    await expect(text(page, '#selfie-status')).resolves.toBe('✓ Uploaded');
    await expect(page.locator('img.preview').getAttribute('src')).resolves.toBe(stored);
    await shot(page, 'reload-02-upload-limit');
    expect(uploads).toHaveLength(QUOTA + 1);

    // A reload does not make the user upload again (the slot is full): the stored selfie counts.
    await reloadAndStart(page);
    await page.getByText('Step 1 of 1').waitFor();
    await expect(text(page, '#selfie-status')).resolves.toBe('✓ Uploaded');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor();
    expect(uploads).toHaveLength(QUOTA + 1);
    expect(await partnerView(externalUserId)).toMatchObject({ active: ['selfie'], superseded: ['selfie'] });
    await context.close();
  });
});
