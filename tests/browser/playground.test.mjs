// The playground in a real headless Chromium: walkthroughs, counters against the native
// binary, permalinks, the editor's inline errors, keyboard-only use. Screenshots go to
// target/screenshots/ for review.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drawn, eventItem, growingQueue, launch, listed, open, permalink, position, BIN, SHOTS } from './lib.mjs';

let browser;
// Files the tests write (scenarios for `skblab run`, downloads), removed at the end.
let scratch;
before(async () => {
  browser = await launch();
  scratch = mkdtempSync(join(tmpdir(), 'skblab-browser-'));
});
after(async () => {
  await browser?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** `skblab run --json` on the scenario text, in one variant. */
function runNative(text, variant) {
  const file = join(scratch, 'scenario.toml');
  writeFileSync(file, text);
  const out = execFileSync(BIN, ['run', file, '--json', '--variant', variant], { encoding: 'utf8' });
  return JSON.parse(out);
}

/** The counters the DOM shows for `variant`, once they follow the position: { name: number }. */
async function domCounters(page, variant) {
  await drawn(page);
  return page.$$eval(`td[data-variant="${variant}"] [data-counter]`, (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.counter, Number(e.textContent)])));
}

async function variantsShown(page) {
  return page.$$eval('figure[data-variant]', (els) => els.map((e) => e.dataset.variant));
}

