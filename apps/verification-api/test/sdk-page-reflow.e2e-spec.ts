/**
 * The hosted page beyond what sdk-page-a11y checks (decision 0459), in Debian's chromium against the real app:
 *
 * - reflow (WCAG 1.4.10) at 320 CSS px, text at 200 % (1.4.4: browser zoom, and the browser's own text size) and
 *   the text-spacing overrides (1.4.12) on every screen of an individual and a company flow and on the link
 *   screens: the page never scrolls sideways, nothing sticks out of the viewport and no box cuts its content;
 * - what the accessibility tree (Chromium's, through the DevTools protocol) gives a screen reader: errors in
 *   alert regions, the progress bar named, every capture button named after what it captures, a language switch
 *   announced in the new language with `lang` set;
 * - axe-core on the company screens (company data, company documents), which sdk-page-a11y does not walk.
 *
 * Every finding goes to `.tessera/artifacts/sdk-web/reflow.json`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mediaFixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  ARTIFACTS,
  cameraShowing,
  axeViolations,
  everyStepLevel,
  launchChromium,
  linkMaker,
  startPageApp,
  standInPhoto,
} from './browser';
import type { Credential, Harness } from './harness';
import type { MediaHarness } from './media';

const FAILING = new Set(['serious', 'critical']);

jest.setTimeout(240_000);

let h: Harness;
let mh: MediaHarness;
let key: Credential;
let browser: Browser;
let origin: string;
/** What the tests found; `impact` is axe's (its moderate and minor findings are kept, not failed on). */
const findings: { test: string; mode: string; screen: string; problem: string; impact?: string }[] = [];

const QUESTIONNAIRE = {
  id: 'reflow',
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
    { id: 'sources', text: 'Sources of funds', type: 'multiselect', required: false, options: ['salary'] },
  ],
};

beforeAll(async () => {
  let productId: string;
  ({ mh, h, key, productId, origin } = await startPageApp());
  await h.admin('post', `/products/${productId}/questionnaires`, QUESTIONNAIRE);
  await h.admin('post', `/products/${productId}/levels`, everyStepLevel('REFLOW_FULL', 'reflow'));
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'REFLOW_KYB',
    applicantType: 'company',
    steps: [{ kind: 'company_data' }, { kind: 'company_documents' }],
    companyDataFields: ['companyName', 'legalForm', 'incorporatedOn', 'registrationCountry'],
    companyRequiredFields: ['companyName', 'legalForm', 'registrationCountry'],
    companyLegalForms: ['gmbh', 'ag'],
    companyRequiredDocuments: ['certificate_of_incorporation'],
    companyDocumentsMinRequired: 2,
  });
  browser = await launchChromium();
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  writeFileSync(join(ARTIFACTS, 'reflow.json'), `${JSON.stringify(findings, null, 2)}\n`);
  await browser?.close();
  await mh?.close();
});

const newLink = linkMaker('reflow');
const link = (level: string, params?: Record<string, string>, claimed?: Record<string, string>) =>
  newLink({ h, key, origin }, level, params, claimed);

const primary = (page: Page) => page.locator('main button.primary');

/** Called on each screen as it shows. */
type Visit = (page: Page, screen: string) => Promise<void>;

/**
 * Every screen of an individual flow (REFLOW_FULL), `visit`ed as it shows: welcome, personal information empty
 * and refused, the identity document (a two-sided type, a refused file, the missing side named, both sides
 * uploaded), selfie, liveness with the camera and with an uploaded clip, the questionnaire and its error, final.
 */
