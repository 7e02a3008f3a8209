/**
 * The hosted page's accessibility (WCAG 2.1 AA, decision 0450): axe-core run in Debian's chromium on every screen
 * of the page (welcome, personal information with its errors, document capture, selfie, liveness, questionnaire,
 * the final, retry, rejected, expired, replaced, closed, not-found, loading and error screens, the translated
 * errors), at a desktop and a 375-px phone viewport, in English and German, light and dark. Any violation of
 * impact serious or critical fails; every finding, moderate and minor included, goes to
 * `.tessera/artifacts/sdk-web/a11y.json`. Beside axe: input edges 3:1 (WCAG 1.4.11), 44-px controls on a phone,
 * and keyboard-only passes (focus ring visible at 3:1 at every stop, focus on the heading or the field in error).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mediaFixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  ARTIFACTS,
  axeViolations,
  cameraShowing,
  everyStepLevel,
  launchChromium,
  linkMaker,
  PERSONAL_INFO,
  startPageApp,
  typeAsPerson,
  standInPhoto,
} from './browser';
import type { Credential, Harness } from './harness';
import type { MediaHarness } from './media';

const FAILING = new Set(['serious', 'critical']);

jest.setTimeout(180_000);

interface Config {
  name: string;
  viewport: { width: number; height: number };
  mobile: boolean;
  locale: string;
  /** The link's `lang` (none: the browser's language). */
  lang?: string;
  theme: 'light' | 'dark';
}

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 812 };
const CONFIGS: Config[] = [
  { name: 'desktop-en-light', viewport: DESKTOP, mobile: false, locale: 'en-GB', theme: 'light' },
  { name: 'phone-de-dark', viewport: PHONE, mobile: true, locale: 'en-US', lang: 'de', theme: 'dark' },
  { name: 'phone-en-light', viewport: PHONE, mobile: true, locale: 'en-US', theme: 'light' },
  { name: 'desktop-de-dark', viewport: DESKTOP, mobile: false, locale: 'de-DE', lang: 'de', theme: 'dark' },
];

interface Finding {
  config: string;
  /** The test that found it: each fails on its own findings. */
  test: string;
  screen: string;
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

let h: Harness;
let mh: MediaHarness;
let key: Credential;
let browser: Browser;
let origin: string;
const findings: Finding[] = [];

const QUESTIONNAIRE = {
  id: 'a11y',
  title: 'Your profile',
  questions: [
    {
      id: 'occupation',
      text: 'Occupation',
      type: 'select',
      required: true,
      options: ['employed', 'retired'],
    },
    { id: 'pep', text: 'Politically exposed person?', type: 'boolean', required: true },
    {
      id: 'sources',
      text: 'Sources of funds',
      type: 'multiselect',
      required: false,
      options: ['salary', 'savings'],
    },
  ],
};

beforeAll(async () => {
  let productId: string;
  ({ mh, h, key, productId, origin } = await startPageApp());
  await h.admin('post', `/products/${productId}/questionnaires`, QUESTIONNAIRE);
  await h.admin('post', `/products/${productId}/levels`, everyStepLevel('A11Y_FULL', 'a11y'));
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'A11Y_FORMS',
    applicantType: 'individual',
    steps: [{ kind: 'personal_information' }, { kind: 'questionnaire' }],
    attachedQuestionnaireId: 'a11y',
    ...PERSONAL_INFO,
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'A11Y_DOCS',
    applicantType: 'individual',
    steps: [{ kind: 'identity_doc' }, { kind: 'selfie' }],
  });
  browser = await launchChromium();
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  writeFileSync(join(ARTIFACTS, 'a11y.json'), `${JSON.stringify(findings, null, 2)}\n`);
  await browser?.close();
  await mh?.close();
});

const newLink = linkMaker('a11y');
const link = (level: string, params?: Record<string, string>, claimed?: Record<string, string>) =>
  newLink({ h, key, origin }, level, params, claimed);

const linkParams = (c: Config): Record<string, string> => ({
  theme: c.theme,
  ...(c.lang ? { lang: c.lang } : {}),
});

const newContext = (c: Config) =>
  browser.newContext({
    locale: c.locale,
    viewport: c.viewport,
    isMobile: c.mobile,
    hasTouch: c.mobile,
    colorScheme: c.theme,
  });