test('every walkthrough, stepped with Next, shows the counters of `skblab run --json`', async () => {
  const page = await open(browser);
  const options = await page.$$eval('#walkthrough option', (os) => os.map((o) => o.value).filter((v) => v !== ''));
  assert.ok(options.length > 0, 'the picker lists walkthroughs');
  for (const value of options) {
    await page.selectOption('#walkthrough', value);
    const { len } = await position(page);
    assert.equal((await position(page)).at, 0);
    const text = await page.inputValue('#scenario');
    const variants = await variantsShown(page);
    const expected = Object.fromEntries(variants.map((v) => [v, runNative(text, v)]));
    // The editor names the variants the panels show.
    assert.equal(await page.inputValue('select[aria-label=variant]'), variants[0], `${value} editor variant`);
    assert.equal(await page.inputValue('select[aria-label="compare with"]'), variants[1] ?? '', `${value} compare with`);
    for (let k = 1; k <= len; k++) {
      await page.getByRole('button', { name: 'Next step' }).click();
      assert.equal((await position(page)).at, k);
      if (k === Math.ceil(len / 2)) await page.screenshot({ path: join(SHOTS, `walkthrough-${value}-mid.png`) });
      // The README's picture: the first walkthrough at step 3.
      if (value === options[0] && k === 3) await page.screenshot({ path: join(SHOTS, 'playground.png') });
      // Every variant's events are listed, as the native run records them (a window of 100).
      for (const v of variants) {
        const want = expected[v].steps[k - 1].events.length;
        const shown = await listed(page, `ol.events[data-variant="${v}"]`);
        assert.equal(shown, Math.min(want, 100), `${value} ${v} step ${k} events`);
      }
      for (const v of variants) {
        const want = expected[v].steps?.[k - 1]?.counters;
        if (want) assert.deepEqual(await domCounters(page, v), want, `${value} ${v} step ${k}`);
      }
    }
    for (const v of variants) {
      assert.deepEqual(await domCounters(page, v), expected[v].counters, `${value} ${v} final counters`);
    }
    await shot(page, `walkthrough-${value}-end`);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('prefers-reduced-motion: nothing in the page animates, transitions or scrolls smoothly (issue 36)', async () => {
  // anatomy step 5 at its free_page: page 0 is drawn freed, which otherwise fades out.
  const at = `#w=${Buffer.from('anatomy').toString('base64url')}&step=5&event=2`;
  const moving = (page) => page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => {
    const s = getComputedStyle(e);
    return s.animationName !== 'none' || parseFloat(s.transitionDuration) > 0 || s.scrollBehavior === 'smooth';
  }).map((e) => e.getAttribute('class') ?? e.tagName));
  const page = await open(browser, at);
  await drawn(page);
  assert.ok((await page.locator('[data-gone="0"]').count()) > 0, 'page 0 is drawn freed');
  assert.ok((await moving(page)).includes('gone'), 'the freed page fades');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  assert.deepEqual(await moving(page), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the step\'s narration stays in view, above the events, while their list scrolls (issue 36)', async () => {
  for (const [width, height] of [[1400, 900], [1280, 720]]) {
    const page = await open(browser, `#w=${Buffer.from('rx-skb-cache').toString('base64url')}&step=3`);
    await page.setViewportSize({ width, height });
    await page.locator('body').focus();
    // Down the list, then back up it event by event: the selected event is scrolled to,
    // never under the narration.
    const check = async (after) => {
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
      await drawn(page);
      const at = await page.evaluate(() => {
        const r = (s) => document.querySelector(s).getBoundingClientRect();
        return { pane: r('#narration'), said: r('#narration > .said'), text: r('[data-testid=narration]'),
          sel: r('#narration .leads li[aria-current]'), scrolled: document.querySelector('#narration').scrollTop };
      });
      const where = `${width}×${height} after ${after}: ${JSON.stringify(at)}`;
      assert.ok(at.scrolled > 200, `the list scrolled, ${where}`);
      assert.ok(at.text.top >= at.pane.top && at.text.top < at.said.bottom, `the narration in view, ${where}`);
      assert.ok(at.sel.top >= at.said.bottom - 1 && at.sel.bottom <= Math.min(at.pane.bottom, height) + 1,
        `the selected event in view, under the narration, ${where}`);
    };
    for (let k = 0; k < 80; k++) await page.keyboard.press('ArrowDown');
    await check('↓ 80 times');
    for (let k = 1; k <= 30; k++) {
      await page.keyboard.press('ArrowUp');
      await check(`↑ ${k} times`);
    }
    // The learner scrolls the selected event up under the narration; ↑ brings the one
    // before it out from under it.
    await page.evaluate(() => {
      const p = document.querySelector('#narration');
      const [li, said] = [p.querySelector('.leads li[aria-current]'), p.querySelector('.said')];
      p.scrollTop += li.getBoundingClientRect().top - (said.getBoundingClientRect().bottom - 20);
    });
    await page.keyboard.press('ArrowUp');
    await check('a scroll, then ↑');
    await page.screenshot({ path: join(SHOTS, `narration-in-view-${width}x${height}.png`) });
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});

test('a permalink restores the walkthrough and the step', async () => {
  const page = await open(browser);
  await page.selectOption('#walkthrough', { index: (await page.$$('#walkthrough option')).length - 1 });
  const title = await page.locator('[data-testid=title]').textContent();
  const { len } = await position(page);
  const target = Math.min(2, len);
  for (let i = 0; i < target; i++) await page.getByRole('button', { name: 'Next step' }).click();
  // The URL follows the position once stepping pauses.
  await page.waitForURL(new RegExp(`&step=${target}$`));
  const link = page.url();
  assert.match(link, /#w=.*&step=/);
  const again = await open(browser, link.slice(link.indexOf('#')));
  assert.equal((await position(again)).at, target);
  assert.equal(await again.locator('[data-testid=title]').textContent(), title);
  await shot(again, 'permalink-walkthrough');
  await again.close();
  await page.close();
});

test('a permalink restores an edited scenario, its comparison and the step', async () => {
  const page = await open(browser);
  // The same scenario, laid out differently: the link must carry the learner's exact text.
  const text = JSON.stringify(JSON.parse(await page.inputValue('#scenario')), null, 1);
  await page.fill('#scenario', text);
  await page.getByRole('button', { name: 'Run this scenario' }).click();
  const { len } = await position(page);
  await page.getByRole('button', { name: 'Last step' }).click();
  const variants = await variantsShown(page);
  await page.waitForURL(new RegExp(`&step=${len}$`));
  const link = page.url();
  assert.match(link, /#s=/);
  const again = await open(browser, link.slice(link.indexOf('#')));
  assert.deepEqual(await position(again), { at: len, len });
  assert.equal(await again.inputValue('#scenario'), text);
  assert.deepEqual(await variantsShown(again), variants);
  for (const v of variants) assert.deepEqual(await domCounters(again, v), await domCounters(page, v));
  await shot(again, 'permalink-scenario');
  await again.close();
  await page.close();
});

test('a 500-skb queue: the page holds the skbs near the view, scrolling reaches every one', async () => {
  const page = await open(browser, permalink(growingQueue(36200), 20));
  const ids = () => page.$$eval('[data-skb]', (els) => els.map((e) => Number(e.dataset.skb)));
  assert.match(await page.locator('svg text.q').first().textContent(), /\(500 skbs\)/);
  const top = await ids();
  assert.ok(top.includes(0) && top.length < 200, `${top.length} skbs in the page`);
  await page.locator('.svgwrap').evaluate((e) => { e.scrollTop = e.scrollHeight; });
  await page.waitForSelector('[data-skb="499"]');
  assert.ok(!(await ids()).includes(0));
  // The 25 skbs this step queued, all at the bottom, are marked.
  assert.equal(await page.locator('.mk.chg').count(), 25);
  // Not full-page: resizing the viewport for that moves the diagram's scroll position.
  await page.screenshot({ path: join(SHOTS, 'long-queue-bottom.png') });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a step at the end of a long queue: the view stays put; what is in view is drawn at once, what is below it in the frame after', async () => {
  const page = await open(browser, permalink(growingQueue(36200), 19));
  const wrap = page.locator('.svgwrap');
  await wrap.evaluate((e) => { e.scrollTop = e.scrollHeight; });
  await page.waitForSelector('[data-skb="474"]');
  await page.waitForSelector('.svgwrap svg:not([aria-busy])');
  // The page as the step's render leaves it, caught when the app publishes its render time
  // (after the diagram's render, before any frame), then once the held pieces are drawn.
  const { before, at, after } = await page.evaluate(() => new Promise((resolve) => {
    const wrap = document.querySelector('.svgwrap');
    const svg = () => wrap.querySelector('svg');
    const skbs = () => [...wrap.querySelectorAll('[data-skb]')].map((e) => Number(e.dataset.skb));
    const view = wrap.getBoundingClientRect();
    const inView = () => [...wrap.querySelectorAll('[data-skb]')].filter((e) => {
      const r = e.getBoundingClientRect();
      return r.bottom > view.top && r.top < view.bottom;
    }).map((e) => Number(e.dataset.skb));
    const below = (ids) => ids.every((id) => wrap.querySelector(`[data-skb="${id}"]`).getBoundingClientRect().top >= view.bottom);
    const before = wrap.scrollTop;
    let at;
    Object.defineProperty(window.__skblab, 'renderMs', {
      configurable: true,
      set() { at ??= { top: wrap.scrollTop, busy: svg().getAttribute('aria-busy'), skbs: skbs(), marks: wrap.querySelectorAll('.mk.chg').length }; },
    });
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    const settled = () => {
      if (!at || svg().hasAttribute('aria-busy')) return setTimeout(settled, 10);
      delete window.__skblab.renderMs;
      const held = skbs().filter((id) => !at.skbs.includes(id));
      const fresh = skbs().filter((id) => id >= 475).length;
      resolve({ before, at, after: { top: wrap.scrollTop, inView: inView(), held, heldBelow: below(held), fresh, cue: wrap.closest('figure').querySelector('.more')?.textContent } });
    };
    settled();
  }));
  assert.equal(at.top, before, 'the step scrolled the diagram');
  assert.equal(after.top, before);
  assert.equal(at.busy, 'true', 'nothing was held back');
  // Everything in view was there at the step's render, and the marks of the step's new skbs
  // the page holds (those near the view: skbs 475 and on, to the end of its band).
  assert.ok(after.inView.length > 0);
  for (const id of after.inView) assert.ok(at.skbs.includes(id), `skb ${id} in view came a frame late`);
  assert.ok(after.fresh > 6 && after.fresh < 25, `${after.fresh} new skbs in the page`);
  assert.equal(at.marks, after.fresh);
  // What came in the frame after: new skbs, all below the view, which its cue counts.
  assert.ok(after.held.length > 6 && after.held.every((id) => id >= 475), `${after.held}`);
  assert.ok(after.heldBelow, `${after.held} not all below the view`);
  assert.match(after.cue, /^\d+ more skbs below/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a move drawn ahead while the learner reads shows what a new tab at its link draws', async () => {
  // The diagrams of → and ← (from a whole step) and ↓ and ↑ (from an event) are drawn once
  // the page is idle after the move before, one at a time; the key then shows them. Idle
  // callbacks run in the order asked, so three asked after a move's render follow both.
  const svgs = (page) => page.$$eval('.svgwrap svg', (ss) => ss.map((s) => s.outerHTML));
  const rest = (page) => page.evaluate(async () => {
    for (let i = 0; i < 3; i++) await new Promise((r) => requestIdleCallback(() => r()));
  });
  // (name, link, [key, drawn ahead?]): one lane, where ↓ and ↑ from an event are always
  // ahead (Home never), then two in lockstep, where the other lane may follow elsewhere.
  const runs = [
    ['500 skbs', permalink(growingQueue(36200), 17), [['ArrowRight', 1], ['ArrowRight', 1], ['ArrowLeft', 1], ['ArrowRight', 1],
      ['ArrowDown', 0], ['ArrowDown', 1], ['ArrowUp', 1], ['ArrowDown', 1], ['Home', 0]]],
    ['rx-page-reuse', `#w=${Buffer.from('rx-page-reuse').toString('base64url')}&step=0`,
      [['ArrowRight', 1], ['ArrowDown', 0], ['ArrowDown', null], ['ArrowDown', null], ['ArrowRight', 0], ['ArrowRight', 1]]],
  ];
  let ahead = 0;
  for (const [name, start, keys] of runs) {
    const page = await open(browser, start);
    await page.locator('body').focus();
    for (const [i, [key, want]] of keys.entries()) {
      await drawn(page);
      await rest(page);
      const hash = await page.evaluate(() => location.hash);
      await page.keyboard.press(key);
      await drawn(page);
      const was = await page.evaluate(() => window.__skblab.drawnAhead);
      if (want !== null) assert.equal(was, want, `${name}: move ${i} (${key}) drawn ahead`);
      ahead += was;
      // The link follows once stepping rests.
      await page.waitForFunction((h) => location.hash !== h, hash);
      const fresh = await open(browser, await page.evaluate(() => location.hash));
      await drawn(fresh);
      assert.deepEqual(await svgs(page), await svgs(fresh), `${name}: after move ${i} (${key})`);
      await fresh.close();
    }
    assert.deepEqual(page.errors, []);
    await page.close();
  }
  assert.ok(ahead >= 8, `${ahead} moves drawn ahead`);
});

test('the panels below the window follow a step in the frame after; in view, at once', async () => {
  const text = growingQueue(7240);
  const page = await open(browser, permalink(text, 12));
  const [variant] = await variantsShown(page);
  const steps = runNative(text, variant).steps;
  await drawn(page);
  assert.deepEqual(await domCounters(page, variant), steps[11].counters);
  // The counters and the marker as the step's render leaves them (caught when the app
  // publishes its render time, before any frame), then once nothing is held back.
  const step = () => page.evaluate((variant) => new Promise((resolve) => {
    const panels = document.querySelector('.panels');
    const counters = () => Object.fromEntries([...document.querySelectorAll(`td[data-variant="${variant}"] [data-counter]`)]
      .map((e) => [e.dataset.counter, Number(e.textContent)]));
    const seen = () => ({ busy: panels.parentElement.getAttribute('aria-busy'), counters: counters() });
    const below = panels.getBoundingClientRect().top >= innerHeight;
    let at;
    Object.defineProperty(window.__skblab, 'renderMs', { configurable: true, set() { at ??= seen(); } });
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    const settled = () => {
      if (!at || document.querySelector('[aria-busy]')) return setTimeout(settled, 10);
      delete window.__skblab.renderMs;
      resolve({ below, at, after: seen() });
    };
    settled();
  }), variant);
  // Below the window (the diagram fills it at 1400x900): the step's render leaves the
  // panels at step 12, marked busy; the frame after brings step 13.
  const late = await step();
  assert.ok(late.below, 'the panels are in the window');
  assert.equal(late.at.busy, 'true');
  assert.deepEqual(late.at.counters, steps[11].counters);
  assert.equal(late.after.busy, null);
  assert.deepEqual(late.after.counters, steps[12].counters);
  // Scrolled into view, they follow within the step's own render.
  await page.locator('.panels').scrollIntoViewIfNeeded();
  const now = await step();
  assert.ok(!now.below);
  assert.equal(now.at.busy, null);
  assert.deepEqual(now.at.counters, steps[13].counters);
  await shot(page, 'panels-follow');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a step with thousands of events lists the first 100 and counts the rest', async () => {
  const text = 'mechanism = "sendmsg"\n[[ops]]\nop = "sendmsg"\nbytes = 256\ncount = 300\n';
  const events = runNative(text, 'pre-2010').steps[0].events.length;
  assert.ok(events > 1000, `${events} events`);
  const page = await open(browser, permalink(text, 1));
  assert.equal(await listed(page), 100);
  assert.equal(await page.locator('ol.events > li').first().textContent(), 'alloc_skb skb=0 cpu=0 head_bytes=816 headroom=320 linear_room=0 seq=0 truesize=552 queue="write_queue" size_goal=65160');
  assert.equal(await page.getByTestId('more-events').textContent(),
    `▼ ${events - 100} later events`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a long list writes the items down to its pane\'s view, and the rest as the pane scrolls', async () => {
  const text = 'mechanism = "sendmsg"\n[[ops]]\nop = "sendmsg"\nbytes = 256\ncount = 300\n';
  const want = runNative(text, 'pre-2010').steps[0].events.slice(0, 100);
  const page = await open(browser, permalink(text, 1));
  const written = () => page.locator('ol.events > li:not(.more)').allTextContents();
  const first = await written();
  // The pane (675 px at this size) shows a few dozen; an empty item as tall as the rest
  // stands for them.
  assert.ok(first.length >= 10 && first.length < 100, `${first.length} items written`);
  assert.equal(Number(await page.locator('ol.events > li.rest').getAttribute('data-rest')), 100 - first.length);
  assert.ok(await page.locator('ol.events > li.rest').evaluate((li) => li.offsetHeight) > 16 * (100 - first.length));
  // The items written reach past the bottom of the pane's view, after a resize too (which
  // sends no scroll: the next move follows it).
  const covered = () => page.evaluate(() => {
    const pane = document.querySelector('.narration').getBoundingClientRect();
    const items = document.querySelectorAll('ol.events > li:not(.more)');
    return items[items.length - 1].getBoundingClientRect().bottom >= Math.min(pane.bottom, innerHeight);
  });
  assert.equal(await covered(), true);
  await page.setViewportSize({ width: 1400, height: 1600 });
  await page.locator('body').focus();
  await page.keyboard.press('ArrowDown');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  assert.equal(await covered(), true, 'after a resize and a move');
  // Scrolled to its bottom, again and again: every item is written, in order.
  for (let i = 0; i < 20 && await page.locator('ol.events > li.rest').count(); i++) {
    await page.locator('.narration').evaluate((e) => { e.scrollTop = e.scrollHeight; });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  }
  const all = await written();
  assert.equal(all.length, 100);
  assert.deepEqual(all.map((t) => t.split(' ')[0]), want.map((e) => e.ev));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a hostile or broken permalink shows a message and the default walkthrough', async () => {
  const first = await open(browser);
  const title = await first.locator('[data-testid=title]').textContent();
  await first.close();
  const bad = ['#s=%%%', '#s=' + 'A'.repeat(2_000_000), '#w=bm9wZQ&step=1', '#s=bWVjaGFuaXNtID0gMw&step=1', '#step=x'];
  for (const frag of bad) {
    const page = await open(browser, frag);
    await page.waitForSelector('[data-testid=notice]');
    assert.match(await page.locator('[data-testid=notice]').textContent(), /could not be opened/);
    assert.equal(await page.locator('[data-testid=title]').textContent(), title, frag.slice(0, 20));
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});

/** The editor's verdict once the text is run (it runs when typing pauses). */
async function verdict(page) {
  await page.waitForFunction(() => !/running it/.test(document.querySelector('[data-testid=editor-status]').textContent));
  return page.locator('[data-testid=editor-status]').textContent();
}

test('an invalid scenario shows an inline error and keeps the text', async () => {
  const page = await open(browser);
  const editor = page.locator('#scenario');
  const cases = [
    ['mechanism = "sendmsg"\nops = 3\n', /ops/],
    ['mechanism = "sendmsg"\n[[ops]]\nop = "sendmsg"\nbytes = 99999999999\n', /out of range/],
    ['mechanism = "nope"\nops = []\n', /unknown mechanism `nope`/],
    ['{ "mechanism": "sendmsg", ', /JSON parse error/],
  ];
  for (const [text, want] of cases) {
    await editor.fill(text);
    const status = page.locator('[data-testid=editor-status]');
    assert.match(await verdict(page), want);
    assert.equal(await status.getAttribute('class'), 'error');
    assert.equal(await editor.getAttribute('aria-invalid'), 'true');
    assert.equal(await editor.inputValue(), text, 'the text is kept');
    assert.ok(await page.getByRole('button', { name: 'Run this scenario' }).isDisabled());
  }
  await shot(page, 'editor-error');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a scenario over the size cap is refused once typing pauses, and the tab stays responsive', async () => {
  const page = await open(browser);
  const ops = Array.from({ length: 10_001 }, () => '[[ops]]\nop = "transmit"\n').join('');
  // Playwright's fill() types long multi-line text slowly; set it and fire the input event.
  const ms = await page.evaluate((text) => {
    const t = performance.now();
    const ta = document.querySelector('#scenario');
    ta.value = text;
    ta.dispatchEvent(new InputEvent('input', { bubbles: true }));
    return performance.now() - t;
  }, 'mechanism = "sendmsg"\n' + ops);
  assert.match(await verdict(page), /`ops` = 10001 is out of range/);
  assert.ok(await page.getByRole('button', { name: 'Run this scenario' }).isDisabled());
  // The page still answers (a frozen tab would time this out); the time is printed, not judged.
  assert.equal(await page.evaluate(() => 1 + 1), 2);
  console.log(`# parsing 10,001 operations took ${ms.toFixed(0)} ms in the page`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('keyboard only: arrows, Home/End, space and the labelled buttons move the steps', async () => {
  const page = await open(browser);
  const { len } = await position(page);
  assert.ok(len >= 2, 'the default walkthrough has steps');
  await page.locator('body').focus();
  await page.keyboard.press('End');
  assert.equal((await position(page)).at, len);
  await page.keyboard.press('Home');
  assert.equal((await position(page)).at, 0);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal((await position(page)).at, 2);
  await page.keyboard.press('ArrowLeft');
  assert.equal((await position(page)).at, 1);
  // Tab to the "Next step" button and press it with Enter.
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.getAttribute('aria-label')) === 'Next step') break;
  }
  await page.keyboard.press('Enter');
  assert.equal((await position(page)).at, 2);
  // Space (outside a button) plays; the steps advance on their own, then it pauses.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('Home');
  await page.keyboard.press(' ');
  await page.waitForFunction(() => /step [1-9]/.test(document.querySelector('[data-testid=step]').textContent));
  await page.keyboard.press(' ');
  const paused = (await position(page)).at;
  await page.waitForTimeout(1200);
  assert.equal((await position(page)).at, paused, 'space paused the playback');
  await shot(page, 'keyboard');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the trace exports as JSON and the diagram as SVG', async () => {
  const page = await open(browser);
  await page.keyboard.press('End');
  const variant = (await variantsShown(page))[0];
  const save = async (name) => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name }).click(),
    ]);
    const file = join(scratch, download.suggestedFilename());
    await download.saveAs(file);
    return { name: download.suggestedFilename(), text: readFileSync(file, 'utf8') };
  };
  const json = await save(`Download the ${variant} trace as JSON`);
  assert.match(json.name, new RegExp(`-${variant}\\.json$`));
  const trace = JSON.parse(json.text);
  assert.equal(trace.variant, variant);
  // Byte for byte what `skblab run --json` prints for the scenario (the page writes it through
  // a serde_json Value, which keeps the fields' order).
  const file = join(scratch, 'scenario.toml');
  writeFileSync(file, await page.inputValue('#scenario'));
  const native = execFileSync(BIN, ['run', file, '--json', '--variant', variant], { encoding: 'utf8' });
  assert.equal(json.text + '\n', native);
  assert.deepEqual(await domCounters(page, variant), trace.counters);
  const svg = await save(`Download the ${variant} diagram as SVG`);
  assert.match(svg.name, /\.svg$/);
  // A figure of its own: an opaque background, a caption (in lines), then the drawing with its style.
  assert.match(svg.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*><rect [^>]*fill="#fff"\/>(<text [^>]*>[^<]+<\/text>)+<g [^>]*><svg [^>]*><style>/);
  assert.ok(svg.text.endsWith('</svg>'));
  await page.close();
});

/** Waits until the stepper shows step `n`, event `k`: Yew yields to the browser during a long
 * render, so a key's effect may land after its handler returned. */
const shows = async (page, n, k) => {
  await page.waitForFunction(([n, k]) =>
    document.querySelector('[data-testid=step]').dataset.step === String(n) &&
    document.querySelector('[data-testid=event]')?.dataset.event === String(k), [n, k]);
  await drawn(page);
};

/** Page and skb ids drawn in the first figure. */
async function drawnIds(page) {
  const ids = (attr) => page.$$eval(`figure:first-of-type [data-${attr}]`, (els, attr) =>
    els.map((e) => Number(e.dataset[attr])).sort((a, b) => a - b), attr);
  return { pages: await ids('page'), skbs: await ids('skb') };
}

/** The live pages the first figure's label counts ("pages (12 live)"). */
async function livePages(page) {
  const label = await page.locator('figure:first-of-type svg text.q', { hasText: 'live)' }).textContent();
  return Number(label.match(/\((\d+) live\)/)[1]);
}

test('event by event: keys and clicks select events, the diagram follows, the kernel function links', async () => {
  const page = await open(browser);
  const value = await page.$$eval('#walkthrough option', (os) =>
    os.find((o) => o.textContent.includes('netdev_alloc_frag page reuse')).value);
  await page.selectOption('#walkthrough', value);
  const text = await page.inputValue('#scenario');
  const [left] = await variantsShown(page);
  const steps = runNative(text, left).steps;
  await page.locator('body').focus();
  // Duyck's lane leads (where the patch acts); its step-1 list is not drawn yet at step 0, so
  // step there, hand the keys to the left lane, and come back.
  await page.keyboard.press('ArrowRight');
  await page.getByRole('button', { name: 'Step this lane' }).click();
  await page.keyboard.press('Home');
  await page.locator('body').focus();
  // Keyboard only: ↓ walks every event of the first two steps, in order.
  let pages = new Set();
  let faded = 0;
  for (let n = 1; n <= 2; n++) {
    const events = steps[n - 1].events;
    // Past a step's last event, ↓ first rests at the step's end.
    if (n > 1) await page.keyboard.press('ArrowDown');
    for (let k = 1; k <= events.length; k++) {
      await page.keyboard.press(k % 2 ? 'ArrowDown' : 'Shift+ArrowRight');
      await shows(page, n, k);
      const sel = page.locator(`ol.events[data-variant="${left}"] > li[aria-current]`);
      if (k <= 100) assert.equal(await sel.textContent(), await page.locator(`ol.events[data-variant="${left}"] > li`).nth(k - 1).textContent());
      // The pages drawn are those the events so far allocated and did not free.
      const e = events[k - 1];
      if (e.ev === 'alloc_page') pages.add(e.page);
      if (e.ev === 'free_page') pages.delete(e.page);
      // A page the event freed is drawn once more, fading, and named no live page (where it
      // is near the view: the page holds only that part of a tall drawing).
      const gone = await page.$$eval('figure:first-of-type [data-gone]', (els) => els.map((g) => Number(g.dataset.gone)));
      for (const id of gone) assert.ok(e.ev === 'free_page' && id === e.page, `step ${n} event ${k} (${e.ev}): page ${id} fading`);
      faded += gone.length;
      // The frag slot a new frag fills is outlined on its own (a 16-high outline).
      if (e.ev === 'new_frag') {
        assert.equal(await page.locator('figure:first-of-type rect.mk.chg[height="16"]').count(), 1, `step ${n} event ${k} slot`);
      }
      // (The page holds only the part of a tall drawing near the view: every page drawn is
      // one of them, and the label counts them all.)
      if (e.ev === 'alloc_page' || e.ev === 'free_page' || k === events.length) {
        const what = `step ${n} event ${k} (${e.ev})`;
        assert.equal(await livePages(page), pages.size, what);
        for (const id of (await drawnIds(page)).pages) assert.ok(pages.has(id), `${what}: page ${id} drawn`);
      }
    }
    // After the last event, the drawing is the step's state, as the native run gives it.
    const st = steps[n - 1].state;
    assert.equal(await livePages(page), st.pages.length);
    const want = new Set([...st.pages.map((p) => `p${p.id}`), ...st.queues.flatMap((q) => q.skbs.map((s) => `s${s.id}`))]);
    const drawn = await drawnIds(page);
    for (const id of [...drawn.pages.map((p) => `p${p}`), ...drawn.skbs.map((s) => `s${s}`)]) assert.ok(want.has(id), `step ${n}: ${id} drawn`);
  }
  assert.ok(faded > 0, 'some freed page was seen fading');
  // ↑ goes back one event; → leaves event stepping for the next whole step.
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.getAttribute('[data-testid=event]', 'data-event'), String(steps[1].events.length - 1));
  // The selected event names its kernel function, linked at the trace's kernel version.
  const link = page.locator('[data-testid=kernel-fn] a');
  const href = await link.getAttribute('href');
  assert.match(href, /^https:\/\/elixir\.bootlin\.com\/linux\/v[0-9.]+(-rc[0-9]+)?\/C\/ident\/[a-z_0-9]+$/);
  assert.equal(href.split('/').pop(), await link.textContent());
  await page.keyboard.press('ArrowRight');
  assert.equal((await position(page)).at, 3);
  assert.equal(await page.locator('[data-testid=event]').count(), 0);
  // A click on an event selects it.
  await page.locator(`ol.events[data-variant="${left}"] > li`).nth(2).click();
  assert.equal(await page.getAttribute('[data-testid=event]', 'data-event'), '3');
  await page.screenshot({ path: join(SHOTS, 'event-selected.png') });
  // The permalink records the event (0-based in the link) and a new tab restores it.
  await page.waitForURL(/&step=3&event=2(&event1=\d+)?$/);
  const again = await open(browser, page.url().slice(page.url().indexOf('#')));
  assert.equal((await position(again)).at, 3);
  assert.equal(await again.getAttribute('[data-testid=event]', 'data-event'), '3');
  await again.close();
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The diagram's text stays legible: at 1400x900 and at 1024x768, for every step of every
// walkthrough, every text drawn inside an skb, page or dfrag box lies within that box, no two
// texts of the drawing overlap, and every text is at least 11 px on screen at 100 % zoom.
// (Boxes measured in the SVG's own units, with getBBox.)
/** Every clipped, overlapping or too small text in the drawings, described. */
function badTexts() {
  const bad = [];
  for (const svg of document.querySelectorAll('figure svg')) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const texts = [...svg.querySelectorAll('text')];
    for (const t of texts) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 10.99) bad.push(`"${t.textContent}" is ${px.toFixed(1)} px`);
    }
    // Across boxes too: a label running into the next skb or the page column.
    const boxes = texts.map((t) => ({ t: t.textContent, b: t.getBBox() }));
    boxes.sort((a, b) => a.b.y - b.b.y);
    for (let i = 0; i < boxes.length; i++) {
      const a = boxes[i].b;
      for (let j = i + 1; j < boxes.length && boxes[j].b.y < a.y + a.height - 0.5; j++) {
        const b = boxes[j].b;
        if (a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5) bad.push(`"${boxes[i].t}" overlaps "${boxes[j].t}"`);
      }
    }
  }
  const inside = (a, b) => a.x >= b.x - 0.5 && a.y >= b.y - 0.5 &&
    a.x + a.width <= b.x + b.width + 0.5 && a.y + a.height <= b.y + b.height + 0.5;
  const meet = (a, b) => a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 &&
    a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
  for (const g of document.querySelectorAll('figure svg g[data-skb], figure svg g[data-page], figure svg g[data-dfrag]')) {
    const box = g.querySelector(':scope > rect').getBBox();
    const texts = [...g.querySelectorAll(':scope > text')].map((t) => ({ t: t.textContent, b: t.getBBox() }));
    const who = g.dataset.skb !== undefined ? `skb ${g.dataset.skb}` : g.dataset.page !== undefined ? `page ${g.dataset.page}` : `dfrag ${g.dataset.dfrag}`;
    for (const { t, b } of texts) if (!inside(b, box)) bad.push(`${who}: "${t}" leaves its box`);
  }
  return bad;
}

for (const [width, height] of [[1400, 900], [1024, 768]]) {
  test(`at ${width}x${height}, no text in a box is cut off or overlaps another`, async () => {
    const page = await open(browser);
    await page.setViewportSize({ width, height });
    const options = await page.$$eval('#walkthrough option', (os) => os.map((o) => o.value).filter((v) => v !== ''));
    const bad = new Set();
    const splits = [];
    for (const value of options) {
      await page.selectOption('#walkthrough', value);
      const lefts = await page.$$eval('.diagrams.split figure', (fs) => fs.map((f) => Math.round(f.getBoundingClientRect().left)));
      if (lefts.length === 2) splits.push([value, lefts]);
      const { len } = await position(page);
      for (let k = 0; k <= len; k++) {
        if (k > 0) await page.getByRole('button', { name: 'Next step' }).click();
        for (const b of await page.evaluate(badTexts)) bad.add(`walkthrough ${value} step ${k}: ${b}`);
      }
    }
    assert.deepEqual([...bad].slice(0, 30), [], `${bad.size} problems`);
    // Comparisons at this size: side by side at 1400, stacked at 1024, never shrunk.
    assert.ok(splits.length > 0, 'some walkthrough compares two variants');
    for (const [value, lefts] of splits) assert.equal(lefts[0] === lefts[1], width < 1100, `${value}: panes at x ${lefts}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

// One kernel per lane (issue 36): each lane of rx-skb-cache names one kernel, its era, in
// its caption; an event whose function is linked at another release says why, in the core's
// words (core/src/kernel_fn.rs `At::why`), and one linked at the lane's own names none.
test('rx-skb-cache: one kernel label per lane; a link at another release says why', async () => {
  const CACHE = 'modern+dumazet-2019';
  const page = await open(browser, `#w=${Buffer.from('rx-skb-cache').toString('base64url')}`);
  const versions = (text) => text.match(/\bv\d+\.\d+(-rc\d+)?/g) ?? [];
  const captions = await page.$$eval('.diagrams figure[data-variant] figcaption', (els) => els.map((e) => e.textContent));
  assert.equal(captions.length, 2);
  // (Its words about the variant may name the release again, never another.)
  for (const c of captions) assert.deepEqual([...new Set(versions(c))], ['v6.12'], c);
  const kfn = page.locator('[data-testid=kernel-fn]');
  const moment = async () => {
    await page.locator('[data-testid=moments]').getByRole('button', { name: 'next ▸' }).press('Enter');
    await drawn(page);
    return kfn.textContent();
  };
  // The park (step 2), linked where the cache was merged, says why.
  assert.equal(await moment(), 'In the kernel: sk_eat_skb in include/net/sock.h; ' +
    "linked at v5.2-rc1, the release seed 002's cache was merged for (later ones gate it behind a sysctl)");
  assert.match(await kfn.locator('a').getAttribute('href'), /\/linux\/v5\.2-rc1\/C\/ident\/sk_eat_skb$/);
  // The take (step 3), read where it is unchanged, says why.
  const take = await moment();
  assert.equal((await position(page)).at, 3);
  assert.equal(take, 'In the kernel: tcp_v4_rcv in net/ipv4/tcp_ipv4.c; ' +
    "read in v5.11, where seed 002's take is unchanged since 5.2-rc1");
  await page.screenshot({ path: join(SHOTS, 'kernel-label-why.png') });
  // A function of the lane's own release: no release at all.
  await (await eventItem(page, page.locator(`ol.events[data-variant="${CACHE}"]`), /^queue_rcv /)).click();
  await drawn(page);
  assert.equal(await kfn.textContent(), 'In the kernel: tcp_queue_rcv in net/ipv4/tcp_input.c');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('zoom: buttons and keys zoom in, out, back to 100 % and fit; the zoom outlives a reload', async () => {
  const page = await open(browser);
  const zoom = () => page.getByTestId('zoom').textContent();
  const svgWidth = () => page.$eval('figure svg', (s) => Math.round(s.getBoundingClientRect().width));
  assert.equal(await zoom(), '100 %');
  // At 100 % a drawing unit is a pixel.
  const units = await page.$eval('figure svg', (s) => s.viewBox.baseVal.width);
  assert.equal(await svgWidth(), units);
  await page.getByRole('button', { name: 'Zoom in' }).click();
  assert.equal(await zoom(), '110 %');
  assert.equal(await svgWidth(), Math.floor(units * 1.1));
  await page.locator('body').focus();
  await page.keyboard.press('-');
  await page.keyboard.press('-');
  assert.equal(await zoom(), '90 %');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  assert.equal(await zoom(), '125 %');
  await page.reload();
  await page.waitForSelector('[data-testid=step]');
  assert.equal(await zoom(), '125 %', 'kept for the session');
  await page.locator('body').focus();
  await page.keyboard.press('0');
  assert.equal(await zoom(), 'fit');
  const pane = await page.$eval('figure .svgwrap', (w) => w.clientWidth);
  assert.ok(Math.abs((await svgWidth()) - pane) <= 1, 'fit: the pane\'s width');
  await page.getByRole('button', { name: 'Zoom 100 %' }).click();
  assert.equal(await zoom(), '100 %');
  // Typing in the editor zooms nothing.
  await page.locator('#scenario').press('-');
  assert.equal(await zoom(), '100 %');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('typing is only parsed; the traced run waits for a pause and then gives its verdict', async () => {
  const page = await open(browser);
  const status = page.locator('[data-testid=editor-status]');
  // 5,000 acknowledged writes of 268 bytes at a 64-byte size goal: within every cap, but its
  // trace passes MAX_TRACE_OBJECTS, which only running it can tell.
  const heavy = 'mechanism = "mptcp"\ndrain = true\n[[subflows]]\nmtu = 576\nmss = 64\nmax_window = 64\n' +
    '[[ops]]\nop = "sendmsg"\nbytes = 268\n[[ops]]\nop = "ack"\n'.repeat(5000);
  const type = (text) => page.evaluate((text) => {
    const ta = document.querySelector('#scenario');
    ta.value = text;
    const t = performance.now();
    ta.dispatchEvent(new InputEvent('input', { bubbles: true }));
    return performance.now() - t;
  }, text);
  const ms = await type(heavy);
  assert.equal(await status.textContent(), '✓ parsed: 10000 operation(s); running it…');
  await page.waitForFunction(() => /traced run/.test(document.querySelector('[data-testid=editor-status]').textContent));
  assert.match(await status.textContent(), /a trace of over 250000 events, skbs, frags and pages by ops\[\d+\]/);
  assert.equal(await status.getAttribute('class'), 'error');
  assert.ok(await page.getByRole('button', { name: 'Run this scenario' }).isDisabled());
  // A keystroke within the pause starts the wait again: the text typed last is the one run.
  await type(heavy.replace('[[ops]]', '# a comment\n[[ops]]'));
  await type('mechanism = "sendmsg"\n[[ops]]\nop = "sendmsg"\nbytes = 100\n');
  assert.match(await status.textContent(), /running it/);
  await page.waitForFunction(() => /^✓ valid/.test(document.querySelector('[data-testid=editor-status]').textContent));
  assert.equal(await status.textContent(), '✓ valid: 1 operation(s)');
  console.log(`# parsing 10,000 operations took ${ms.toFixed(0)} ms in the page`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a kernel report opens as a third lane: the kernel\'s skbs beside the model\'s, field by field', async () => {
  const page = await open(browser);
  const report = readFileSync(new URL('../fixtures/kernel-report.json', import.meta.url));
  await page.setInputFiles('[data-testid=kernel-report]', { name: 'report.json', mimeType: 'application/json', buffer: report });
  const lane = page.locator('[data-testid=kernel-lane]');
  await lane.waitFor();
  // sendmsg-small-writes.toml in its own variant, in `modern` (the runner's), then the kernel.
  assert.deepEqual(await page.$$eval('.diagrams figure', (fs) => fs.map((f) => f.dataset.variant)), ['kumar-2010', 'modern', 'kernel']);
  assert.match(await lane.locator('figcaption').textContent(), /^Linux 6\.18\.44-fc-v669 · its own skbs.*verdict agree.*after step 1/);
  // The model's queue after step 1 (300 writes of 256 bytes) beside the kernel's.
  assert.deepEqual(await position(page), { at: 1, len: 4 });
  const cells = await lane.locator('tbody td').evaluateAll((tds) => tds.map((td) => [td.dataset.field, td.className, td.firstChild.textContent]));
  assert.deepEqual(cells, [
    ['len', 'agree', '65160'], ['linear', 'agree', '0'], ['nr_frags', 'agree', '2'], ['truesize', 'shown', '65992'],
    ['len', 'agree', '11640'], ['linear', 'agree', '0'], ['nr_frags', 'agree', '2'], ['truesize', 'shown', '12472'],
  ]);
  await shot(page, 'kernel-lane');
  // A file that is not a report says so and keeps what was shown.
  await page.setInputFiles('[data-testid=kernel-report]', { name: 'x.json', mimeType: 'application/json', buffer: Buffer.from('{}') });
  await page.locator('[data-testid=notice]').waitFor();
  assert.match(await page.locator('[data-testid=notice]').textContent(), /The kernel report did not open: .*report\.mechanism/);
  assert.equal(await lane.count(), 1);
  // Issue 25: 1,000 kernel skbs, each with a field name of its own, are refused by the first
  // name the runner never writes, and the lane shown stays.
  const hostile = JSON.parse(report);
  hostile.kernel_side.skbs = Array.from({ length: 1000 }, (_, i) => ({ [`f${i}`]: 1 }));
  await page.setInputFiles('[data-testid=kernel-report]', { name: 'h.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(hostile)) });
  await page.locator('[data-testid=notice]', { hasText: 'skbs[0].f0' }).waitFor();
  assert.match(await page.locator('[data-testid=notice]').textContent(), /The kernel report did not open: .*report\.kernel_side\.skbs\[0\]\.f0.*not a field the runner writes/);
  assert.equal(await lane.locator('thead th').count(), 5);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a panel pairing patches of different kernels says what the pairing is', async () => {
  const page = await open(browser);
  const value = await page.$$eval('#walkthrough option', (os) =>
    os.find((o) => o.textContent.includes('rx skb cache (Dumazet, 2019)')).value);
  await page.selectOption('#walkthrough', value);
  const about = page.locator('figure[data-variant="modern+dumazet-2019"] [data-testid=about-variant]');
  assert.match(await about.textContent(), /^v6\.12's page_frag_cache, with Dumazet's 2019 per-socket rx skb cache .*; no kernel had both/);
  // Send variants are one patch each: their titles need no note.
  await page.selectOption('#walkthrough', { index: 0 });
  assert.equal(await page.locator('[data-testid=about-variant]').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('event by event, the drawing is the state after that many events: skbs, frags, pages, the linearized clone', async () => {
  // kumar-2010 on a device without scatter-gather: frags, page references and a linearized
  // clone per transmitted skb. The state after each event is replayed here from the native
  // run's events (a send walkthrough queues every skb it allocates).
  const text = 'mechanism = "sendmsg"\nvariant = "kumar-2010"\nsocket = { mss = 1448 }\n' +
    'device = { sg = false, gso = false, csum = true, mtu = 1500, drain = true }\n' +
    'ops = [{ op = "sendmsg", bytes = 4096 }, { op = "ack" }, { op = "close" }]\n';
  const steps = runNative(text, 'kumar-2010').steps;
  const page = await open(browser, permalink(text, 0));
  await page.locator('body').focus();
  const skbs = new Map(); // id -> { queue, frags }
  const pages = new Set();
  const clones = new Map(); // skb -> head_bytes
  let seen = 0;
  let first = true;
  for (let n = 1; n <= steps.length; n++) {
    for (const [k, e] of steps[n - 1].events.entries()) {
      // Past a step's last event, ↓ first rests at the step's end.
      if (k === 0 && !first) await page.keyboard.press('ArrowDown');
      first = false;
      await page.keyboard.press('ArrowDown');
      const what = `step ${n} event ${k + 1} (${e.ev})`;
      await shows(page, n, k + 1);
      if (e.ev === 'alloc_skb') skbs.set(e.skb, { queue: e.queue, frags: 0 });
      if (e.ev === 'free_skb') skbs.delete(e.skb);
      if (e.ev === 'new_frag') skbs.get(e.skb).frags += 1;
      if (e.ev === 'alloc_page') pages.add(e.page);
      if (e.ev === 'free_page') pages.delete(e.page);
      if (e.ev === 'linearize') clones.set(e.skb, e.head_bytes);
      if (e.ev === 'xmit' && e.linearized) clones.delete(e.skb);
      const drawn = await page.$$eval('figure:first-of-type g[data-skb]', (gs) => gs.map((g) => ({
        id: Number(g.dataset.skb),
        frags: g.querySelectorAll('rect.fr').length,
        text: [...g.querySelectorAll('text')].map((t) => t.textContent).join(' | '),
      })));
      assert.deepEqual(drawn.map((d) => d.id).sort(), [...skbs.keys()].sort(), `${what}: skbs drawn`);
      for (const d of drawn) {
        assert.equal(d.frags, skbs.get(d.id).frags, `${what}: skb ${d.id}'s frag slots`);
        const clone = clones.get(d.id);
        assert.equal(d.text.includes('linearized clone'), clone !== undefined, `${what}: skb ${d.id} clone`);
        if (clone !== undefined) assert.ok(d.text.includes(`linearized clone: head ${clone} B`), d.text);
      }
      seen += clones.size;
      assert.match(await page.locator('figure:first-of-type svg text.q', { hasText: 'write_queue' }).textContent(),
        new RegExp(`^write_queue \\(${skbs.size} skbs?\\)$`), what);
      assert.equal(await livePages(page), pages.size, what);
      assert.deepEqual((await drawnIds(page)).pages, [...pages].sort(), `${what}: pages drawn`);
    }
  }
  assert.ok(seen > 0, 'a linearized clone was drawn');
  assert.deepEqual(page.errors, []);
  await page.close();
});