async function individualFlow(page: Page, visit: Visit) {
  const context = page.context();
  await primary(page).waitFor();
  await visit(page, 'welcome');
  await primary(page).click();
  await page.locator('#field-firstName').waitFor();
  await visit(page, 'personal-info');
  await primary(page).click();
  await page.locator('#field-firstName[aria-invalid=true]').waitFor();
  await visit(page, 'personal-info-error');
  await page.locator('#field-firstName').fill('Ada');
  await page.locator('#field-dateOfBirth').fill('1815-12-10');
  await page.locator('#field-nationality').selectOption('GB');
  await page.locator('#field-email').fill('ada.lovelace@analytical-engine.example');
  await primary(page).click();

  await page.locator('#doc-front-file').waitFor({ state: 'attached' });
  await visit(page, 'identity-doc');
  await page.locator('input[value=residence_permit]').check();
  await page.locator('#doc-back-file').waitFor({ state: 'attached' });
  await page
    .locator('#doc-front-file')
    .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') });
  await page.locator('#doc-front-error:not(:empty)').waitFor();
  await primary(page).click();
  await page.locator('#screen-error:not(:empty)').waitFor();
  await visit(page, 'identity-doc-errors');
  for (const side of ['front', 'back']) {
    await page.locator(`#doc-${side}-file`).setInputFiles({
      name: `${side}.png`,
      mimeType: 'image/png',
      buffer: await standInPhoto(context, side),
    });
    await page.locator(`#doc-${side}-status:not(:empty)`).waitFor();
  }
  await page.locator('img.preview >> nth=1').waitFor();
  await visit(page, 'identity-doc-uploaded');
  await primary(page).click();

  await page.locator('#selfie-file').waitFor({ state: 'attached' });
  await visit(page, 'selfie');
  await page.locator('#selfie-file').setInputFiles({
    name: 'selfie.png',
    mimeType: 'image/png',
    buffer: await standInPhoto(context, 'face'),
  });
  await page.locator('img.preview').waitFor();
  await visit(page, 'selfie-uploaded');
  await primary(page).click();

  await page.locator('.liveness').waitFor();
  await visit(page, 'liveness');
  await page.locator('.liveness button:not(.link)').click();
  await cameraShowing(page);
  await visit(page, 'liveness-camera');
  await page.locator('.liveness button.link').click();
  await page
    .locator('#liveness-file')
    .setInputFiles({ name: 'clip.mp4', mimeType: 'video/mp4', buffer: mediaFixture('tiny.mp4') });
  await page.locator('video.preview').waitFor();
  await visit(page, 'liveness-uploaded');
  await primary(page).click();

  await page.locator('#q-occupation').waitFor();
  await visit(page, 'questionnaire');
  await primary(page).click();
  await page.locator('#q-occupation[aria-invalid=true]').waitFor();
  await visit(page, 'questionnaire-error');
  await page.locator('#q-occupation').selectOption('employed');
  await page.locator('#q-pep').check();
  await primary(page).click();
  await page.locator('main[data-phase=final]').waitFor();
  await visit(page, 'final');
}

/**
 * Every screen of a company flow (REFLOW_KYB): welcome, company data empty and refused, the company documents
 * (a refused file, the missing document named, both uploaded), final.
 */
async function companyFlow(page: Page, visit: Visit) {
  await primary(page).waitFor();
  await visit(page, 'company-welcome');
  await primary(page).click();
  await page.locator('#field-legalForm').waitFor();
  await visit(page, 'company-data');
  await primary(page).click();
  await page.locator('#field-legalForm[aria-invalid=true]').waitFor();
  await visit(page, 'company-data-error');
  await page.locator('#field-legalForm').selectOption('gmbh');
  await page.locator('#field-registrationCountry').selectOption('DE');
  await page.locator('#field-incorporatedOn').fill('2001-02-03');
  await primary(page).click();

  const certificate = page.locator('#company-certificate_of_incorporation-file');
  await certificate.waitFor({ state: 'attached' });
  await visit(page, 'company-documents');
  await certificate.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') });
  await page.locator('#company-certificate_of_incorporation-error:not(:empty)').waitFor();
  await primary(page).click();
  await page.locator('#screen-error:not(:empty)').waitFor();
  await visit(page, 'company-documents-errors');
  for (const slot of ['certificate_of_incorporation', 'other_1']) {
    await page
      .locator(`#company-${slot}-file`)
      .setInputFiles({ name: `${slot}.pdf`, mimeType: 'application/pdf', buffer: mediaFixture('tiny.pdf') });
    await page.locator(`#company-${slot}-status:not(:empty)`).waitFor();
  }
  await page.locator('p.file-name >> nth=1').waitFor();
  await visit(page, 'company-documents-uploaded');
  await primary(page).click();
  await page.locator('main[data-phase=final]').waitFor();
  await visit(page, 'company-final');
}