/** Contrast of two CSS colours (WCAG relative luminance), and the opaque background behind an element. */
const COLOUR = `
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const contrast = (x, y) => {
    const [a, b] = [lum(rgb(x)), lum(rgb(y))].sort((m, n) => n - m);
    return Math.round(((a + 0.05) / (b + 0.05)) * 100) / 100;
  };
  const backgroundOf = (e) => {
    for (let p = e; p; p = p.parentElement) {
      const c = getComputedStyle(p).backgroundColor;
      const v = rgb(c);
      if (v.length < 4 || v[3] > 0) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const describe = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + String(e.className).split(' ').join('.') : '');
`;

/**
 * What axe does not check: the edge of every enabled input and select against the background behind it (3:1,
 * WCAG 1.4.11), and on a phone every control at least 44 × 44 px (the page's own bar; WCAG 2.5.8 asks 24).
 */
const OWN_CHECKS = (phone: boolean) => `(() => {
  ${COLOUR}
  const out = [];
  const fields = 'input:not([type=radio]):not([type=checkbox]):not([type=file]):not(:disabled), select:not(:disabled)';
  for (const e of document.querySelectorAll(fields)) {
    if (!e.getClientRects().length) continue;
    const c = contrast(getComputedStyle(e).borderTopColor, backgroundOf(e.parentElement));
    if (c < 3) out.push({ id: 'tessera-control-border', help: 'An input edge needs 3:1 against its background', node: describe(e) + ' ' + c + ':1' });
  }
  if (${phone}) {
    for (const e of document.querySelectorAll('button, select, ' + fields.split(',')[0] + ', label.button, label.choice')) {
      const r = e.getBoundingClientRect();
      if (!r.width) continue;
      if (r.width < 44 || r.height < 44) out.push({ id: 'tessera-target-size', help: 'A control on a phone needs 44 x 44 px', node: describe(e) + ' ' + Math.round(r.width) + 'x' + Math.round(r.height) });
    }
  }
  return out;
})()`;

/** Runs axe (axeViolations) and the page's own checks on the page as it is now and records what they find. */
async function audit(page: Page, c: Config, screen: string) {
  const test = expect.getState().currentTestName ?? '';
  for (const v of await axeViolations(page)) findings.push({ config: c.name, test, screen, ...v });
  const own = await page.evaluate<{ id: string; help: string; node: string }[]>(OWN_CHECKS(c.mobile));
  for (const o of own) {
    findings.push({
      config: c.name,
      test,
      screen,
      id: o.id,
      impact: 'serious',
      help: o.help,
      nodes: [o.node],
    });
  }
}

/** The serious and critical findings of the running test: it fails on any. */
const failing = () =>
  findings
    .filter((f) => f.test === expect.getState().currentTestName && FAILING.has(f.impact))
    .map((f) => `${f.screen}: ${f.id} (${f.impact}) ${f.help}\n    ${f.nodes.join('\n    ')}`);

const heading = (page: Page) => page.locator('h1#screen-title');
const primary = (page: Page) => page.locator('main button.primary');
/**
 * Waits (a frame or two: the page moves the focus in an effect, after the render) until `id` has the focus.
 * The predicate is a function, not a string: Playwright evaluates a string again at every poll with eval, which
 * the page's CSP (script-src 'self') refuses, so a focus not there at the first look failed at once with an
 * EvalError instead of being waited for (on a loaded machine the effect often comes a frame later).
 */
