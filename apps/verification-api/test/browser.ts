import { mkdirSync, readFileSync } from 'node:fs';
import { untilTrue } from '@tessera/testing';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Credential, Harness } from './harness';
import { type MediaHarness, startMediaHarness } from './media';

/**
 * What the hosted page's browser suites share (sdk-page, sdk-page-a11y, sdk-page-reflow, sdk-page-reload): Debian's chromium
 * through playwright-core, the real app and media-store listening on loopback, and verification links.
 */

/** Screenshots and reports, at the repository root (git-ignored; CI keeps it). */
export const ARTIFACTS = join(__dirname, '../../../.tessera/artifacts/sdk-web');

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
];

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });

export interface PageApp {
  mh: MediaHarness;
  h: Harness;
  key: Credential;
  productId: string;
  /** Where the browser reaches the app: `http://127.0.0.1:<port>`. */
  origin: string;
}

/** The app (with a real media-store, `mediaEnv` its settings) listening for a browser, and one tenant. */
export async function startPageApp(mediaEnv: Record<string, string> = {}): Promise<PageApp> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const mh = await startMediaHarness(mediaEnv);
  const h = mh.h;
  await h.app.listen(0, '127.0.0.1');
  const origin = `http://127.0.0.1:${(h.app.getHttpServer().address() as AddressInfo).port}`;
  const { productId, key } = await h.tenant();
  return { mh, h, key, productId, origin };
}

/**
 * A function that creates an applicant of a level (`claimed`: fields the partner sends on create) and opens its
 * verification link (`params`: the link's query, e.g. theme or lang); external user ids are `{prefix}-{n}`.
 */
export function linkMaker(prefix: string) {
  let n = 0;
  return async (
    app: Pick<PageApp, 'h' | 'key' | 'origin'>,
    level: string,
    params: Record<string, string> = {},
    claimed: Record<string, string> = {},
  ) => {
    const { h, key, origin } = app;
    const externalUserId = `${prefix}-${++n}`;
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId, verificationLevelName: level, ...claimed })
      .expect(201);
    const query = new URLSearchParams({ verificationLevelName: level, ...params });
    const res = await h
      .http()
      .post(`/v1/applicants/${externalUserId}/verification-sessions?${query}`)
      .set(h.auth(key))
      .expect(202);
    return {
      externalUserId,
      url: `${origin}/sdk/${res.body.shortCode}`,
      enrollmentId: res.body.enrollmentId as string,
    };
  };
}

/** WCAG 2.0/2.1 A and AA, 2.2's AA (target size) and axe's best practices: the tags of decision 0450. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  /** Each element found: its selector and axe's failure summary. */
  nodes: string[];
}

/**
 * axe-core's violations of `AXE_TAGS` on the page as it is now. axe goes in through the DevTools protocol
 * (page.evaluate), so the page's CSP (script-src 'self', nothing inline) stays in force.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate('document.fonts.ready');
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) {
    await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  }
  const options = JSON.stringify({ runOnly: { type: 'tag', values: AXE_TAGS }, resultTypes: ['violations'] });
  return page.evaluate<AxeViolation[]>(
    `axe.run(document, ${options}).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ') + ' | ' + (n.failureSummary || '').replace(/\\s+/g, ' ')),
    })))`,
  );
}

/** Between two typed keys: well inside the second after which a closed select's type-to-select starts afresh. */
const TYPE_AHEAD_KEY_GAP_S = 0.05;

/**
 * Types `text` into the focused element as key presses 50 ms apart on the browser's own clock (the events'
 * timestamps), however long the test machine takes between them. page.keyboard.type stamps each key with the
 * moment it arrives, so a loaded machine can leave more than a second between two letters, and a closed select
 * then starts its search over (typing 'United K' picks another country); a person typing a name does not.
 */
export async function typeAsPerson(page: Page, text: string): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const start = Date.now() / 1000;
    let n = 0;
    for (const key of text) {
      const timestamp = start + TYPE_AHEAD_KEY_GAP_S * n++;
      await cdp.send('Input.dispatchKeyEvent', {
        type: 'keyDown',
        key,
        text: key,
        unmodifiedText: key,
        timestamp,
      });
      await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key, timestamp });
    }
  } finally {
    await cdp.detach();
  }
}

/**
 * The liveness camera once it shows a frame. Until the first frame the video is 300 × 150 px; then it takes the
 * stream's size and the buttons under it move: a click aimed at them meanwhile lands elsewhere (seen on a loaded
 * machine, where the fake camera is slow), and a layout check measures a screen nobody sees for long.
 */
export async function cameraShowing(page: Page): Promise<void> {
  await page.locator('video.camera').waitFor();
  // Polled with page.evaluate: the page's CSP (no 'unsafe-eval') stops waitForFunction's predicate.
  const framed = `(() => {
    const video = document.querySelector('video.camera');
    return !!video && video.readyState >= video.HAVE_CURRENT_DATA && video.videoWidth > 0;
  })()`;
  await untilTrue(() => page.evaluate<boolean>(framed), "the camera's first frame", { ms: 30_000 });
}

/**
 * A PNG rendered by the browser itself: a document, a face or a selfie stand-in with `text` on it, 480 × 300 px.
 * A capture of a page opened a moment ago now and then fails in headless Chromium ("Unable to capture
 * screenshot", seen on a loaded machine); it is taken again once.
 */
export async function standInPhoto(context: BrowserContext, text: string): Promise<Buffer> {
  const page = await context.newPage();
  try {
    await page.setViewportSize({ width: 480, height: 300 });
    await page.setContent(
      `<body style="margin:0"><div style="width:480px;height:300px;background:#e8f0fe;font:24px sans-serif;padding:24px">${text}</div></body>`,
    );
    return await page.screenshot({ type: 'png' }).catch(async (err: Error) => {
      if (!/Unable to capture screenshot/.test(err.message)) throw err;
      await page.waitForTimeout(200);
      return page.screenshot({ type: 'png' });
    });
  } finally {
    await page.close();
  }
}

/** The personal information the page suites ask for: the SDK's baseline without the phone, the first four required. */
export const PERSONAL_INFO = {
  personalInfoFields: ['firstName', 'lastName', 'dateOfBirth', 'nationality', 'email'],
  personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth', 'nationality'],
};

/** An individual level with every step kind the page has (and the server's aml), `questionnaireId` attached. */
export const everyStepLevel = (name: string, questionnaireId: string) => ({
  name,
  applicantType: 'individual',
  steps: ['personal_information', 'identity_doc', 'selfie', 'liveness', 'questionnaire', 'aml'].map(
    (kind) => ({
      kind,
    }),
  ),
  attachedQuestionnaireId: questionnaireId,
  ...PERSONAL_INFO,
});
