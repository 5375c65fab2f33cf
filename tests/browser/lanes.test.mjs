// Both lanes, event by event (issue 22): either lane steps and is selected by key or click,
// the patch's lane leads, lockstep stands both lanes at the same input (issue 36: a frame, the
// write's bytes; compared only there), key moments in both lanes, a step's end is a stop, long steps
// are windowed and filtered (a filtered ↑/↓ says when it leaves the step), the permalink keeps
// every lane's event; and the controls that act as they say: the stepper that never moves, the
// kernel lane's caption, "compare with", the score kept until the step is shown, a
// challenge's held conditions in green.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drawn, eventItem, launch, listed, open, position, SHOTS } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Lets the app finish rendering: Yew yields to the browser (setTimeout) during a long render,
 * so a key's effect may land after its handler returned. */
const settle = async (page) => {
  await page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => setTimeout(r, 0)), 0)));
  await drawn(page);
};
/** Presses `key` and waits for its render. */
async function press(page, key) {
  await page.keyboard.press(key);
  await settle(page);
}
/** Lists only events of `kind` in lane `lane` (each option is a kind, valued by its first event). */
async function only(page, lane, kind) {
  const select = `select[data-filter="${lane}"]`;
  const value = await page.$eval(select, (s, kind) => [...s.options].find((o) => o.textContent.startsWith(`${kind} `)).value, kind);
  await page.selectOption(select, value);
  await settle(page);
}
const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const b64 = (s) => Buffer.from(s).toString('base64url');
const REUSE = `#w=${b64('rx-page-reuse')}`;
const [BEFORE, AFTER] = ['pre-2012+none', 'duyck-2012+none'];

/** Lane `v`'s list, its selected event (1-based, or null) and that event's text. */
const list = (page, v) => page.locator(`ol.events[data-variant="${v}"]`);
async function selected(page, v) {
  const li = list(page, v).locator('li.sel');
  if (await li.count() === 0) return null;
  return { k: Number(await li.getAttribute('data-k')), text: await li.textContent() };
}
/** The event each figure is drawn at (null: the whole step), from its label. */
const drawnAt = (page) => page.$$eval('.diagrams figure[data-variant] svg', (svgs) =>
  svgs.map((s) => Number(s.getAttribute('aria-label').match(/event (\d+)$/)?.[1]) || null));