async function focused(page: Page, id: string) {
  try {
    await page.waitForFunction(
      (wanted) =>
        (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document
          .activeElement?.id === wanted,
      id,
      { timeout: 5_000 },
    );
  } catch (err) {
    const at = await page
      .evaluate<string>(`(() => { ${COLOUR} return describe(document.activeElement); })()`)
      .catch(() => 'unknown (the page did not answer)');
    const why = String((err as Error).message).split('\n')[0];
    throw new Error(`The focus did not come to #${id} (${why}); it is on ${at}`, { cause: err });
  }
}

async function open(context: BrowserContext, url: string) {
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

describe.each(CONFIGS)('hosted page accessibility: $name', (c) => {
  it('every step of an individual flow, with its errors, has no serious or critical axe violation', async () => {
    const { url } = await link('A11Y_FULL', linkParams(c), { lastName: 'Turing' });
    const context = await newContext(c);
    const page = await open(context, url);
    await primary(page).waitFor();
    await audit(page, c, 'welcome');
    await primary(page).click();

    await page.locator('#field-firstName').waitFor();
    await audit(page, c, 'personal-info');
    await primary(page).click();
    await page.locator('#field-firstName[aria-invalid=true]').waitFor();
    await audit(page, c, 'personal-info-required-error');
    await page.locator('#field-firstName').fill('Alan');
    await page.locator('#field-nationality').selectOption('GB');
    await page.locator('#field-dateOfBirth').fill('2999-01-01');
    await primary(page).click();
    await page.locator('#field-dateOfBirth[aria-invalid=true]').waitFor();
    await audit(page, c, 'personal-info-server-error');
    await page.locator('#field-dateOfBirth').fill('1912-06-23');
    await primary(page).click();

    await page.locator('#doc-front-file').waitFor({ state: 'attached' });
    await audit(page, c, 'identity-doc');
    await page.locator('input[name=documentType][value=id_card]').check();
    await page.locator('#doc-back-file').waitFor({ state: 'attached' });
    await page
      .locator('#doc-front-file')
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') });
    await page.locator('#doc-front-error:not(:empty)').waitFor();
    await primary(page).click();
    await page.locator('#screen-error:not(:empty)').waitFor();
    await audit(page, c, 'identity-doc-errors');
    await page.locator('#doc-front-file').setInputFiles({
      name: 'front.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'ID · front'),
    });
    await page.locator('#doc-front-status:not(:empty)').waitFor();
    await page.locator('#doc-back-file').setInputFiles({
      name: 'back.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'ID · back'),
    });
    await page.locator('img.preview >> nth=1').waitFor();
    await audit(page, c, 'identity-doc-uploaded');
    await primary(page).click();

    await page.locator('#selfie-file').waitFor({ state: 'attached' });
    await audit(page, c, 'selfie');
    await page.locator('#selfie-file').setInputFiles({
      name: 'selfie.png',
      mimeType: 'image/png',
      buffer: await standInPhoto(context, 'selfie'),
    });
    await page.locator('img.preview').waitFor();
    await audit(page, c, 'selfie-uploaded');
    await primary(page).click();

    await page.locator('.liveness').waitFor();
    await audit(page, c, 'liveness');
    await page.locator('.liveness button:not(.link)').click();
    await cameraShowing(page);
    await audit(page, c, 'liveness-camera');
    await page.locator('.liveness button.link').click();
    await page
      .locator('#liveness-file')
      .setInputFiles({ name: 'clip.mp4', mimeType: 'video/mp4', buffer: mediaFixture('tiny.mp4') });
    await page.locator('video.preview').waitFor();
    await audit(page, c, 'liveness-uploaded');
    await primary(page).click();

    await page.locator('#q-occupation').waitFor();
    await audit(page, c, 'questionnaire');
    await primary(page).click();
    await page.locator('#q-occupation[aria-invalid=true]').waitFor();
    await audit(page, c, 'questionnaire-error');
    await page.locator('#q-occupation').selectOption('employed');
    await page.locator('#q-pep').check();
    await primary(page).click();

    await page.locator('main[data-phase=final]').waitFor();
    await audit(page, c, 'final');
    await context.close();
    expect(failing()).toEqual([]);
  });

  it('the link and error screens have no serious or critical axe violation', async () => {
    const context = await newContext(c);
    const params = linkParams(c);
    const settle = (externalUserId: string, enrollmentId: string, enrollment: string, review?: string[]) =>
      Promise.all([
        h.sql('UPDATE enrollments SET status = $2 WHERE id = $1', [enrollmentId, enrollment]),
        review
          ? h.sql(
              'UPDATE applicants SET status = $2, review_answer = $3, review_reject_type = $4 WHERE external_user_id = $1',
              [externalUserId, ...review],
            )
          : undefined,
      ]);
    const screen = async (url: string, phase: string, name: string) => {
      const page = await open(context, url);
      await page.locator(`main[data-phase=${phase}]`).waitFor();
      await audit(page, c, name);
      await page.close();
    };

    // Loading: the link's answer held back until axe has run.
    const loading = await link('A11Y_FORMS', params);
    const page = await context.newPage();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/sdk/links/**', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(loading.url);
    await page.locator('main[data-phase=loading]').waitFor();
    await audit(page, c, 'loading');
    release();
    await page.locator('main[data-phase=welcome]').waitFor();
    // A save that never reaches the server: the network error, in the page's language.
    await primary(page).click();
    await page.locator('#field-firstName').fill('Ada');
    await page.locator('#field-lastName').fill('Lovelace');
    await page.locator('#field-dateOfBirth').fill('1815-12-10');
    await page.locator('#field-nationality').selectOption('GB');
    await page.route('**/api/v1/sdk/personal-info', (route) => route.abort());
    await primary(page).click();
    await page.locator('#screen-error:not(:empty)').waitFor();
    await audit(page, c, 'network-error');
    // The session cannot be read: the error screen with its retry button.
    await page.route('**/api/v1/sdk/session', (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: '{"message":"boom"}' }),
    );
    await page.reload();
    await page.locator('main[data-phase=error]').waitFor();
    await audit(page, c, 'error');
    await page.close();

    await screen(`${origin}/sdk/AAAAAAAAAAAA`, 'notFound', 'not-found');
    const expired = await link('A11Y_FORMS', params);
    await h.sql("UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1", [
      expired.enrollmentId,
    ]);
    await screen(expired.url, 'expired', 'expired');
    const replaced = await link('A11Y_FORMS', params);
    await h
      .http()
      .post(`/v1/applicants/${replaced.externalUserId}/verification-sessions?verificationLevelName=A11Y_FULL`)
      .set(h.auth(key))
      .expect(202);
    await screen(replaced.url, 'expired', 'replaced');
    const closed = await link('A11Y_FORMS', params);
    await settle(closed.externalUserId, closed.enrollmentId, 'failed');
    await screen(closed.url, 'expired', 'closed');
    const retry = await link('A11Y_FORMS', params);
    await settle(retry.externalUserId, retry.enrollmentId, 'rejected', ['rejected', 'RED', 'RETRY']);
    await screen(retry.url, 'retry', 'retry');
    const rejected = await link('A11Y_FORMS', params);
    await settle(rejected.externalUserId, rejected.enrollmentId, 'rejected', ['rejected', 'RED', 'FINAL']);
    await screen(rejected.url, 'rejected', 'rejected');
    await context.close();
    expect(failing()).toEqual([]);
  });
});

/**
 * The focused element and its focus indicator: the outline of the element, or for a capture's hidden file input
 * the outline of its label (drawn as the button); the outline's contrast against the background behind it.
 */
interface Focus {
  /** What the Tab was on its way to. */
  to: string;
  id: string;
  tag: string;
  outline: string;
  /** WCAG 1.4.11 / 2.4.7: a visible ring of 3:1 against what surrounds it. */
  contrast: number;
}
const FOCUS = `(() => {
  ${COLOUR}
  const focused = document.activeElement;
  const e = focused.matches('.capture-buttons input[type=file]') ? focused.previousElementSibling : focused;
  const s = getComputedStyle(e);
  return {
    id: focused.id, tag: focused.tagName.toLowerCase(),
    outline: s.outlineStyle + ' ' + s.outlineWidth,
    contrast: contrast(s.outlineColor, backgroundOf(e.parentElement)),
  };
})()`;
const unseen = (f: Focus) =>
  f.outline.startsWith('none') || parseFloat(f.outline.split(' ')[1]) < 2 || f.contrast < 3;

/** Tab until the element matching `selector` has the focus, keeping every stop on the way (`stops`). */
function keyboard(page: Page) {
  const stops: Focus[] = [];
  const tabTo = async (selector: string) => {
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      stops.push({ to: selector, ...(await page.evaluate<Omit<Focus, 'to'>>(FOCUS)) });
      if (await page.evaluate<boolean>(`document.activeElement.matches(${JSON.stringify(selector)})`)) return;
    }
    throw new Error(`Tab never reached ${selector}: ${JSON.stringify(stops.slice(-12))}`);
  };
  return { stops, tabTo };
}

