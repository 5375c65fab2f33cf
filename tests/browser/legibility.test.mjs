// Legibility, measured over every step of every walkthrough at 1400x900 (issue 22), and in
// presentation mode on a 1280x720 projector (issue 26): no drawn line crosses a label, no
// panel cuts its content off without a visible cue, no text leaves the box it is written in,
// no legend entry wraps in its middle. Each count must be zero.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { drawn, launch, open, position, SHOTS } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** In the page: every legibility fault of what is shown now, as readable lines. */
function faults() {
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

/** The walkthroughs the picker offers: [value, title]. */
const walkthroughs = (page) => page.$$eval('#walkthrough option', (os) =>
  os.filter((o) => o.value !== '').map((o) => [o.value, o.textContent]));

const settle = async (page) => {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await drawn(page);
};

/** Every step of every walkthrough in `page`, its faults counted; a screenshot (named with
 * `prefix`) of the steps `shots` names by walkthrough title. */
async function sweep(page, shots, prefix) {
  const options = await walkthroughs(page);
  assert.ok(options.length >= 14, `${options.length} walkthroughs`);
  const found = { crossed: [], clipped: [], overflow: [], legend: [] };
  let views = 0;
  for (const [value, title] of options) {
    const shoot = Object.entries(shots).find(([t]) => title.includes(t));
    await page.selectOption('#walkthrough', value);
    const { len } = await position(page);
    for (let k = 0; k <= len; k++) {
      if (k > 0) await page.getByRole('button', { name: 'Next step' }).click();
      await settle(page);
      views++;
      const f = await page.evaluate(faults);
      for (const key of Object.keys(found)) found[key].push(...f[key].map((m) => `${title.slice(0, 40)} step ${k}: ${m}`));
      if (shoot?.[1] === k) await page.screenshot({ path: join(SHOTS, `${prefix}-${shoot[0].replaceAll(' ', '-')}-step${k}.png`) });
    }
  }
  const report = Object.entries(found).map(([k, v]) => `${k}: ${v.length}`).join(', ');
  console.log(`legibility over ${views} views: ${report}`);
  for (const [key, list] of Object.entries(found)) {
    assert.deepEqual(list.slice(0, 20), [], `${key}: ${list.length} over ${views} views (${report})`);
  }
  assert.deepEqual(page.errors, []);
}

test('at 1400x900, over every step of every walkthrough, no label is crossed, cut off or overflowing', async () => {
  const page = await open(browser);
  // A few pictures to look at: the crowded GRO skb, a long queue, a page's count.
  const shots = { 'per-socket rx skb cache': 3, 'lagging consumer': 1, Anatomy: 3, 'MPTCP max-size': 3, 'on SG without GSO': 2 };
  await sweep(page, shots, 'legibility');
  await page.close();
});

test('presentation mode at 1280x720, over every step of every walkthrough: the same, with the pages below the skbs', async () => {
  const page = await open(browser, '?present');
  await page.setViewportSize({ width: 1280, height: 720 });
  await sweep(page, { 'page reuse': 2, Anatomy: 3, 'MPTCP max-size': 3 }, 'legibility-present');
  await page.close();
});

test('a panel that cuts off skbs says how many, and its cue scrolls to them', async () => {
  const page = await open(browser);
  const [lagging] = (await walkthroughs(page)).find(([, t]) => t.includes('lagging consumer'));
  await page.selectOption('#walkthrough', lagging);
  await page.getByRole('button', { name: 'Next step' }).click();
  await settle(page);
  const wrap = page.locator('figure .svgwrap').first();
  const cue = page.locator('figure .more').first();
  assert.match(await cue.textContent(), /^\d+ more skbs? /);
  const before = await wrap.evaluate((w) => w.scrollTop);
  await cue.click();
  await page.waitForFunction((b) => document.querySelector('figure .svgwrap').scrollTop > b, before);
  assert.deepEqual(page.errors, []);
  await page.close();
});
