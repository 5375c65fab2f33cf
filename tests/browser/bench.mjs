// The playground's performance figures (a benchmark, not a test): wasm size raw and gzip,
// time to first render, and render time per step and per event on a scenario of 500 skbs
// and on a `skblab trace` capture of 10,000 skbs; then the same with Chromium's CPU
// throttled 4x (a slow laptop). Run through `cargo xtask bench-web`.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { growingQueue, launch, permalink, position, URL } from './lib.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs) => Math.max(...xs);
const fmt = (ms) => `${ms.toFixed(1)} ms`;
/** How many of the moves `rows` showed drawings made ahead, while the page rested. */
const ahead = (rows) => `${rows.filter((r) => r.ahead).length} of ${rows.length} drawn ahead`;

const wasm = readFileSync(join(process.env.SKBLAB_DIST, 'skblab_web_bg.wasm'));
const gz = gzipSync(wasm, { level: 9 }).length;
console.log(`wasm size:          ${wasm.length} B raw, ${gz} B gzip (${(gz / 1024).toFixed(1)} KiB; its budget is xtask's WASM_GZIP_BUDGET)`);

console.log(`machine load:       ${(await import('node:os')).loadavg()[0].toFixed(1)} (1-min load average; figures below scale with it)`);
/** A page on the playground at `fragment`, its CPU slowed `throttle` times from the start. */
async function open(browser, fragment, throttle) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
  await page.goto(URL + fragment);
  await page.waitForSelector('[data-testid=step]');
  return page;
}

const browser = await launch();
try {
  for (const throttle of [1, 4]) {
    if (throttle > 1) console.log(`\nwith the CPU throttled ${throttle}x (CDP Emulation.setCPUThrottlingRate):`);
    await bench(browser, throttle);
    await benchCapture(browser, throttle);
  }
} finally {
  await browser.close();
}

/** The frames after the steps of `rows` that drew what the page held back below the view. */
function settled(rows) {
  const s = rows.filter((r) => r.settle !== undefined).map((r) => r.settle);
  if (s.length) console.log(`  then, in the frame after, what is below the view (new skbs, the panels): ${fmt(median(s))} median / ${fmt(max(s))} max (${s.length} of ${rows.length} steps)`);
}

