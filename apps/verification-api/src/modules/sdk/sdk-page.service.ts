import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import fastifyStatic from '@fastify/static';
import type { HttpPlugin } from '@tessera/platform';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The page's Content-Security-Policy: everything from this origin only, nothing inline, no third party.
 * `blob:` lets the page preview a capture the user has not uploaded yet; framing is allowed so a partner can
 * embed the link in an iframe (docs/hosted-sdk.md), and the embedding page grants the camera.
 */
export const SDK_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  'frame-ancestors *',
].join('; ');

/** Headers of every response under /sdk: the CSP, no referrer (the short code stays here), no sniffing. */
export const SDK_PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': SDK_PAGE_CSP,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'permissions-policy': 'camera=(self), microphone=(self), geolocation=()',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The built page of apps/sdk-web (a workspace dependency, built first by turbo). */
export function sdkWebDist(): string {
  return join(dirname(require.resolve('@tessera/sdk-web/package.json')), 'dist');
}

/** The assets of the build under /sdk/assets/ (hashed names, cached for a year), or none when it is not built. */
export function sdkPagePlugins(): HttpPlugin[] {
  const assets = join(sdkWebDist(), 'assets');
  if (!existsSync(assets)) return [];
  return [
    {
      plugin: fastifyStatic,
      options: {
        root: assets,
        prefix: '/sdk/assets/',
        decorateReply: false,
        index: false,
        list: false,
        dotfiles: 'deny',
        immutable: true,
        maxAge: '365d',
        setHeaders: (res: { setHeader: (name: string, value: string) => void }) => {
          for (const [name, value] of Object.entries(SDK_PAGE_HEADERS)) res.setHeader(name, value);
        },
      },
    },
  ];
}

/**
 * The one HTML document of the build, served for every `/sdk/{shortCode}` (SdkPageController); the assets
 * are registered by AppModule through the platform's httpPlugins (sdkPagePlugins), before init.
 */
@Injectable()
export class SdkPageService implements OnModuleInit {
  private readonly logger = new Logger('SdkPage');
  private html: string | undefined;

  onModuleInit(): void {
    const indexFile = join(sdkWebDist(), 'index.html');
    if (!existsSync(indexFile)) {
      this.logger.warn(`The hosted page is not built (${indexFile} is missing): /sdk answers 503`);
      return;
    }
    this.html = readFileSync(indexFile, 'utf8');
  }

  /** The page's HTML, or undefined when the page was not built. */
  document(): string | undefined {
    return this.html;
  }
}
