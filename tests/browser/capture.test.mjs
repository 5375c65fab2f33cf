// A `skblab trace` capture opened in the playground (issue 35): the program's own skbs as a
// lane drawn as the model's, a step per syscall, its events the facts seen at a tracepoint or
// inferred; a free says which CPU freed the skb; a capture the core refuses names its field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drawn, launch, open, position, SHOTS } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// Written by `skblab trace -- skbpeer tcp 7000 14480 3` on Linux 6.18.
const FIXTURE = readFileSync(new URL('../fixtures/capture-tcp.json', import.meta.url), 'utf8');
const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const load = (page, name, text) =>
  page.setInputFiles('[data-testid=kernel-report]', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
/** Presses `key` and waits for its render (Yew may yield to the browser mid-render). */
async function press(page, key) {
  await page.keyboard.press(key);
  await page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => setTimeout(r, 0)), 0)));
  await drawn(page);
}
const texts = (page) => page.locator('ol.events li[data-k]').allTextContents();

test('a capture opens as the running kernel\'s own skbs, stepped by syscall and by event', async () => {
  const page = await open(browser);
  await load(page, 'capture.json', FIXTURE);
  const about = page.getByTestId('capture-about');
  await about.waitFor();
  // The one lane says whose skbs it draws and where each fact comes from; no model lane, no
  // kernel report, no variant's note, no lockstep.
  const figures = page.locator('.diagrams figure');
  assert.equal(await figures.count(), 1);
  const caption = figures.locator('figcaption');
  assert.match(await caption.textContent(), /^Linux 6\.18\.44-fc-v1300 · its own skbs, traced by skblab trace/);
  assert.match(await about.textContent(), /each marked seen \(at its tracepoint\) or inferred/);
  for (const id of ['kernel-lane', 'about-variant', 'moments']) {
    assert.equal(await page.getByTestId(id).count(), 0, id);
  }
  assert.equal(await page.locator('.lockstep').count(), 0);
  assert.match(await page.getByTestId('title').textContent(), /skbpeer tcp 7000 14480 3.*6\.18\.44-fc-v1300/);
  // The editor keeps its text and says why; no link names a capture.
  assert.match(await page.getByTestId('editor-aside').textContent(), /has no scenario/);
  assert.ok((await page.getByTestId('scenario').inputValue()).length > 0, 'the editor kept its text');
  await page.waitForFunction(() => location.hash === '' || location.hash === '#');
  // A step per syscall of the program on a traced socket: 3 writes and 2 reads.
  const capture = JSON.parse(FIXTURE);
  const syscalls = capture.timeline.filter((m) => m.what === 'write' || m.what === 'read').length;
  const { at, len } = await position(page);
  assert.equal(at, 0);
  assert.ok(len >= syscalls, `${len} steps for ${syscalls} syscalls`);
  await press(page, 'ArrowRight');
  assert.match(await page.getByTestId('op').textContent(), /^write 14480 B on tcp socket 1/);
  // Every step: each event says where its fact was seen or that it was inferred; somewhere
  // skbs are drawn with their frags, a page with its count, and a free with its CPU.
  const seen = { events: 0, frag: false, page: false, freed: false };
  for (let step = 1; step <= len; step++) {
    assert.equal((await position(page)).at, step);
    const listedTexts = await texts(page);
    for (const t of listedTexts) {
      assert.match(t, /seen at [a-z_]+:[a-z_0-9]+|inferred/, `step ${step}: ${t}`);
    }
    seen.events += listedTexts.length;
    const fig = figures.first();
    seen.frag ||= (await fig.locator('g[data-skb] rect[data-frag]').count()) > 0;
    const pageText = await fig.locator('g[data-page]').allTextContents();
    seen.page ||= pageText.some((t) => /count \d+/.test(t));
    const freed = await page.getByTestId('freed').allTextContents();
    seen.freed ||= freed.some((t) => /freed on cpu\d+/.test(t));
    if (step === 2) await shot(page, 'capture-step');
    if (step < len) await press(page, 'ArrowRight');
  }
  assert.ok(seen.events > 0, 'the steps list the facts');
  assert.ok(seen.frag, 'an skb is drawn with its frags');
  assert.ok(seen.page, 'a page is drawn with its count');
  assert.ok(seen.freed, 'a free says which CPU freed the skb');
  // By event: back to the first step with events, and down through them.
  await press(page, 'Home');
  await press(page, 'ArrowRight');
  while ((await texts(page)).length === 0) await press(page, 'ArrowRight');
  await press(page, 'ArrowDown');
  const n = Number((await page.getByTestId('event').textContent()).match(/^event 1 \/ (\d+)/)[1]);
  const first = await page.locator('ol.events li[aria-current]').textContent();
  assert.match(first, /^seen_[a-z]+ /);
  assert.equal(await page.locator('.diagrams figure [data-testid=freed]').count(), 0, 'nothing freed yet');
  // Down to the step's first free: its skb fades, named by the CPU that freed it.
  for (let k = 2; k <= n; k++) {
    await press(page, 'ArrowDown');
    assert.match(await page.getByTestId('event').textContent(), new RegExp(`^event ${k} / ${n}`));
    const current = await page.locator('ol.events li[aria-current]').textContent();
    if (current.startsWith('seen_free ')) {
      const cpu = current.match(/cpu=(\d+)/)[1];
      assert.match(await page.getByTestId('freed').textContent(), new RegExp(`freed on cpu${cpu}`));
      assert.equal(await figures.locator('[data-gone-skb]').count(), 1, 'the freed skb fades');
      break;
    }
  }
  // A figure downloads under a plain name.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    figures.locator('figcaption button', { hasText: 'SVG' }).click(),
  ]);
  assert.match(download.suggestedFilename(), /^skblab-capture-[^ +]*\.svg$/);
  const [deck] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('button', { hasText: 'slides' }).click(),
  ]);
  assert.equal(deck.suggestedFilename(), 'skblab-capture-deck.html');
  await shot(page, 'capture-event');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a capture the core refuses is named by its field, and the stage stays', async () => {
  const page = await open(browser);
  await load(page, 'capture.json', FIXTURE);
  await page.getByTestId('capture-about').waitFor();
  const bad = JSON.parse(FIXTURE);
  const i = bad.timeline.findIndex((m) => 'skb' in m);
  bad.timeline[i].skb = bad.skbs.length;
  await load(page, 'bad.json', JSON.stringify(bad));
  const notice = page.getByTestId('notice');
  await notice.waitFor();
  assert.match(await notice.textContent(), new RegExp(`^The capture did not open: .*capture\\.timeline\\[${i}\\]\\.skb`));
  assert.equal(await page.getByTestId('capture-about').count(), 1, 'the capture shown stays');
  // A kernel report still opens as one, after a capture.
  await load(page, 'report.json', readFileSync(new URL('../fixtures/kernel-report.json', import.meta.url), 'utf8'));
  await page.getByTestId('kernel-lane').waitFor();
  assert.equal(await page.getByTestId('capture-about').count(), 0);
  assert.equal(await page.getByTestId('editor-aside').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the handout draws every step of a capture under its kernel\'s caption', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${new globalThis.URL('?handout', process.env.SKBLAB_URL)}`);
  await page.getByTestId('handout').waitFor();
  await load(page, 'capture.json', FIXTURE);
  await page.getByTestId('handout-title').filter({ hasText: 'skbpeer' }).waitFor();
  const steps = await page.locator('.hstep').count();
  const captions = await page.locator('.hstep figcaption.hcap').allTextContents();
  assert.ok(steps > 5, `${steps} steps`);
  assert.equal(captions.length, steps);
  for (const c of captions) assert.equal(c, 'Linux 6.18.44-fc-v1300, its own skbs (skblab trace)');
  assert.equal(await page.getByTestId('handout-counters').count(), 0, 'no counters to show');
  assert.deepEqual(errors, []);
  await page.close();
});