/** The screens a link can land on instead of the steps: not found, expired, retry, rejected, and the error. */
async function linkScreens(newPage: () => Promise<Page>, params: Record<string, string>, visit: Visit) {
  const show = async (url: string, phase: string, screen: string) => {
    const page = await newPage();
    await page.goto(url);
    await page.locator(`main[data-phase=${phase}]`).waitFor();
    await visit(page, screen);
    await page.close();
  };
  await show(`${origin}/sdk/AAAAAAAAAAAA`, 'notFound', 'not-found');
  const expired = await link('REFLOW_KYB', params, { type: 'company' });
  await h.sql("UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1", [
    expired.enrollmentId,
  ]);
  await show(expired.url, 'expired', 'expired');
  for (const [answer, phase] of [
    ['RETRY', 'retry'],
    ['FINAL', 'rejected'],
  ]) {
    const settled = await link('REFLOW_KYB', params, { type: 'company' });
    await h.sql('UPDATE enrollments SET status = $2 WHERE id = $1', [settled.enrollmentId, 'rejected']);
    await h.sql(
      "UPDATE applicants SET status = 'rejected', review_answer = 'RED', review_reject_type = $2 WHERE external_user_id = $1",
      [settled.externalUserId, answer],
    );
    await show(settled.url, phase, phase);
  }
  const broken = await link('REFLOW_KYB', params, { type: 'company' });
  const page = await newPage();
  await page.route('**/api/v1/sdk/session', (route) =>
    route.fulfill({ status: 500, contentType: 'application/json', body: '{"message":"boom"}' }),
  );
  await page.goto(broken.url);
  await page.locator('main[data-phase=error]').waitFor();
  await visit(page, 'error');
  await page.close();
}

/**
 * How the page is looked at. Zoom in Chromium is CSS px × device pixels: 1280 px at 400 % is a 320-px viewport
 * of 4 device pixels per px; the browser's text size (Settings → Appearance → Font size) is the default font size.
 */
interface Mode {
  name: string;
  viewport: { width: number; height: number };
  deviceScaleFactor: number;
  locale: string;
  lang?: string;
  /** The browser's default font size in px (16 unless set). */
  fontSize?: number;
  /** The WCAG 1.4.12 overrides applied to every element. */
  spacing?: boolean;
}

const MODES: Mode[] = [
  // WCAG 1.4.10: 1280 × 1024 at 400 %; German for its long words.
  {
    name: 'reflow-320-de',
    viewport: { width: 320, height: 256 },
    deviceScaleFactor: 4,
    locale: 'de-DE',
    lang: 'de',
  },
  // WCAG 1.4.4: 1280 × 800 at 200 % zoom.
  { name: 'zoom-200-en', viewport: { width: 640, height: 400 }, deviceScaleFactor: 2, locale: 'en-GB' },
  // WCAG 1.4.4: the browser's text size doubled (32 px), the layout left at 1280 px.
  {
    name: 'text-200-de',
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    locale: 'de-DE',
    lang: 'de',
    fontSize: 32,
  },
  // WCAG 1.4.12 at 320 px: line height 1.5, paragraphs 2 em apart, letters 0.12 em, words 0.16 em.
  {
    name: 'spacing-320-en',
    viewport: { width: 320, height: 256 },
    deviceScaleFactor: 4,
    locale: 'en-GB',
    spacing: true,
  },
];

/** The text-spacing bookmarklet's overrides (WCAG 1.4.12's understanding document). */
const TEXT_SPACING = `* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; }
p { margin-bottom: 2em !important; }`;

/**
 * What a page that reflows must not do, as a list of problems: scroll sideways; put a visible element (or a
 * line of its text) beyond the viewport's left or right edge; cut content (a box narrower than what it holds, or
 * lower where it hides the rest). Fields and video scroll or scale their own content and are left out of the
 * last check; the visually hidden elements (1 px, clipped on purpose) of all.
 */
const REFLOW_CHECK = `(() => {
  const out = [];
  const root = document.documentElement;
  const width = root.clientWidth;
  if (root.scrollWidth > width) out.push('the page scrolls sideways: ' + root.scrollWidth + ' px in a ' + width + '-px viewport');
  const describe = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  const hidden = (e) => !!e.closest('.visually-hidden, .capture-buttons input[type=file], head, script, style, option');
  const fields = 'input, select, textarea, video';
  for (const e of document.body.querySelectorAll('*')) {
    if (hidden(e) || !e.getClientRects().length) continue;
    const s = getComputedStyle(e);
    if (s.visibility === 'hidden') continue;
    const r = e.getBoundingClientRect();
    if (r.width && (r.left < -0.5 || r.right > width + 0.5)) out.push(describe(e) + ' reaches ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px');
    // A box (not a plain inline, which has no box of its own to measure) wider than it is runs over its
    // neighbours or hides the rest; one taller than it is hides the rest where it does not let it overflow.
    if (e.matches(fields) || s.display === 'inline') continue;
    const wide = e.scrollWidth > e.clientWidth + 1;
    const cut = s.overflowY !== 'visible' && e.scrollHeight > e.clientHeight + 1;
    if (wide || cut)
      out.push(describe(e) + ' holds ' + e.scrollWidth + ' x ' + e.scrollHeight + ' in ' + e.clientWidth + ' x ' + e.clientHeight + ' px (overflow ' + s.overflowX + ' ' + s.overflowY + ')');
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim() || hidden(n.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (r.width && (r.left < -0.5 || r.right > width + 0.5)) {
        out.push('text "' + n.textContent.trim().slice(0, 40) + '" in ' + describe(n.parentElement) + ' reaches ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px');
        break;
      }
    }
  }
  return out;
})()`;

