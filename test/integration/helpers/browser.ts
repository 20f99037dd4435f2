// What the Chromium tests share: Debian's Chromium through playwright-core with a throwaway
// profile, and a merchant's shop page to come back to (the return_url of customer authentication).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface TestBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** `ignoreHTTPSErrors`: trust a sandbox's own certificate, as a tester's browser would after trusting its CA. */
export async function launchChromium(o: { readonly ignoreHTTPSErrors?: boolean } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'sy-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, ...(o.ignoreHTTPSErrors === true ? { ignoreHTTPSErrors: true } : {}),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface MerchantPage {
  readonly url: string;
  /** Every request the shop received, in order. */
  readonly hits: { readonly method: string; readonly url: string }[];
  close(): Promise<void>;
}

/** The merchant's shop: answers every path with a thank-you page and records the request. */
export async function startMerchantPage(): Promise<MerchantPage> {
  const hits: { method: string; url: string }[] = [];
  const server = createServer((req, res) => {
    hits.push({ method: req.method ?? '', url: req.url ?? '' });
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><p>Thank you</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