test('either lane steps by event: the patch\'s lane leads; a click or its button (by key too) hands the keys over', async () => {
  const page = await open(browser, `${REUSE}&step=1`);
  await page.locator('body').focus();
  await press(page, 'ArrowDown');
  // Duyck's lane (the core's patched one) leads: its first event, drawn on the right.
  assert.deepEqual(await selected(page, AFTER), { k: 1, text: await list(page, AFTER).locator('li[data-k]').first().textContent() });
  assert.match(await page.locator(`section.lane.leads ol`).getAttribute('data-variant'), /duyck/);
  assert.equal((await drawnAt(page))[1], 1);
  // A click on the left lane's third event: it leads now, and ↓ moves it.
  await list(page, BEFORE).locator('li[data-k="3"]').click();
  await settle(page);
  await page.locator('body').focus();
  await press(page, 'ArrowDown');
  assert.equal((await selected(page, BEFORE)).k, 4);
  assert.equal(await page.getAttribute('[data-testid=event]', 'data-event'), '4');
  assert.equal((await drawnAt(page))[0], 4);
  // The right lane's "Step this lane" button (a keyboard reaches it too) gives the keys back.
  await page.locator('section[data-lane="1"]').getByRole('button', { name: 'Step this lane' }).press('Enter');
  await settle(page);
  const right = (await selected(page, AFTER)).k;
  await press(page, 'ArrowDown');
  assert.equal((await selected(page, AFTER)).k, right + 1);
  await page.getByRole('button', { name: 'Step this lane' }).click();
  await settle(page);
  assert.match(await page.locator('section.lane.leads ol').getAttribute('data-variant'), /pre-2012/);
  // The link keeps the lead and both lanes' events (0-based), and a new tab shows them again.
  const [l, r] = [(await selected(page, BEFORE)).k, (await selected(page, AFTER)).k];
  await page.waitForURL(new RegExp(`&lead=0&step=1&event=${l - 1}&event1=${r - 1}$`));
  const again = await open(browser, page.url().slice(page.url().indexOf('#')));
  assert.deepEqual([(await selected(again, BEFORE)).k, (await selected(again, AFTER)).k], [l, r]);
  assert.deepEqual(await drawnAt(again), [l, r]);
  assert.match(await again.locator('section.lane.leads ol').getAttribute('data-variant'), /pre-2012/);
  await again.close();
  // A link written before the lanes (the left lane's event alone) still opens at it, the
  // right lane in lockstep beside it: the same get_page, before the first frame.
  const old = await open(browser, `${REUSE}&step=1&event=2`);
  assert.equal((await selected(old, BEFORE)).k, 3);
  assert.deepEqual(await selected(old, AFTER), { k: 3, text: 'get_page page=0 count=2' });
  assert.match(await old.locator('section.lane.leads ol').getAttribute('data-variant'), /pre-2012/);
  await old.close();
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('lockstep: the other lane stands at the same input, and says when it makes no such event there', async () => {
  const page = await open(browser, `${REUSE}&step=2`);
  // Duyck's own event: the kernel before has no reuse_page to show beside it.
  await only(page, 1, 'reuse_page');
  await settle(page);
  assert.ok(await list(page, AFTER).locator('li[data-k]').count() > 1);
  for (const t of await list(page, AFTER).locator('li[data-k]').allTextContents()) assert.match(t, /^reuse_page /);
  await page.locator('body').focus();
  await press(page, 'ArrowDown');
  assert.match((await selected(page, AFTER)).text, /^reuse_page /);
  assert.match(await page.locator(`section[data-lane="0"] [data-testid=no-counterpart]`).textContent(),
    /^This kernel does no reuse_page here \(nothing taken in yet\): shown at the same point of the input\.$/);
  await shot(page, 'lanes-no-counterpart');
  // frag_alloc, before and after side by side: the n-th of each lane.
  await only(page, 1, 'frag_alloc');
  await settle(page);
  for (let n = 1; n <= 3; n++) {
    await press(page, 'ArrowDown');
    // (n counts the presses; the lanes agree on which frag_alloc, counted in each.)
    const [a, b] = [await selected(page, AFTER), await selected(page, BEFORE)];
    assert.match(a.text, /^frag_alloc /);
    assert.match(b.text, /^frag_alloc /);
    const nth = (v, k) => list(page, v).evaluate((ol, k) =>
      [...ol.querySelectorAll('li[data-k]')].filter((li) => Number(li.dataset.k) <= k && li.textContent.startsWith('frag_alloc ')).length, k);
    assert.equal(await nth(BEFORE, b.k), await nth(AFTER, a.k), `the same frag_alloc, press ${n}`);
    assert.deepEqual(await drawnAt(page), [b.k, a.k]);
  }
  assert.equal(await page.locator('[data-testid=no-counterpart]').count(), 0);
  await shot(page, 'lanes-lockstep');
  // Lockstep off: the other lane stays where it is.
  const left = (await selected(page, BEFORE)).k;
  await page.getByLabel(/Lockstep/).uncheck();
  await settle(page);
  await page.locator('body').focus();
  await press(page, 'ArrowDown');
  assert.equal((await selected(page, BEFORE)).k, left);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** The text of each figure's queue label that starts with `name`, lane by lane. */
const queueLabels = (page, name) => page.$$eval('.diagrams figure[data-variant] svg', (svgs, name) =>
  svgs.map((s) => [...s.querySelectorAll('text.q')].find((t) => t.textContent.startsWith(name))?.textContent ?? null), name);

test('lockstep by input (issue 36): rx-page-reuse step 1 at reuse_page, from a click and by ↓/↑, either lane leading', async () => {
  const page = await open(browser, `${REUSE}&step=1`);
  // A click on Duyck's reuse_page (snapshots/rx-page-reuse.snap: before the sixth head).
  await (await eventItem(page, list(page, AFTER), /^reuse_page /)).click();
  await settle(page);
  const left = await selected(page, BEFORE);
  // The kernel before stands after the same five frames, past its fifth frame's merge: not
  // at event 1 with nothing drawn, nor at the step's end.
  assert.ok(left && left.k > 12, `the kernel before after five frames, at ${left?.k}`);
  assert.deepEqual(await drawnAt(page), [left.k, (await selected(page, AFTER)).k]);
  assert.match(await page.locator('section[data-lane="0"] [data-testid=no-counterpart]').textContent(),
    /^This kernel does no reuse_page here \(5 frames in\): shown at the same point of the input\.$/);
  const skbs = (v) => page.locator(`figure[data-variant="${v}"] [data-skb]`).count();
  assert.ok(await skbs(BEFORE) > 0, 'the kernel before draws its skb beside the patched one');
  assert.deepEqual(await queueLabels(page, 'gro cpu0'), ['gro cpu0 (1 skb)', 'gro cpu0 (1 skb)']);
  await shot(page, 'lockstep-input-reuse');
  // ↓: the sixth head's get_page in both kernels; ↑: back.
  await page.locator('body').focus();
  await press(page, 'ArrowDown');
  assert.match((await selected(page, AFTER)).text, /^get_page /);
  assert.match((await selected(page, BEFORE)).text, /^get_page /);
  assert.equal(await page.locator('[data-testid=no-counterpart]').count(), 0);
  await press(page, 'ArrowUp');
  assert.equal((await selected(page, BEFORE)).k, left.k);
  // The kernel before leading, from a click: its sixth frame beside Duyck's sixth frame.
  await (await eventItem(page, list(page, BEFORE), /^rx_frame skb=5 /)).click();
  await settle(page);
  assert.match((await selected(page, AFTER)).text, /^rx_frame skb=5 /);
  assert.match(await page.locator('section.lane.leads ol').getAttribute('data-variant'), /pre-2012/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('lockstep by input (issue 36): send-sg-nogso step 2 event 3 compares 3 skbs with 3, from a link either way; apart, nothing is compared', async () => {
  const [OLD, NEW] = ['pre-2010', 'kumar-2010'];
  const SG = `#w=${b64('send-sg-nogso')}`;
  // kumar-2010's event 3 copies the write's first 248 bytes to a page; pre-2010 copies the
  // same 248 bytes to the linear area, its event 1 (snapshots/send-sg-nogso.snap).
  const page = await open(browser, `${SG}&lead=1&step=2&event1=2`);
  assert.equal((await selected(page, NEW)).k, 3);
  assert.match((await selected(page, OLD)).text, /^copy_to_linear skb=2 bytes=248/);
  assert.deepEqual(await queueLabels(page, 'write_queue'), ['write_queue (3 skbs)', 'write_queue (3 skbs)']);
  // At the same input the lanes are compared: skb 2's 248 bytes lie in a page on one side.
  assert.ok(await page.locator('.diagrams svg rect.mk.dif').count() > 0);
  await shot(page, 'lockstep-input-sendsg');
  const back = await open(browser, `${SG}&lead=0&step=2&event=0`);
  assert.equal((await selected(back, OLD)).k, 1);
  assert.equal((await selected(back, NEW)).k, 3);
  assert.deepEqual(back.errors, []);
  await back.close();
  // Lockstep off, kumar-2010 on to its next copy (1448 bytes more): the lanes stand at
  // different inputs, so nothing is outlined as differing, and the lane says why.
  await page.getByLabel(/Lockstep/).uncheck();
  await settle(page);
  await page.locator('body').focus();
  for (let i = 0; i < 5; i++) await press(page, 'ArrowDown');
  assert.match((await selected(page, NEW)).text, /^copy_to_page skb=3 /);
  assert.equal((await selected(page, OLD)).k, 1);
  assert.match(await page.locator('[data-testid=not-compared]').textContent(), /different points of the input/);
  assert.equal(await page.locator('.diagrams svg rect.mk.dif').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('key moments (issue 36): a keyboard goes to the patch\'s own events in both lanes; rx_cache_take draws the skb taken, then freed, readable', async () => {
  const [NONE, CACHE] = ['modern+none', 'modern+dumazet-2019'];
  const page = await open(browser, `#w=${b64('rx-skb-cache')}`);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  assert.match(await page.locator('[data-testid=moments]').textContent(), /^Key moments \(\d+\)/);
  const next = page.locator('[data-testid=moments]').getByRole('button', { name: 'next ▸' });
  // Step 2's rx_cache_park, then step 3's rx_cache_take (snapshots/rx-skb-cache.snap).
  await next.press('Enter');
  await settle(page);
  assert.equal((await position(page)).at, 2);
  assert.match((await selected(page, CACHE)).text, /^rx_cache_park skb=0/);
  await next.press('Enter');
  await settle(page);
  assert.equal((await position(page)).at, 3);
  assert.match((await selected(page, CACHE)).text, /^rx_cache_take skb=0 /);
  // The kernel without the cache stands at the same 45 frames, and says it takes nothing.
  assert.ok(await selected(page, NONE));
  assert.match(await page.locator('section[data-lane="0"] [data-testid=no-counterpart]').textContent(),
    /^This kernel does no rx_cache_take here \(45 frames in\)/);
  // The skb taken out of the cache: drawn on no list until it is freed.
  const fig = page.locator(`figure[data-variant="${CACHE}"]`);
  // (Beside skb 45, which GRO flushed and tcp_v4_rcv has not queued yet.)
  assert.equal(await fig.locator('svg text.q', { hasText: 'on no list' }).textContent(), 'on no list, for now (2 skbs)');
  assert.equal(await fig.locator('[data-skb="0"]').count(), 1);
  assert.equal(await fig.locator('[data-skb="45"]').count(), 1);
  await shot(page, 'moment-rx-cache-take');
  // Its free, at the step's end: drawn once more, dashed and faded but readable.
  await (await eventItem(page, list(page, CACHE), /^free_skb skb=0 /)).click();
  await settle(page);
  const gone = fig.locator('g[data-gone-skb="0"]');
  assert.equal(await gone.locator('text').first().textContent(), 'skb 0 · freed on cpu0');
  assert.ok(Number(await gone.evaluate((g) => getComputedStyle(g).opacity)) >= 0.7);
  assert.notEqual(await gone.locator('rect.box').evaluate((r) => getComputedStyle(r).strokeDasharray), 'none');
  await shot(page, 'moment-rx-cache-freed');
  // Back a moment: the take again.
  await page.locator('[data-testid=moments]').getByRole('button', { name: '◂ previous' }).press('Enter');
  await settle(page);
  assert.match((await selected(page, CACHE)).text, /^rx_cache_take skb=0 /);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a step\'s end is a stop: ↓ rests on it, says what comes next, and only the next ↓ moves on', async () => {
  const page = await open(browser, `${REUSE}&step=1`);
  const n = await listed(page, `ol.events[data-variant="${AFTER}"]`);
  await page.locator('body').focus();
  for (let k = 1; k <= n; k++) await press(page, 'ArrowDown');
  assert.equal((await selected(page, AFTER)).k, n);
  assert.equal(await page.getByTestId('step-end').count(), 0);
  await press(page, 'ArrowDown');
  assert.equal((await position(page)).at, 1);
  assert.equal(await page.getByTestId('step-end').textContent(), 'End of step 1: ↓ goes on to step 2');
  assert.equal(await page.getAttribute('[data-testid=event]', 'data-event'), String(n));
  await shot(page, 'lanes-step-end');
  await press(page, 'ArrowDown');
  assert.equal((await position(page)).at, 2);
  assert.equal((await selected(page, AFTER)).k, 1);
  // ↑ goes back over the same stop.
  await press(page, 'ArrowUp');
  assert.equal((await position(page)).at, 1);
  assert.equal((await selected(page, AFTER)).k, n);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a step of over a thousand events: a window of the list, kept in view, a filter by kind that ↑/↓ follow', async () => {
  const text = 'mechanism = "sendmsg"\n[[ops]]\nop = "sendmsg"\nbytes = 256\ncount = 300\n';
  const page = await open(browser, `#s=${b64(text)}&step=1`);
  const ol = page.locator('ol.events');
  const items = () => ol.locator('li[data-k]:not(.more)');
  assert.equal(await listed(page), 100);
  const later = await page.getByTestId('more-events').textContent();
  const total = Number(later.match(/▼ (\d+) later/)[1]) + 100;
  assert.ok(total > 1000, later);
  // ↓ past the window's last event shows the next window, the selection in view.
  await page.locator('body').focus();
  for (let k = 1; k <= 101; k++) await press(page, 'ArrowDown');
  assert.equal(await page.getAttribute('[data-testid=event]', 'data-event'), '101');
  assert.equal(await items().first().getAttribute('data-k'), '101');
  assert.match(await ol.locator('li.more').first().textContent(), /^▲ 100 earlier events$/);
  // The last window, reached by its item, then kept in view as the pane scrolls.
  await page.getByTestId('more-events').click();
  await settle(page);
  assert.equal(await page.getAttribute('[data-testid=event]', 'data-event'), '201');
  const inView = () => page.evaluate(() => {
    const li = document.querySelector('ol.events li[aria-current]');
    const pane = document.querySelector('.narration').getBoundingClientRect();
    const r = li.getBoundingClientRect();
    return r.top >= Math.max(pane.top, 0) && r.bottom <= Math.min(pane.bottom, innerHeight);
  });
  await page.locator('body').focus();
  for (let k = 0; k < 60; k++) await press(page, 'ArrowDown');
  assert.equal(await inView(), true, 'the selected event is in view');
  // Next and previous of this kind: list only the selected event's kind, then ↓ and ↑.
  const kind = (await ol.locator('li[aria-current]').textContent()).split(' ')[0];
  const at = async () => Number(await page.getAttribute('[data-testid=event]', 'data-event'));
  const k0 = await at();
  await only(page, 0, kind);
  await page.locator('body').focus();
  await press(page, 'ArrowDown');
  const k1 = await at();
  assert.ok(k1 > k0 + 1, `${kind} after event ${k0}: ${k1}`);
  assert.equal((await ol.locator('li[aria-current]').textContent()).split(' ')[0], kind);
  assert.equal(await inView(), true);
  await press(page, 'ArrowUp');
  assert.equal(await at(), k0);
  // The filter lists one kind, numbered as in the step.
  await only(page, 0, 'alloc_skb');
  await settle(page);
  const shown = await items().evaluateAll((lis) => lis.map((li) => [li.value, li.textContent.split(' ')[0]]));
  assert.ok(shown.length > 1 && shown.every(([, k]) => k === 'alloc_skb'), JSON.stringify(shown.slice(0, 3)));
  assert.ok(shown[1][0] - shown[0][0] > 1, 'each keeps its number in the step');
  const ms = await page.evaluate(() => window.__skblab.renderMs);
  console.log(`# a move in a ${total}-event step rendered in ${ms.toFixed(1)} ms`);
  await shot(page, 'lanes-long-step');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('with a filter on, ↑/↓ say when they leave the step for want of an event of its kind (issue 36)', async () => {
  // Step 1 allocates many skbs, steps 2 and 3 append to the last one, step 4 allocates again.
  const op = (bytes) => `[[ops]]\nop = "sendmsg"\nbytes = ${bytes}\n`;
  const text = `mechanism = "sendmsg"\n[device]\ngso = false\n[socket]\nmss = 1448\n${op(30000)}${op(100)}${op(100)}${op(3000)}`;
  const page = await open(browser, `#s=${b64(text)}&step=1`);
  await only(page, 0, 'alloc_skb');
  const crossed = page.getByTestId('crossed');
  await page.locator('body').focus();
  // To step 1's last alloc_skb, its end, then on: step 4's first, past two steps without one.
  await press(page, 'ArrowUp');
  await press(page, 'ArrowDown');
  assert.equal(await crossed.count(), 0);
  assert.equal((await position(page)).at, 1);
  await press(page, 'ArrowDown');
  assert.equal((await position(page)).at, 4);
  assert.equal(await crossed.textContent(), 'No more alloc_skb events in step 1, nor in steps 2–3: now at step 4.');
  await press(page, 'ArrowUp');
  assert.equal((await position(page)).at, 1);
  assert.equal(await crossed.textContent(), 'No earlier alloc_skb events in step 4, nor in steps 2–3: now at step 1.');
  await shot(page, 'lanes-filter-crossed');
  // A move within the step says nothing.
  await press(page, 'ArrowUp');
  assert.equal(await crossed.count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the stepper never moves: predict and the scrubber stay put, the operation keeps one line', async () => {
  const page = await open(browser);
  await page.setViewportSize({ width: 1024, height: 768 });
  const places = new Set();
  const ops = new Set();
  const measure = async () => {
    ops.add(await page.getByTestId('op').textContent());
    places.add(JSON.stringify(await page.evaluate(() => {
      // Relative to the bar (sticky at the top, while the page under it may scroll).
      const bar = document.querySelector('.controls').getBoundingClientRect();
      const r = (sel) => { const b = document.querySelector(sel).getBoundingClientRect(); return [b.left, b.top - bar.top, b.width]; };
      const op = document.querySelector('[data-testid=op]');
      return { predict: r('[data-testid=predict]'), scrubber: r('.scrubber'), bar: document.querySelector('.controls').offsetHeight,
        oneLine: op.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(op).lineHeight) };
    })));
  };
  for (const w of ['send-nosg', 'mptcp-max-size', 'rx-page-reuse']) {
    await page.goto(`${process.env.SKBLAB_URL}#w=${b64(w)}&step=0`);
    await page.waitForSelector('[data-testid=step]');
    const { len } = await position(page);
    await page.locator('body').focus();
    for (let k = 0; k < len; k++) {
      await press(page, 'ArrowRight');
      await measure();
      await press(page, 'ArrowDown');
      await measure();
    }
    await press(page, ' ');
    await measure();
    await press(page, ' ');
  }
  assert.ok(new Set([...ops].map((o) => o.length)).size > 3, `operations of many lengths: ${[...ops]}`);
  assert.deepEqual([...places].map(JSON.parse), [JSON.parse([...places][0])]);
  assert.equal(JSON.parse([...places][0]).oneLine, true);
  await page.screenshot({ path: join(SHOTS, 'lanes-stepper.png') });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the kernel lane says which lane its model values come from, and spans both', async () => {
  const page = await open(browser);
  const report = readFileSync(new URL('../fixtures/kernel-report.json', import.meta.url));
  await page.setInputFiles('[data-testid=kernel-report]', { name: 'report.json', mimeType: 'application/json', buffer: report });
  await page.getByTestId('kernel-lane').waitFor();
  assert.match(await page.locator('[data-testid=kernel-lane] .about').textContent(),
    /^the model's values from its modern lane, after step 1 \(the ops the kernel ran\)/);
  const box = (sel) => page.locator(sel).evaluate((e) => { const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; });
  const [left, right, kernel] = [await box('figure[data-variant="kumar-2010"]'), await box('figure[data-variant="modern"]'), await box('[data-testid=kernel-lane]')];
  assert.ok(left[1] <= right[0], 'the model lanes side by side');
  assert.deepEqual(kernel, [left[0], right[1]], 'under both model lanes, not one');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('"compare with" applies as soon as it is chosen; choosing the compared variant swaps the two', async () => {
  const page = await open(browser);
  const lanes = () => page.$$eval('.diagrams figure[data-variant]', (fs) => fs.map((f) => f.dataset.variant));
  const options = () => page.$$eval('select[aria-label="compare with"] option', (os) => os.map((o) => o.value));
  assert.deepEqual(await lanes(), ['kumar-2010']);
  assert.ok(!(await options()).includes('kumar-2010'), 'a variant is not offered to compare with itself');
  await page.selectOption('select[aria-label="compare with"]', 'modern');
  await settle(page);
  await page.waitForFunction(() => document.querySelectorAll('.diagrams figure[data-variant]').length === 2);
  assert.deepEqual(await lanes(), ['kumar-2010', 'modern']);
  await page.selectOption('select[aria-label=variant]', 'modern');
  await settle(page);
  await page.waitForFunction(() => document.querySelector('select[aria-label="compare with"]').value === 'kumar-2010');
  await page.waitForFunction(() => /"variant": ?"modern"|variant = "modern"/.test(document.querySelector('#scenario').value));
  await page.waitForFunction(() => location.hash.includes('&cmp=' + btoa('kumar-2010').replace(/=+$/, '')));
  // Before (the older kernel) stays on the left, whichever variant is the scenario's own (issue 36).
  assert.deepEqual(await lanes(), ['kumar-2010', 'modern']);
  assert.equal(await page.inputValue('select[aria-label="compare with"]'), 'kumar-2010');
  assert.ok(!(await options()).includes('modern'));
  await shot(page, 'lanes-compare-with');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('predict: the picker\'s score changes only once the step is shown', async () => {
  // rx-skb-cache asks two questions before step 2 (see quiz.test.mjs).
  const page = await open(browser, `#w=${b64('rx-skb-cache')}`);
  const option = () => page.locator('#walkthrough option:checked').textContent();
  const was = await option();
  assert.doesNotMatch(was, /right/);
  await page.getByLabel('Predict').check();
  await page.getByRole('button', { name: 'Next step' }).click();
  await settle(page);
  await page.getByRole('button', { name: 'Next step' }).click();
  await settle(page);
  await page.getByRole('button', { name: "b) CPU 1, the reader's" }).click();
  await settle(page);
  // The first answer is right, but the step is still hidden: the score tells nothing yet.
  assert.equal(await page.getByTestId('quiz').getAttribute('data-kind'), 'Number');
  assert.equal(await option(), was);
  await page.getByLabel('Your answer (a whole number)').fill('0');
  await press(page, 'Enter');
  assert.equal((await position(page)).at, 2);
  assert.match(await option(), / · 1\/2 right$/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** WCAG's contrast ratio of two `rgb(...)` colours. */
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('a challenge check shows the conditions that held in green, with a mark, the others in red', async () => {
  const page = await open(browser);
  const item = page.locator('li[data-challenge=no-linear-before-2010]');
  await item.getByRole('button', { name: /^Open challenge/ }).click();
  await settle(page);
  await page.getByRole('button', { name: "Check the challenge's goal" }).click();
  await settle(page);
  const goal = item.locator('[data-testid=goal]');
  assert.equal(await goal.getAttribute('data-met'), 'false');
  const lines = await goal.locator('li').evaluateAll((lis) => lis.map((li) => {
    let bg = 'rgba(0, 0, 0, 0)';
    for (let e = li; e && /rgba\(0, 0, 0, 0\)|transparent/.test(bg); e = e.parentElement) bg = getComputedStyle(e).backgroundColor;
    return { cls: li.className, text: li.textContent, color: getComputedStyle(li).color, bg };
  }));
  const held = lines.filter((l) => l.cls === 'held');
  const failed = lines.filter((l) => l.cls === 'failed');
  assert.ok(held.length > 0 && failed.length > 0, JSON.stringify(lines));
  for (const l of held) {
    assert.match(l.text, /^✓ /);
    const [r, g, b] = l.color.match(/\d+/g).map(Number);
    assert.ok(g > r && g > b, `green: ${l.color}`);
    assert.ok(contrast(l.color, l.bg) >= 4.5, `${l.color} on ${l.bg}: ${contrast(l.color, l.bg).toFixed(2)}`);
  }
  for (const l of failed) {
    assert.match(l.text, /^✗ /);
    const [r, g, b] = l.color.match(/\d+/g).map(Number);
    assert.ok(r > g && r > b, `red: ${l.color}`);
  }
  await shot(page, 'lanes-challenge-held');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('where each skb and page was freed: each lane names the CPU and kernel function; a free fades its skb or page, "freed on cpuN"', async () => {
  // rx-skb-cache (snapshots/rx-skb-cache.snap): recvmsg on CPU 1 frees the 64 KiB packet
  // before the patch; after it, the next burst's tcp_v4_rcv frees the parked one on CPU 0.
  const [NONE, CACHE] = ['modern+none', 'modern+dumazet-2019'];
  const freed = (page, v) => page.locator(`figure[data-variant="${v}"] [data-testid=freed] li`).allTextContents();
  const page = await open(browser, `#w=${b64('rx-skb-cache')}&step=2`);
  assert.deepEqual(await freed(page, NONE), ['pages 0, 1 freed on cpu1 by __folio_put', 'skbs 0, 18, 36 freed on cpu1 by __kfree_skb']);
  assert.deepEqual(await freed(page, CACHE), []);
  await page.getByRole('button', { name: 'Next step' }).click();
  await settle(page);
  assert.deepEqual(await freed(page, NONE), ['skbs 46-62, 64-80, 82-89 freed on cpu0 by __kfree_skb']);
  assert.deepEqual(await freed(page, CACHE), ['skbs 0, 18, 36, 46-62, 64-80, 82-89 freed on cpu0 by __kfree_skb', 'pages 0, 1 freed on cpu0 by __folio_put']);
  await shot(page, 'lanes-freed');
  // Back to step 2, before the patch, at recvmsg's free of skb 0: drawn once more, fading,
  // named by the CPU that freed it, no longer counted on its queue; the list says what the
  // step has freed so far.
  await page.getByRole('button', { name: 'Previous step' }).click();
  await settle(page);
  await (await eventItem(page, list(page, NONE), /^free_skb skb=0 /)).click();
  await settle(page);
  const fig = page.locator(`figure[data-variant="${NONE}"]`);
  assert.equal(await fig.locator('g[data-gone-skb="0"] text').first().textContent(), 'skb 0 · freed on cpu1');
  assert.equal(await fig.locator('[data-skb="0"]').count(), 0);
  assert.equal(await fig.locator('svg text.q', { hasText: 'sk_receive_queue' }).textContent(), 'sk_receive_queue (0 skbs)');
  assert.deepEqual(await freed(page, NONE), ['pages 0, 1 freed on cpu1 by __folio_put', 'skbs 0, 18, 36 freed on cpu1 by __kfree_skb']);
  // The free of page 0, earlier in the step: the page fades, "freed on cpu1".
  await (await eventItem(page, list(page, NONE), /^free_page page=0 /)).click();
  await settle(page);
  assert.match(await fig.locator('g[data-gone="0"]').textContent(), /freed on cpu1 · held \d+\/\d+/);
  assert.deepEqual(await freed(page, NONE), ['page 0 freed on cpu1 by __folio_put']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('send-nosg side by side: the linearized copy is drawn on its skb in the lane that makes one, and the other says it has none', async () => {
  const [OLD, NEW] = ['pre-2010', 'kumar-2010'];
  const page = await open(browser, `#w=${b64('send-nosg')}&step=1`);
  const clones = (v) => page.locator(`figure[data-variant="${v}"] svg text`, { hasText: 'linearized clone' }).allTextContents();
  // The step's state holds none: the driver freed each copy once sent.
  assert.deepEqual([await clones(OLD), await clones(NEW)], [[], []]);
  await list(page, NEW).locator('li[data-k]', { hasText: /^linearize skb=0 / }).click();
  await settle(page);
  assert.match((await selected(page, NEW)).text, /^linearize skb=0 head_bytes=2416 copied=1448/);
  assert.deepEqual(await clones(NEW), ['linearized clone: head 2416 B']);
  assert.deepEqual(await clones(OLD), []);
  // In lockstep the kernel before the patch has no linearize to show beside it.
  await page.getByLabel(/Lockstep/).check();
  await settle(page);
  await page.locator('body').focus();
  await only(page, 1, 'linearize');
  await press(page, 'ArrowDown');
  assert.match((await selected(page, NEW)).text, /^linearize skb=1 /);
  assert.match(await page.locator('section[data-lane="0"] [data-testid=no-counterpart]').textContent(), /^This kernel does no linearize here/);
  assert.deepEqual(await clones(NEW), ['linearized clone: head 2416 B']);
  await shot(page, 'lanes-linearized');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a size-goal mark on each send skb: MPTCP before the fix stops at half its goal, after it fills it', async () => {
  // mptcp-max-size step 4 (snapshots/mptcp-max-size.snap): pre-2020's skb 0 holds 32768 of
  // the subflow's size_goal 65459, abeni-2020's all 65459; the goal comes from the core's
  // alloc_skb event.
  const page = await open(browser, `#w=${b64('mptcp-max-size')}&step=4`);
  const bar = (v) => page.locator(`figure[data-variant="${v}"] g[data-skb="0"] g.goalbar`);
  const widths = (v) => bar(v).evaluate((g) => ['gtrack', 'gfill'].map((c) => Number(g.querySelector(`rect.${c}`).getAttribute('width'))));
  assert.equal(await bar('pre-2020').locator('title').textContent(), 'len 32768 of size_goal 65459');
  assert.equal(await bar('abeni-2020').locator('title').textContent(), 'len 65459 of size_goal 65459');
  const [[track, half], [track2, full]] = [await widths('pre-2020'), await widths('abeni-2020')];
  assert.equal(full, track2, 'the fixed skb reaches its goal');
  assert.ok(Math.abs(half - track / 2) <= 1, `half the bar: ${half} of ${track}`);
  await shot(page, 'lanes-size-goal');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('seed 001\'s kernel report draws the frag cache\'s pages, and the model lane beside it keeps its pages column', async () => {
  const page = await open(browser);
  // Written by `skblab kernel scenarios/rx-napi-frags-prompt.toml --out` on this machine.
  const report = readFileSync(new URL('../fixtures/kernel-report-napi-frags.json', import.meta.url));
  await page.setInputFiles('[data-testid=kernel-report]', { name: 'report.json', mimeType: 'application/json', buffer: report });
  const lane = page.getByTestId('kernel-lane');
  await lane.waitFor();
  assert.match(await lane.locator('figcaption').textContent(), /its own frag cache's pages.*verdict agree/);
  assert.equal(await lane.getByTestId('kernel-skbs').count(), 0, 'no empty skb table');
  // One page, order 3 on CPU 0, its 100 fragments, kept by the cache: each field agrees.
  const cells = await lane.locator('[data-testid=kernel-pages] tbody td').evaluateAll((tds) =>
    tds.map((td) => [td.dataset.field, td.className, td.firstChild.textContent]));
  assert.deepEqual(cells, [['order', 'agree', '3'], ['cpu', 'agree', '0'], ['fragments', 'agree', '100'], ['freed', 'agree', '0']]);
  const totals = await lane.locator('.goal').allTextContents();
  assert.deepEqual(totals.map((t) => t.split(' ')[0]), ['fragments', 'frag_cache_pages', 'page_reuses', 'page_frees']);
  assert.match(totals[2], /^page_reuses 4model 4$/);
  // The one model lane keeps the row's width (not half of it), so its pages are not cut off.
  const model = page.locator('figure[data-variant="modern+defer-free"]');
  const box = (l) => l.evaluate((e) => { const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; });
  assert.deepEqual(await box(model), await box(lane));
  const wrap = model.locator('.svgwrap');
  assert.ok(await wrap.evaluate((w) => w.scrollWidth <= w.clientWidth), 'the model lane scrolls no column out of view');
  await shot(page, 'kernel-lane-pages');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a report whose verdict, rows or model side its values deny is refused with a notice naming the field', async () => {
  const page = await open(browser);
  const text = readFileSync(new URL('../fixtures/kernel-report-napi-frags.json', import.meta.url), 'utf8');
  const load = (name, r) => page.setInputFiles('[data-testid=kernel-report]', { name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(r)) });
  await load('genuine.json', JSON.parse(text));
  const lane = page.getByTestId('kernel-lane');
  await lane.waitFor();
  const forge = (change) => { const r = JSON.parse(text); change(r); return r; };
  const row = (r, field) => r.rows.find((x) => x.field === field);
  const cases = [
    // A verdict that is not one.
    ['banana', forge((r) => { r.verdict = 'banana'; }), /report\.verdict.*expected `agree` or `differ`/],
    ['words', forge((r) => { r.verdict = 'agree (verified by the kernel)'; }), /report\.verdict.*`agree \(verified by the kernel\)`/],
    // A page the kernel cut 99 fragments from, its row saying so, under "agree".
    ['verdict', forge((r) => {
      r.kernel_side.frag_cache.pages[0].fragments = 99;
      Object.assign(row(r, 'page[0].fragments'), { kernel: 99, agree: false });
    }), /report\.verdict.*`agree`, but 1 of its 8 rows differ/],
    // ... or its row green.
    ['row', forge((r) => {
      r.kernel_side.frag_cache.pages[0].fragments = 99;
      row(r, 'page[0].fragments').kernel = 99;
    }), /report\.rows\[6\]\.agree.*page\[0\]\.fragments/],
    // Both sides and the rows agreeing on five reuses, which the model does not make.
    ['model', forge((r) => {
      for (const side of [r.model, r.kernel_side]) side.frag_cache.reuses = 5;
      Object.assign(row(r, 'page_reuses'), { model: 5, kernel: 5 });
    }), /report\.model.*`page_reuses` is 5, but the model's `modern\+defer-free` gives 4/],
  ];
  for (const [name, r, message] of cases) {
    await load(`${name}.json`, r);
    // Each notice replaces the last: wait for this one's words.
    const notice = page.getByTestId('notice').filter({ hasText: message });
    await notice.waitFor();
    assert.match(await notice.textContent(), /^The kernel report did not open: /, name);
    // The report shown before stays, its pages still drawn.
    assert.equal(await lane.locator('[data-testid=kernel-pages] tbody tr').count(), 1, name);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a report at the 32,000-skb cap opens with 200 skbs drawn and the rest counted', async () => {
  const page = await open(browser);
  const r = JSON.parse(readFileSync(new URL('../fixtures/kernel-report.json', import.meta.url)));
  // The model's two skbs (the reader checks them against the model) beside 32,000 of the
  // kernel's, each of one field; the rows as the runner's `compare` makes them.
  const n = 32000;
  r.kernel_side.skbs = Array.from({ length: n }, () => ({ len: 1 }));
  const row = (field, model, kernel) => ({ field, model, kernel, agree: model === kernel });
  r.rows = [r.rows[0], row('skbs', 2, n)];
  for (let i = 0; i < n; i++) {
    const m = r.model.skbs[i];
    r.rows.push(row(`skb[${i}].len`, m?.len ?? null, 1));
    if (m) r.rows.push(row(`skb[${i}].linear`, m.linear, null), row(`skb[${i}].nr_frags`, m.nr_frags, null));
  }
  r.verdict = 'differ';
  const t0 = Date.now();
  await page.setInputFiles('[data-testid=kernel-report]', { name: 'big.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(r)) });
  const lane = page.getByTestId('kernel-lane');
  await lane.waitFor();
  console.log(`a ${n}-skb report opened and drawn in ${Date.now() - t0} ms`);
  assert.equal(await lane.locator('[data-testid=kernel-skbs] tbody tr').count(), 201);
  assert.equal(await lane.locator('tr.more').textContent(), '31800 more skbs, not drawn (31800 of them differ; skblab kernel prints them all)');
  // The page answers keys with the report open: a step moves, and the lane stays.
  const { at } = await position(page);
  await press(page, 'ArrowRight');
  assert.deepEqual(await position(page), { at: at + 1, len: 4 });
  assert.equal(await lane.locator('[data-testid=kernel-skbs] tbody tr').count(), 201);
  assert.deepEqual(page.errors, []);
  await page.close();
});