/** The browser's text size took: the body text is at the browser's size, the heading above it. */
const TEXT_SIZE_CHECK = (px: number) => `(() => {
  const out = [];
  const size = (e) => parseFloat(getComputedStyle(e).fontSize);
  if (size(document.body) < ${px}) out.push('body text is ' + size(document.body) + ' px, not the browser\\'s ${px} px');
  const h1 = document.querySelector('h1');
  if (h1 && size(h1) <= ${px}) out.push('the heading is ' + size(h1) + ' px, not above the browser\\'s ${px} px');
  return out;
})()`;

async function newModeContext(mode: Mode) {
  return browser.newContext({
    locale: mode.locale,
    viewport: mode.viewport,
    deviceScaleFactor: mode.deviceScaleFactor,
  });
}

/** A page of `mode`: its font size set through the DevTools protocol (the same setting as the browser's). */
async function newModePage(context: BrowserContext, mode: Mode) {
  const page = await context.newPage();
  if (mode.fontSize) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Page.enable');
    await cdp.send('Page.setFontSizes', { fontSizes: { standard: mode.fontSize } });
  }
  return page;
}

/** The checks of `mode` on the page as it is now, recorded under `screen`. */
async function inspect(page: Page, mode: Mode, screen: string) {
  const test = expect.getState().currentTestName ?? '';
  await page.evaluate('document.fonts.ready');
  if (mode.spacing) {
    // A constructed style sheet: CSSOM, which the page's CSP (style-src 'self') does not stop.
    await page.evaluate(`(() => {
      if (document.adoptedStyleSheets.length) return;
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(${JSON.stringify(TEXT_SPACING)});
      document.adoptedStyleSheets = [sheet];
    })()`);
  }
  const problems = await page.evaluate<string[]>(REFLOW_CHECK);
  if (mode.fontSize) problems.push(...(await page.evaluate<string[]>(TEXT_SIZE_CHECK(mode.fontSize))));
  for (const problem of problems) findings.push({ test, mode: mode.name, screen, problem });
}

/** The running test's findings that fail it: every reflow problem, axe's serious and critical ones. */
const failing = () =>
  findings
    .filter((f) => f.test === expect.getState().currentTestName && (!f.impact || FAILING.has(f.impact)))
    .map((f) => `${f.screen}: ${f.problem}`);

describe.each(MODES)('hosted page reflow, zoom and text spacing: $name', (mode) => {
  const params: Record<string, string> = mode.lang ? { lang: mode.lang } : {};

  it('every screen of an individual flow fits the width and cuts nothing', async () => {
    const { url } = await link('REFLOW_FULL', params, { lastName: 'Turing-Lovelace' });
    const context = await newModeContext(mode);
    const page = await newModePage(context, mode);
    await page.goto(url);
    await individualFlow(page, (p, screen) => inspect(p, mode, screen));
    await context.close();
    expect(failing()).toEqual([]);
  });

  it('every screen of a company flow and every link screen fits the width and cuts nothing', async () => {
    const { url } = await link('REFLOW_KYB', params, { type: 'company', companyName: 'Acme Holding GmbH' });
    const context = await newModeContext(mode);
    const page = await newModePage(context, mode);
    await page.goto(url);
    await companyFlow(page, (p, screen) => inspect(p, mode, screen));
    await page.close();
    await linkScreens(
      () => newModePage(context, mode),
      params,
      (p, screen) => inspect(p, mode, screen),
    );
    await context.close();
    expect(failing()).toEqual([]);
  });
});

/** One node of Chromium's accessibility tree: what a screen reader is given. */
interface AxNode {
  id: string;
  /** Not given to a screen reader (a node kept only to link its children to their ancestors). */
  ignored: boolean;
  parentId?: string;
  role: string;
  name: string;
  /** A range's current value (a progress bar's step). */
  value?: unknown;
  props: Record<string, unknown>;
}

