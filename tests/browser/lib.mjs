// Shared by the browser tests and the benchmark: start Debian's Chromium headless and open
// the playground that `cargo xtask test-web` serves (SKBLAB_URL).
import { chromium } from 'playwright-core';

export const URL = process.env.SKBLAB_URL;
export const BIN = process.env.SKBLAB_BIN;
export const SHOTS = process.env.SKBLAB_SCREENSHOTS;
if (!URL || !BIN || !SHOTS) {
  throw new Error('run these through `cargo xtask test-web` (SKBLAB_URL, SKBLAB_BIN, SKBLAB_SCREENSHOTS unset)');
}

// Without the background-networking flags Chromium keeps calling hosts that are not there.
const FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Launches Chromium; a browser that fails to start throws (the run fails, never skips). */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // Playwright gives every launch a fresh temporary profile (the note's --user-data-dir).
    args: FLAGS,
  });
}

/** A page on the playground (optionally at a fragment), failing on any page error. */
export async function open(browser, fragment = '') {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.errors = errors;
  await page.goto(URL + fragment);
  await page.waitForSelector('[data-testid=step]');
  return page;
}

/**
 * Waits until the page holds nothing back: a move that adds many pieces below a diagram's
 * view draws them in the frame after its own, and the panels below the window follow the
 * position then too; each is aria-busy till then.
 */
export const drawn = (page) => page.waitForFunction(() => !document.querySelector('[aria-busy]'));

/** The position and the number of steps shown ("step 2 / 7"). */
export async function position(page) {
  const text = await page.locator('[data-testid=step]').textContent();
  const m = text.match(/step (\d+) \/ (\d+)/);
  if (!m) throw new Error(`unexpected step text: ${text}`);
  return { at: Number(m[1]), len: Number(m[2]) };
}

/**
 * How many events a lane's list holds in its window (`ol` matching `selector`): the items
 * written and those its last empty item stands for (a list writes its items only down to the
 * pane's view and its selected event; the rest as the pane scrolls).
 */
export function listed(page, selector = 'ol.events') {
  return page.$$eval(selector, (ols) => ols.reduce((n, ol) => n + ol.querySelectorAll(':scope > li:not(.more)').length +
    Number(ol.querySelector(':scope > li.rest')?.dataset.rest ?? 0), 0));
}

/**
 * The item of list `ol` (a locator) whose text matches `re`, scrolled to as a learner would:
 * a list writes its items as its pane (or the page) scrolls down to them.
 */
export async function eventItem(page, ol, re) {
  for (let i = 0; i < 50; i++) {
    const li = ol.locator('li[data-k]', { hasText: re });
    if (await li.count()) return li;
    const rest = ol.locator('li.rest');
    if (!await rest.count()) break;
    await rest.scrollIntoViewIfNeeded();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  }
  throw new Error(`no event ${re} in the list`);
}

/**
 * A write queue that grows a step at a time: 20 writes of `bytes` on a device without GSO,
 * nothing acknowledged (36,200 bytes: 25 skbs a step, 500 at the end).
 */
export function growingQueue(bytes) {
  const ops = `[[ops]]\nop = "sendmsg"\nbytes = ${bytes}\n`.repeat(20);
  const skbs = (20 * bytes) / 1448;
  return `mechanism = "sendmsg"\ntitle = "${skbs} skbs"\n[device]\ngso = false\n[socket]\nmss = 1448\n${ops}`;
}

/** The permalink fragment of scenario `text` at `step`. */
export const permalink = (text, step) => `#s=${Buffer.from(text).toString('base64url')}&step=${step}`;
