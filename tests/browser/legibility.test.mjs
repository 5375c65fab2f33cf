// Legibility, measured over every step of every walkthrough at 1400x900 (issue 22), and in
// presentation mode on a 1280x720 projector (issue 26): no drawn line crosses a label, no
// panel cuts its content off without a visible cue, no text leaves the box it is written in,
// no legend entry wraps in its middle. Each count must be zero.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { drawn, faults, launch, open, position, SHOTS } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

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