/** Chromium's accessibility tree of the page as it is now (DevTools protocol). */
async function axTree(page: Page): Promise<Map<string, AxNode>> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    const tree = new Map<string, AxNode>();
    for (const n of nodes) {
      tree.set(n.nodeId, {
        ignored: n.ignored,
        id: n.nodeId,
        parentId: n.parentId,
        role: String(n.role?.value ?? ''),
        name: String(n.name?.value ?? ''),
        value: n.value?.value,
        props: Object.fromEntries((n.properties ?? []).map((p) => [p.name, p.value.value])),
      });
    }
    return tree;
  } finally {
    await cdp.detach();
  }
}

/**
 * How a screen reader learns of `text` when it appears: the live region around its text node (`alert`,
 * `status`, or an `aria-live` politeness), or `none`; `missing` when the text is not in the tree at all.
 */
async function announcedAs(page: Page, text: string): Promise<string> {
  const tree = await axTree(page);
  const node = [...tree.values()].find((n) => !n.ignored && n.role === 'StaticText' && n.name.includes(text));
  if (!node) return 'missing';
  for (let n: AxNode | undefined = node; n; n = n.parentId ? tree.get(n.parentId) : undefined) {
    if (n.role === 'alert' || n.role === 'status') return n.role;
    if (n.props.live === 'assertive' || n.props.live === 'polite') return `live ${n.props.live}`;
  }
  return 'none';
}

/** The buttons (a capture's file inputs included) inside the screen, by their names in the tree. */
async function buttonNames(page: Page): Promise<string[]> {
  const tree = await axTree(page);
  const main = [...tree.values()].find((n) => n.role === 'main');
  const inMain = (n: AxNode) => {
    for (
      let p = n.parentId ? tree.get(n.parentId) : undefined;
      p;
      p = p.parentId ? tree.get(p.parentId) : undefined
    )
      if (p === main) return true;
    return false;
  };
  return [...tree.values()].filter((n) => !n.ignored && n.role === 'button' && inMain(n)).map((n) => n.name);
}

/** The progress bar as the tree has it: its name and value. */
async function progressOf(page: Page) {
  const tree = await axTree(page);
  const bar = [...tree.values()].find((n) => !n.ignored && n.role === 'progressbar');
  return bar && { name: bar.name, value: bar.value, max: bar.props.valuemax };
}

