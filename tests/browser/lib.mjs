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

/**
 * In the page (`page.evaluate(faults)`): every legibility fault of what is shown now, as
 * readable lines: a drawn line crossing a label, a panel cutting its drawing off with no cue,
 * a text leaving its box, a legend entry wrapping (legibility.test.mjs, capture beside the model).
 */
export function faults() {
  const out = { crossed: [], clipped: [], overflow: [], legend: [] };
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility === 'visible' &&
    Number(getComputedStyle(e).opacity) > 0;
  // A label's box, one unit in on every side: a stroke grazing the empty edge of the em box
  // (above the capitals, below the descenders) crosses no glyph.
  const inset = (b) => ({ x: b.x + 1, y: b.y + 1, w: b.width - 2, h: b.height - 2 });
  const holds = (r, x, y) => x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h;
  const who = (t) => {
    const g = t.closest('[data-skb], [data-page], [data-dfrag], [data-gone]');
    const fig = t.closest('figure')?.dataset.variant ?? t.closest('svg').getAttribute('aria-label');
    return `${fig}: "${t.textContent}"${g ? ` in ${g.outerHTML.slice(1, g.outerHTML.indexOf('>'))}` : ''}`;
  };
  for (const svg of document.querySelectorAll('svg')) {
    const texts = [...svg.querySelectorAll('text')].filter(shown).map((t) => ({ t, b: t.getBBox() }));
    // (a) Lines: stroked geometry with no area to fill (paths, lines, polylines).
    const lines = [...svg.querySelectorAll('path, line, polyline')].filter((l) => {
      if (!shown(l)) return false;
      const s = getComputedStyle(l);
      if (s.stroke === 'none' || s.strokeWidth === '0px') return false;
      const b = l.getBBox();
      return s.fill === 'none' || b.width === 0 || b.height === 0;
    });
    for (const l of lines) {
      const lb = l.getBBox();
      const near = texts.filter(({ b }) => b.x <= lb.x + lb.width && lb.x <= b.x + b.width &&
        b.y <= lb.y + lb.height && lb.y <= b.y + b.height).map(({ t, b }) => ({ t, r: inset(b) }));
      if (near.length === 0) continue;
      const len = l.getTotalLength();
      const hit = new Set();
      for (let d = 0; d <= len; d += 0.5) {
        const p = l.getPointAtLength(d);
        for (const n of near) if (!hit.has(n) && holds(n.r, p.x, p.y)) hit.add(n);
      }
      for (const n of hit) out.crossed.push(`${who(n.t)} crossed by <${l.tagName} class="${l.getAttribute('class') ?? ''}">`);
    }
    // (c) A text stays inside the smallest rectangle its start lies in, or else the drawing.
    const rects = [...svg.querySelectorAll('rect')].filter(shown).map((r) => {
      const b = r.getBBox();
      return { x: b.x, y: b.y, w: b.width, h: b.height };
    });
    const vb = svg.viewBox.baseVal;
    for (const { t, b } of texts) {
      const [x, y] = [b.x + 0.5, b.y + b.height / 2];
      const box = rects.filter((r) => holds(r, x, y)).sort((p, q) => p.w * p.h - q.w * q.h)[0] ??
        { x: 0, y: 0, w: vb.width, h: vb.height };
      if (b.x < box.x - 0.5 || b.x + b.width > box.x + box.w + 0.5 || b.y < box.y - 1 || b.y + b.height > box.y + box.h + 1) {
        out.overflow.push(`${who(t)} leaves its ${box.w.toFixed(0)}x${box.h.toFixed(0)} box at ${box.x.toFixed(0)},${box.y.toFixed(0)}`);
      }
    }
  }
  // (b) A diagram panel that cuts off part of its drawing shows a visible cue saying so.
  for (const wrap of document.querySelectorAll('figure .svgwrap')) {
    const r = wrap.getBoundingClientRect();
    const [bottom, right] = [r.top + wrap.clientHeight, r.left + wrap.clientWidth];
    const cut = [...wrap.querySelectorAll('g[data-skb], g[data-page], g[data-dfrag]')].filter((g) => {
      const b = g.getBoundingClientRect();
      return b.bottom > bottom + 0.5 || b.right > right + 0.5;
    });
    if (cut.length === 0) continue;
    // The cue stands right under the view, over no part of the drawing.
    const cue = [...wrap.closest('figure').querySelectorAll('.more')].find((c) => {
      const b = c.getBoundingClientRect();
      return shown(c) && /\d+ more/.test(c.textContent) && b.top >= r.bottom - 0.5 && b.top <= r.bottom + 8 && b.height > 0;
    });
    if (!cue) {
      const first = cut[0].outerHTML.slice(1, cut[0].outerHTML.indexOf('>'));
      out.clipped.push(`${wrap.closest('figure').dataset.variant}: ${cut.length} cut off (${first}) with no cue`);
    }
  }
  // A legend entry (a swatch and its words) never wraps in its middle,
  // and every swatch can be seen.
  for (const e of document.querySelectorAll('.legend li')) {
    if (e.getClientRects().length > 1) out.legend.push(`"${e.textContent}" wraps`);
  }
  for (const k of document.querySelectorAll('.legend .k')) {
    if (k.getClientRects().length > 0 && Number(getComputedStyle(k).opacity) < 0.3) {
      out.legend.push(`the swatch of "${k.parentElement.textContent}" is invisible`);
    }
  }
  return out;
}