describe.each([CONFIGS[0], CONFIGS[1]])('hosted page with the keyboard only: $name', (c) => {
  it('personal information with Tab, Space and Enter: focus visible at each stop, moved to the heading or the error', async () => {
    const { url } = await link('A11Y_FORMS', linkParams(c));
    const context = await newContext(c);
    const page = await open(context, url);
    const { stops, tabTo } = keyboard(page);

    await primary(page).waitFor();
    await focused(page, 'screen-title');
    await tabTo('main button.primary');
    await page.keyboard.press('Enter');
    await page.locator('#field-firstName').waitFor();
    await focused(page, 'screen-title');
    await expect(heading(page).textContent()).resolves.toBe(
      c.lang === 'de' ? 'Persönliche Angaben' : 'Personal information',
    );

    await tabTo('#field-firstName');
    await page.keyboard.type('Ada');
    // The last name left empty: the form is sent with Space on its button, the error names the field, and the
    // focus goes to that field.
    await tabTo('main button.primary');
    await page.keyboard.press('Space');
    await page.locator('#screen-error:not(:empty)').waitFor();
    await focused(page, 'field-lastName');
    await expect(page.locator('#field-lastName').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator('#field-lastName').getAttribute('aria-describedby')).resolves.toBe(
      'screen-error',
    );
    await page.keyboard.type('Lovelace');
    await tabTo('#field-dateOfBirth');
    // The date's parts, typed: day and month alike, whatever order the browser shows them in.
    await page.keyboard.type('10101815');
    await expect(page.locator('#field-dateOfBirth').inputValue()).resolves.toBe('1815-10-10');
    await tabTo('#field-nationality');
    // A closed select picks an option by typing its first letters (as a person types: see typeAsPerson).
    await typeAsPerson(page, c.lang === 'de' ? 'Vereinigtes K' : 'United K');
    await expect(page.locator('#field-nationality').inputValue()).resolves.toBe('GB');
    await tabTo('main button.primary');
    await page.keyboard.press('Enter');
    await page.locator('#q-occupation').waitFor();
    await focused(page, 'screen-title');
    await expect(heading(page).textContent()).resolves.toBe(c.lang === 'de' ? 'Fragebogen' : 'Questionnaire');

    // The questionnaire too: a select by typing, a radio with Space, Enter on the button.
    await tabTo('#q-occupation');
    await typeAsPerson(page, 'ret');
    await expect(page.locator('#q-occupation').inputValue()).resolves.toBe('retired');
    await tabTo('#q-pep');
    await page.keyboard.press('Space');
    await expect(page.locator('#q-pep').isChecked()).resolves.toBe(true);
    await tabTo('main button.primary');
    await page.keyboard.press('Enter');
    await page.locator('main[data-phase=final]').waitFor();
    await focused(page, 'screen-title');

    const hidden = stops.filter(unseen);
    expect(hidden).toEqual([]);
    await context.close();
  });
  it('document capture with the keyboard: the type by arrow keys, each capture button shows the focus, Enter names what is missing', async () => {
    const { url } = await link('A11Y_DOCS', linkParams(c));
    const context = await newContext(c);
    const page = await open(context, url);
    const { stops, tabTo } = keyboard(page);
    await primary(page).waitFor();
    await tabTo('main button.primary');
    await page.keyboard.press('Enter');
    await page.locator('#doc-front-file').waitFor({ state: 'attached' });
    await focused(page, 'screen-title');
    await tabTo('input[name=documentType]:checked');
    await page.keyboard.press('ArrowDown');
    await expect(page.locator('input[value=id_card]').isChecked()).resolves.toBe(true);
    await page.locator('#doc-back-file').waitFor({ state: 'attached' });
    for (const id of ['doc-front-camera', 'doc-front-file', 'doc-back-camera', 'doc-back-file'])
      await tabTo(`#${id}`);
    await tabTo('main button.primary');
    await page.keyboard.press('Enter');
    await page.locator('#screen-error:not(:empty)').waitFor();
    expect(stops.filter(unseen)).toEqual([]);
    await context.close();
  });
});