describe('hosted page in the accessibility tree (what a screen reader is given)', () => {
  const desktop = { locale: 'en-GB', viewport: { width: 1280, height: 800 } };

  it('errors are in alert regions, upload progress in status regions, each step names its progress, every capture button is named apart', async () => {
    const { url } = await link('REFLOW_FULL', {}, { lastName: 'Turing' });
    const context = await browser.newContext(desktop);
    const page = await context.newPage();
    await page.goto(url);
    const progress: Record<string, string> = {};
    const buttons: Record<string, string[]> = {};
    const announced: Record<string, string> = {};
    const CAPTURE_SCREENS = [
      'identity-doc',
      'identity-doc-errors',
      'identity-doc-uploaded',
      'selfie',
      'liveness',
    ];
    const MESSAGES: Record<string, Record<string, string>> = {
      'personal-info-error': { 'a required field left empty': 'First name is required.' },
      'identity-doc-errors': {
        'a refused file': 'This file type is not accepted',
        'a missing side': 'Please add: Front side.',
      },
      'identity-doc-uploaded': { 'an upload stored': 'Uploaded' },
      'questionnaire-error': { 'a required question left empty': 'Occupation is required.' },
      final: { 'the final message': 'Your information was submitted.' },
    };
    await individualFlow(page, async (p, screen) => {
      const bar = await progressOf(p);
      progress[screen] = bar ? `${bar.name} (${String(bar.value)}/${String(bar.max)})` : 'none';
      if (CAPTURE_SCREENS.includes(screen)) buttons[screen] = await buttonNames(p);
      for (const [what, text] of Object.entries(MESSAGES[screen] ?? {}))
        announced[what] = await announcedAs(p, text);
    });
    await context.close();

    const step = (n: number) => `Step ${n} of 5 (${n}/5)`;
    expect(progress).toEqual({
      welcome: 'none',
      'personal-info': step(1),
      'personal-info-error': step(1),
      'identity-doc': step(2),
      'identity-doc-errors': step(2),
      'identity-doc-uploaded': step(2),
      selfie: step(3),
      'selfie-uploaded': step(3),
      liveness: step(4),
      'liveness-camera': step(4),
      'liveness-uploaded': step(4),
      questionnaire: step(5),
      'questionnaire-error': step(5),
      final: 'none',
    });
    // One slot on the screen: the action is the name. Two: each name says which side it captures.
    expect(buttons).toEqual({
      'identity-doc': ['Back', 'Take a photo', 'Choose a file', 'Continue'],
      'identity-doc-errors': [
        'Back',
        'Take a photo (Front side)',
        'Choose a file (Front side)',
        'Take a photo (Back side)',
        'Choose a file (Back side)',
        'Continue',
      ],
      'identity-doc-uploaded': [
        'Back',
        'Take a new photo (Front side)',
        'Replace (Front side)',
        'Take a new photo (Back side)',
        'Replace (Back side)',
        'Continue',
      ],
      selfie: ['Back', 'Take a photo', 'Choose a file', 'Continue'],
      liveness: ['Back', 'Start the camera', 'Upload a video', 'Continue'],
    });
    expect(announced).toEqual({
      'a required field left empty': 'alert',
      'a refused file': 'alert',
      'a missing side': 'alert',
      'an upload stored': 'status',
      'a required question left empty': 'alert',
      'the final message': 'status',
    });
  });

  it('a language switch is announced in the new language, and lang follows it', async () => {
    const { url } = await link('REFLOW_FULL');
    const context = await browser.newContext(desktop);
    const page = await context.newPage();
    await page.goto(url);
    await primary(page).waitFor();
    const lang = () => page.evaluate<string>('document.documentElement.lang');
    await expect(lang()).resolves.toBe('en');
    // Each language is named in itself, and marked so: a screen reader reads "Deutsch" with German speech.
    await expect(
      page
        .locator('#pref-lang option')
        .evaluateAll((options) => options.map((o) => `${o.getAttribute('lang')}:${o.textContent}`)),
    ).resolves.toEqual(['en:English', 'de:Deutsch', 'fr:Français', 'es:Español', 'ru:Русский']);

    for (const [code, said] of [
      ['de', 'Die Seite ist jetzt auf Deutsch.'],
      ['fr', 'La page est maintenant en français.'],
    ]) {
      await page.locator('#pref-lang').focus();
      await page.locator('#pref-lang').selectOption(code);
      await page.locator('#lang-status', { hasText: said }).waitFor();
      await expect(lang()).resolves.toBe(code);
      await expect(announcedAs(page, said)).resolves.toBe('status');
      await expect(page.locator('#lang-status').getAttribute('lang')).resolves.toBe(code);
      // The switch keeps the focus (the heading does not take it, decision 0450): the user can switch again.
      await expect(page.evaluate('document.activeElement.id')).resolves.toBe('pref-lang');
    }
    await context.close();
  });
});

/** The company screens (sdk-page-a11y walks the individual ones): a desktop and a phone, both themes. */
const AXE_CONFIGS = [
  {
    name: 'desktop-en-light',
    viewport: { width: 1280, height: 800 },
    mobile: false,
    locale: 'en-GB',
    theme: 'light',
  },
  {
    name: 'phone-de-dark',
    viewport: { width: 375, height: 812 },
    mobile: true,
    locale: 'en-US',
    lang: 'de',
    theme: 'dark',
  },
] as const;

describe.each(AXE_CONFIGS)('company screens with axe-core: $name', (c) => {
  it('no company screen has a serious or critical axe violation', async () => {
    const params: Record<string, string> = { theme: c.theme, ...('lang' in c ? { lang: c.lang } : {}) };
    const { url } = await link('REFLOW_KYB', params, { type: 'company', companyName: 'Acme Holding GmbH' });
    const context = await browser.newContext({
      locale: c.locale,
      viewport: c.viewport,
      isMobile: c.mobile,
      hasTouch: c.mobile,
      colorScheme: c.theme,
    });
    const page = await context.newPage();
    await page.goto(url);
    const test = expect.getState().currentTestName ?? '';
    await companyFlow(page, async (p, screen) => {
      for (const v of await axeViolations(p)) {
        const problem = `${v.id} (${v.impact}) ${v.help}\n    ${v.nodes.join('\n    ')}`;
        findings.push({ test, mode: c.name, screen, problem, impact: v.impact });
      }
    });
    await context.close();
    expect(failing()).toEqual([]);
  });
});