async function bench(browser, throttle) {
  const firsts = [];
  for (let i = 0; i < 5; i++) {
    const page = await open(browser, '', throttle);
    firsts.push(await page.evaluate(() => window.__skblab.firstRenderMs));
    await page.close();
  }
  console.log(`first render:       ${fmt(median(firsts))} median of 5 (navigation start to the first drawn walkthrough)`);

  // No GSO: one MSS per skb, so 20 writes of 25 segments queue 500 skbs (nothing is acked).
  const frag = permalink(growingQueue(36200), 0);
  const page = await open(browser, frag, throttle);
  const { len } = await position(page);
  const step = (key = 'ArrowRight') => page.evaluate(async (key) => {
    window.__skblab.renderMs = undefined;
    const t0 = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    // Yew renders from a microtask, but past 16 ms it yields to the browser (a zero timeout)
    // and goes on in a later task: wait for the app's `rendered` (which publishes renderMs),
    // then force style and layout.
    do await new Promise((r) => setTimeout(r, 0));
    while (window.__skblab.renderMs === undefined && performance.now() - t0 < 10000);
    const t1 = performance.now();
    document.body.getBoundingClientRect();
    const t2 = performance.now();
    const step = { total: t2 - t0, layout: t2 - t1, app: window.__skblab.renderMs, draw: window.__skblab.drawMs, ahead: window.__skblab.drawnAhead };
    // What the page holds back (new pieces below a diagram's view, the panels below the
    // window) comes in the frame after, each aria-busy till then: timed from the event that
    // asks for it (heard first, capturing on the window) to its render laid out.
    if (!document.querySelector('[aria-busy]')) return step;
    let from;
    const heard = () => { from ??= performance.now(); };
    window.addEventListener('skblab-settle', heard, { capture: true });
    do await new Promise((r) => setTimeout(r, 0));
    while ((from === undefined || document.querySelector('[aria-busy]')) && performance.now() - t0 < 10000);
    document.body.getBoundingClientRect();
    window.removeEventListener('skblab-settle', heard, { capture: true });
    return { ...step, settle: performance.now() - from };
  }, key);
  const rows = [];
  for (let k = 1; k <= len; k++) {
    const r = await step();
    // The queue's label ("write_queue (500 skbs)"): the page holds only the skbs near the view.
    const label = await page.locator('figure:first-of-type svg text.q').first().textContent();
    const skbs = Number(label.match(/\((\d+) skbs?\)/)[1]);
    rows.push({ k, skbs, ...r });
  }
  const big = rows.filter((r) => r.skbs >= 400);
  const last = rows[rows.length - 1];
  console.log(`scenario:           ${len} steps, ${last.skbs} skbs at the end (${big.length} steps with >= 400 skbs)`);
  if (big.length) {
    console.log(`step render, >=400 skbs: app ${fmt(median(big.map((r) => r.app)))} median / ${fmt(max(big.map((r) => r.app)))} max;` +
      ` with style+layout ${fmt(median(big.map((r) => r.total)))} median / ${fmt(max(big.map((r) => r.total)))} max (goal <= 16 ms);` +
      ` of which building the drawing ${fmt(median(big.map((r) => r.draw)))}, style+layout ${fmt(median(big.map((r) => r.layout)))} (medians; ${ahead(big)})`);
  }
  console.log(`step render, all steps: with style+layout ${fmt(median(rows.map((r) => r.total)))} median / ${fmt(max(rows.map((r) => r.total)))} max`);
  settled(rows);
  // A step back is never drawn ahead (→ and ↓ are): from 500 skbs to 375, and forward again.
  const back = [];
  for (let k = 0; k < 5; k++) back.push(await step('ArrowLeft'));
  for (let k = 0; k < 5; k++) await step('ArrowRight');
  console.log(`step back, 500 to 375 skbs: with style+layout ${fmt(median(back.map((r) => r.total)))} median / ${fmt(max(back.map((r) => r.total)))} max (${ahead(back)})`);
  // The page holds only the part of the diagram near the view, and the steps above add skbs at
  // the bottom, out of view. Scrolled down to them, each step draws its 25 skbs in the page.
  await page.locator('.svgwrap').first().evaluate((e) => { e.scrollTop = e.scrollHeight; });
  const near = [];
  for (let k = 0; k < 20; k++) {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    near.push(await step(k % 2 ? 'ArrowRight' : 'ArrowLeft'));
  }
  console.log(`step render, scrolled to the newest skbs (steps ${len - 1} <-> ${len}): with style+layout ${fmt(median(near.map((r) => r.total)))} median / ${fmt(max(near.map((r) => r.total)))} max;` +
    ` app ${fmt(median(near.map((r) => r.app)))}, style+layout ${fmt(median(near.map((r) => r.layout)))} (medians; ${ahead(near)})`);
  settled(near);
  // Event by event through the last step (500 skbs): each event rebuilds the state from the
  // step before (Trace::state_at) and draws it; scrolled to the newest skbs, which the events
  // touch, and at the top, where they are out of view.
  const events = async () => {
    // From the whole last step, ↓ replays it from its first event.
    await page.keyboard.press('End');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    const rows = [];
    for (let k = 1; k < 1000; k++) {
      const r = await step('ArrowDown');
      const at = await page.evaluate(() => document.querySelector('[data-testid=event]')?.dataset.event);
      if ((await position(page)).at !== len || at !== String(k)) break;
      rows.push(r);
    }
    return rows;
  };
  for (const where of ['scrolled to the newest skbs', 'at the top']) {
    if (where === 'at the top') await page.locator('.svgwrap').first().evaluate((e) => { e.scrollTop = 0; });
    const ev = await events();
    console.log(`event render, step ${len} (${ev.length} events, 500 skbs), ${where}: with style+layout ${fmt(median(ev.map((r) => r.total)))} median / ${fmt(max(ev.map((r) => r.total)))} max (goal <= 16 ms);` +
      ` building the state and drawing ${fmt(median(ev.map((r) => r.draw)))}, style+layout ${fmt(median(ev.map((r) => r.layout)))} (medians; ${ahead(ev)})`);
  }
  await page.close();
}

