import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs (playwright-core drives it; it downloads no browser of its own). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium as a test drives it: no sandbox (tests run as root), no
 * GPU, and none of the background connections that a machine without the
 * internet refuses.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