/** The fixture capture (12 skbs, three writes and two reads) repeated until it holds `skbs`
 * skbs: each copy's skbs, pages and moments renumbered and later in time. */
function bigCapture(skbs) {
  const c = JSON.parse(readFileSync(new globalThis.URL('../fixtures/capture-tcp.json', import.meta.url), 'utf8'));
  const [n, p, end] = [c.skbs.length, c.pages.length, c.timeline[c.timeline.length - 1].ns + 1];
  const copies = Math.ceil(skbs / n);
  const big = { ...c, skbs: [], pages: [], timeline: [] };
  for (let i = 0; i < copies; i++) {
    for (const s of c.skbs) {
      const frags = s.xmit?.frags.map((f) => ({ ...f, page: f.page + i * p }));
      big.skbs.push({ ...s, id: s.id + i * n, xmit: s.xmit && { ...s.xmit, frags } });
    }
    for (const pg of c.pages) big.pages.push({ ...pg, id: pg.id + i * p });
    for (const m of c.timeline) {
      big.timeline.push({ ...m, ns: m.ns + i * end, ...(m.skb === undefined ? {} : { skb: m.skb + i * n }) });
    }
  }
  return JSON.stringify(big);
}

/** A capture of 10,000 skbs: the time from choosing the file to its first step drawn, then
 * a step and an event at a time (the lane holds the skbs live at that moment, few). */
async function benchCapture(browser, throttle) {
  const text = bigCapture(10000);
  const page = await open(browser, '', throttle);
  // The file is handed to the page first, untimed: Playwright's `setInputFiles` sends it
  // over CDP in base64, seconds for 7.6 MB, which a learner choosing a file never waits for.
  // Timed: from the file input's `change` (as a chosen file fires it) to the capture drawn.
  const t0 = Date.now();
  await page.evaluate((text) => {
    const files = new DataTransfer();
    files.items.add(new File([text], 'capture.json', { type: 'application/json' }));
    document.querySelector('[data-testid=kernel-report]').files = files.files;
  }, text);
  const handed = Date.now() - t0;
  const opened = await page.evaluate(async () => {
    const t0 = performance.now();
    document.querySelector('[data-testid=kernel-report]').dispatchEvent(new Event('change', { bubbles: true }));
    while (!document.querySelector('[data-testid=capture-about]')) await new Promise((r) => setTimeout(r, 0));
    document.body.getBoundingClientRect();
    return performance.now() - t0;
  });
  const { len } = await position(page);
  console.log(`capture:            10,000 skbs (${(text.length / 1e6).toFixed(1)} MB), ${len} steps: opened and drawn in ${opened.toFixed(0)} ms from the file chosen (goal < 1 s; handing the file to the page took ${handed} ms more, untimed)`);
  const time = (key) => page.evaluate(async (key) => {
    window.__skblab.renderMs = undefined;
    const t0 = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    do await new Promise((r) => setTimeout(r, 0));
    while (window.__skblab.renderMs === undefined && performance.now() - t0 < 10000);
    document.body.getBoundingClientRect();
    return performance.now() - t0;
  }, key);
  const steps = [];
  for (let k = 0; k < 40; k++) steps.push(await time('ArrowRight'));
  const events = [];
  for (let k = 0; k < 40; k++) events.push(await time('ArrowDown'));
  console.log(`capture step render: ${fmt(median(steps))} median / ${fmt(max(steps))} max; event render ${fmt(median(events))} median / ${fmt(max(events))} max (40 each, with style+layout; goal <= 16 ms)`);
  await page.close();
}
