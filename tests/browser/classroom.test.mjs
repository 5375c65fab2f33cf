// A class with skblab (issue 36): stage mode on a 720p projector at 150 % (853x480 CSS px:
// both lanes side by side, their pages in view, no sideways scroll, diagram text at least 20
// device pixels), the diagrams' words (a legend of the marks used, the cue under the view,
// aligned lanes, the chart's counter, a page's held bytes, the older kernel left, the picker
// by patch), citations, figures and the deck, the handout, and the embed view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { launch, URL as BASE, SHOTS, drawn } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const STAGE = { width: 853, height: 480 };
const DPR = 1.5;
const b64 = (text) => Buffer.from(text).toString('base64url');
const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

/** A page of `viewport` (at `scale` device pixels per px) at BASE + `url`, failing on any
 * page error, once `ready` is drawn. */
async function at(viewport, url, { scale = 1, ready = '[data-testid=step]' } = {}) {
  const page = await browser.newPage({ viewport, deviceScaleFactor: scale });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(BASE + url);
  await page.waitForSelector(ready);
  if (ready === '[data-testid=step]') await drawn(page);
  return page;
}

/** The stage's viewport (853x480 at 150 %) at `query` + `fragment`. */
const stage = (query, fragment) => at(STAGE, query + fragment, { scale: DPR });

/** Checks that `pages` met no page error, and closes them. */
async function done(...pages) {
  assert.deepEqual(pages.flatMap((p) => p.errors), []);
  for (const p of pages) await p.close();
}

/** In a page: each lane's box, the boxes of its drawn pages, and the smallest text its
 * drawing shows, in device pixels (font size × the drawing's scale × devicePixelRatio). */
const measure = () => [...document.querySelectorAll('.diagrams figure')].map((f) => {
  const svg = f.querySelector('svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const texts = [...svg.querySelectorAll('text')].filter((t) => t.getBoundingClientRect().width > 0);
  const box = (r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
  return {
    lane: box(f.getBoundingClientRect()),
    pages: [...svg.querySelectorAll('[data-page]')].map((p) => box(p.getBoundingClientRect())),
    text: Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * scale * devicePixelRatio)),
  };
});

const inView = (r) => r.left >= 0 && r.top >= 0 && r.right <= STAGE.width && r.bottom <= STAGE.height;

test('stage mode at 853x480 (a 720p projector at 150 %): the header folded, both lanes side by side, no sideways scroll, text ≥ 20 device px', async () => {
  const page = await stage('?present', '#w=' + b64('rx-page-reuse') + '&step=3');
  assert.equal(await page.locator('header').isVisible(), false, 'the header folds away');
  assert.equal(await page.getByTestId('present').isVisible(), false);
  for (const name of ['Previous step', 'Next step', 'Next event']) {
    assert.ok(await page.getByRole('button', { name }).isVisible(), `the compact stepper keeps ${name}`);
  }
  assert.equal(await page.locator('.controls .scrubber').isVisible(), false, 'the compact stepper');
  const controls = await page.$eval('.controls', (c) => c.getBoundingClientRect().height);
  assert.ok(controls < 40, `the stepper is one line: ${controls} px`);
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways} px`);
  const [a, b] = await page.evaluate(measure);
  assert.ok(b.lane.left >= a.lane.right - 1 && a.lane.top === b.lane.top, `side by side: ${JSON.stringify([a.lane, b.lane])}`);
  assert.ok(a.lane.left >= 0 && b.lane.right <= STAGE.width, 'both lanes in the width');
  for (const l of [a, b]) assert.ok(l.text >= 20, `the smallest diagram text is ${l.text} device px`);
  await shot(page, 'stage-853x480');
  // The menu unfolds the header, whose picker still works.
  await page.getByTestId('menu').click();
  assert.equal(await page.getByTestId('menu').getAttribute('aria-expanded'), 'true');
  assert.ok(await page.locator('#walkthrough').isVisible());
  await shot(page, 'stage-853x480-menu');
  await done(page);
});

test('stage mode, pages only: both lanes\' pages in view at 853x480, in the link as ?present&pages', async () => {
  const page = await stage('?present', '#w=' + b64('rx-page-reuse') + '&step=3');
  const skbs = () => page.$$eval('.diagrams figure svg', (ss) => ss.map((s) => s.querySelectorAll('[data-skb]').length));
  const labels = () => page.$$eval('.diagrams figure svg', (ss) => ss.map((s) => [...s.querySelectorAll('text.q')].map((t) => t.textContent)));
  assert.ok((await labels()).every((l) => l.some((t) => t.startsWith('sk_receive_queue'))), 'queues drawn before');
  await page.getByTestId('pages-only').click();
  await page.waitForURL(/\?present&pages#w=/);
  await page.waitForSelector('[data-testid=step]');
  await drawn(page);
  assert.equal(await page.getByTestId('pages-only').getAttribute('aria-pressed'), 'true');
  assert.deepEqual(await skbs(), [0, 0], 'only pages drawn');
  assert.deepEqual((await labels()).map((l) => l.map((t) => t.split(' ')[0])), [['pages'], ['pages']], 'no queue left');
  const lanes = await page.evaluate(measure);
  for (const [i, l] of lanes.entries()) {
    assert.ok(l.pages.length > 0, `lane ${i} draws pages`);
    for (const p of l.pages) assert.ok(inView(p), `lane ${i}'s page in view: ${JSON.stringify(p)}`);
    assert.ok(l.text >= 20, `lane ${i}'s smallest text is ${l.text} device px`);
  }
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways} px`);
  await shot(page, 'stage-853x480-pages-only');
  // Stepping keeps the focus: the next step draws pages only too, still in view.
  await page.getByRole('button', { name: 'Next step' }).click();
  await drawn(page);
  assert.deepEqual(await skbs(), [0, 0]);
  for (const l of await page.evaluate(measure)) for (const p of l.pages) assert.ok(inView(p), JSON.stringify(p));
  await shot(page, 'stage-853x480-pages-only-next');
  await done(page);
});

/** A page at 1400x900 at `query` + `fragment`. */
const wide = (fragment, query = '') => at({ width: 1400, height: 900 }, query + fragment);

/** The legend's items, once written: each item's swatch classes and its words. */
async function legend(page) {
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=legend] li').length > 0);
  return page.$$eval('[data-testid=legend] li', (lis) => lis.map((li) => ({
    mark: li.querySelector('.k')?.className.replace(/^k /, '') ?? (li.querySelector('.cur') ? 'cur' : ''),
    words: li.textContent.trim(),
  })));
}

test('the legend lists only the marks the walkthrough uses, one per line, "changed" and "changed and differs" told apart', async () => {
  const page = await wide('#w=' + b64('rx-page-reuse') + '&step=2');
  const items = await legend(page);
  const all = await page.$$eval('#legend', ([t]) => t.content.querySelectorAll('.entry').length);
  assert.ok(items.length > 5 && items.length < all, `${items.length} of ${all} entries`);
  const marks = items.map((i) => i.mark);
  for (const m of ['cur', 'chg', 'dif', 'chg dif']) assert.ok(marks.includes(m), `${m} in ${marks}`);
  // No entry for what an rx walkthrough never draws: a send skb's size goal, MPTCP's mapping.
  assert.ok(!marks.includes('goal') && !items.some((i) => i.words.startsWith('map ')), JSON.stringify(items));
  // One item a line: the list's items stand one under another.
  const tops = await page.$$eval('[data-testid=legend] li', (lis) => lis.map((li) => li.getBoundingClientRect().left));
  assert.ok(new Set(tops).size < items.length, 'items share columns');
  // "changed" is a solid line, "changed and differs" a dashed one over a tint.
  const look = (sel) => page.$eval(`[data-testid=legend] li .k.${sel}`, (k) => {
    const s = getComputedStyle(k);
    return `${s.borderTopStyle} ${s.backgroundColor}`;
  });
  const [chg, both] = [await look('chg:not(.dif)'), await look('chg.dif')];
  assert.notEqual(chg, both);
  assert.match(both, /dashed rgba\(122, 61, 184/);
  await page.getByTestId('legend').scrollIntoViewIfNeeded();
  await shot(page, 'legend-rx-page-reuse');
  // A send walkthrough's legend has the size goal and the sent skb; EOR and order only where drawn.
  const send = await wide('#w=' + b64('send-sg-gso') + '&step=2');
  const sendMarks = (await legend(send)).map((i) => i.mark || i.words.split(':')[0]);
  assert.ok(sendMarks.includes('goal'), sendMarks.join());
  assert.ok(!sendMarks.includes('EOR'), `no skb of send-sg-gso ends a record: ${sendMarks}`);
  // MPTCP's round robin marks its skbs EOR: its legend says what that is.
  const mptcp = await wide('#w=' + b64('mptcp-round-robin'));
  const eor = (await legend(mptcp)).find((i) => i.words.startsWith('EOR:'));
  assert.match(eor?.words ?? '', /MSG_EOR/);
  await done(page, send, mptcp);
});

test('the "more below" cue stands under the view, over no mark; both lanes\' drawings start at one height', async () => {
  const page = await wide('#w=' + b64('rx-page-reuse-lagging') + '&step=1');
  const cue = page.locator('figure .more').first();
  await cue.waitFor();
  const [c, w] = await Promise.all([cue.boundingBox(), page.locator('figure .svgwrap').first().boundingBox()]);
  assert.ok(c.y >= w.y + w.height - 0.5, `the cue (top ${c.y}) below the view (bottom ${w.y + w.height})`);
  await shot(page, 'cue-below-the-view');
  // rx-skb-cache's captions differ in length (each variant's words): the drawings align.
  const cache = await wide('#w=' + b64('rx-skb-cache') + '&step=3');
  const tops = await cache.$$eval('.diagrams figure .svgwrap', (ws) => ws.map((w) => w.getBoundingClientRect().top));
  const caps = await cache.$$eval('.diagrams figure figcaption', (cs) => cs.map((c) => c.scrollHeight));
  assert.equal(tops.length, 2);
  assert.equal(tops[0], tops[1], `drawings start at ${tops} under captions ${caps} high`);
  await shot(cache, 'lanes-aligned');
  await done(page, cache);
});

test('the chart starts on the counter the narration says to watch, in both lanes; a page\'s figure is what its bar draws', async () => {
  const page = await wide('#w=' + b64('rx-page-reuse') + '&step=3');
  assert.equal(await page.$eval('[aria-label="Counter to chart"]', (s) => s.value), 'frag_cache_pages');
  // The intro says to watch it; the chart draws it for both lanes, a line each.
  await page.keyboard.press('Home');
  assert.match(await page.getByTestId('narration').textContent(), /Watch frag_cache_pages/);
  assert.equal(await page.$$eval('.chart svg polyline', (ps) => ps.length), 2);
  await page.locator('.chart').scrollIntoViewIfNeeded();
  await shot(page, 'chart-default');
  // Every page: the "held N/SIZE" under its bar is the bytes its fills cover.
  const send = await wide('#w=' + b64('anatomy') + '&step=3');
  const pages = await send.$$eval('.diagrams svg [data-page]', (gs) => gs.map((g) => {
    const bar = g.querySelector('rect.bar');
    const fills = [...g.querySelectorAll('rect.fill')].map((r) => [Number(r.getAttribute('x')), Number(r.getAttribute('width'))]);
    const text = [...g.querySelectorAll('text')].map((t) => t.textContent).find((t) => / held \d+\/\d+/.test(t));
    return { barW: Number(bar.getAttribute('width')), fills, text };
  }));
  assert.ok(pages.some((p) => p.fills.length > 0), JSON.stringify(pages));
  for (const p of pages) {
    const [, held, size] = p.text.match(/held (\d+)\/(\d+)/).map(Number);
    const covered = p.fills.reduce((n, [, w]) => n + w, 0);
    assert.ok(Math.abs(covered - held * p.barW / size) <= p.fills.length + 1, `${p.text}: fills ${covered} of ${p.barW}`);
  }
  await shot(send, 'page-held');
  await done(page, send);
});

test('compare mode on one\'s own scenario: before (the older kernel) on the left, and the link keeps what was compared', async () => {
  const text = 'mechanism = "sendmsg"\nvariant = "modern"\nops = [{ op = "sendmsg", bytes = 3000 }]\n';
  const page = await wide('#s=' + b64(text) + '&cmp=' + b64('kumar-2010'));
  const variants = () => page.$$eval('.diagrams figure', (fs) => fs.map((f) => f.dataset.variant));
  assert.deepEqual(await variants(), ['kumar-2010', 'modern']);
  await page.waitForFunction(() => location.hash.includes('&cmp='));
  const cmp = new URL(page.url()).hash.match(/&cmp=([\w-]+)/)[1];
  assert.equal(Buffer.from(cmp, 'base64url').toString(), 'kumar-2010', 'the link still compares with kumar-2010');
  await shot(page, 'compare-before-left');
  await done(page);
});

test('the picker groups the walkthroughs by patch; the arrow keys on it leave the walkthrough alone', async () => {
  const page = await wide('#w=' + b64('rx-page-reuse'));
  const groups = await page.$$eval('#walkthrough optgroup', (gs) => gs.map((g) => [g.label, g.children.length]));
  assert.deepEqual(groups.map(([l]) => l.slice(0, 8)), ['seed 000', 'seed 001', 'seed 002', 'seed 003']);
  assert.ok(groups.every(([l, n]) => n > 0 && / · .*, \d{4}$/.test(l)), JSON.stringify(groups));
  const before = await page.$eval('#walkthrough', (s) => s.value);
  await page.focus('#walkthrough');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.$eval('#walkthrough', (s) => s.value), before, 'the walkthrough stayed');
  assert.equal(await page.getByTestId('title').textContent(), await page.$eval('#walkthrough', (s) => s.selectedOptions[0].textContent.trim().replace(/ · \d+\/\d+ right$/, '')));
  await shot(page, 'picker-grouped');
  await done(page);
});

/** Clicks the button named `name` and returns the download's name and text (saved under SHOTS). */
async function download(page, name) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name, exact: true }).click()]);
  const file = join(SHOTS, d.suggestedFilename());
  await d.saveAs(file);
  return { name: d.suggestedFilename(), text: readFileSync(file, 'utf8') };
}

/** An SVG document's size and its sources' lines. */
const svgFacts = (text) => ({
  size: [Number(text.match(/^<svg[^>]* width="(\d+)"/)[1]), Number(text.match(/^<svg[^>]* height="(\d+)"/)[1])],
  sources: [...text.matchAll(/<text class="s src"[^>]*>([^<]*)</g)].map((m) => m[1]),
  queues: (text.match(/<text class="q"/g) ?? []).length,
});

const GIT = 'https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/?id=';

test('citations: seed 001 as v3.6 shipped it, and the commits behind today\'s page_frag_cache, in the page and in figures', async () => {
  const page = await wide('#w=' + b64('rx-page-reuse-shipped'));
  const links = () => page.$$eval('[data-testid=cite] a', (as) => as.map((a) => [a.textContent, a.href]));
  const shipped = await links();
  assert.match(shipped[0][0], /^seed 001, Alexander Duyck, 2012, "net: Update netdev_alloc_frag/);
  assert.deepEqual(shipped[1], ['Alexander Duyck, 2012, "net: Update alloc frag to reduce get/put page usage and recycle pages": commit 540eb7bf0bbe, in v3.6',
    GIT + '540eb7bf0bbedb65277d68ab89ae43cdec3fd6ba']);
  await shot(page, 'cite-seed-001');
  // A figure carries them too, under its legend.
  await page.keyboard.press('ArrowRight');
  const fig = await download(page, 'Download both lanes as one SVG');
  const f = svgFacts(fig.text);
  assert.ok(f.sources.some((l) => l.includes('540eb7bf0bbe')), f.sources.join(' | '));
  // Today's walkthrough: the patch, the v3.6 commit, then v3.7's bigger pages and v4.2's move to mm/.
  const today = await wide('#w=' + b64('rx-page-frag-cache'));
  const cited = await today.$$eval('[data-testid=cite] a', (as) => as.map((a) => a.href.slice(-40, -28)));
  assert.deepEqual(cited.slice(1), ['540eb7bf0bbe', '69b08f62e174', 'b63ae8ca096d']);
  await shot(today, 'cite-today');
  await done(page, today);
});

test('figures: 16:9 on request, idle queues left out, no + in file names, and the whole deck at once', async () => {
  const page = await wide('#w=' + b64('rx-page-reuse') + '&step=2');
  const shown = await page.$$eval('.diagrams figure svg', (ss) => ss.map((s) => s.querySelectorAll('text.q').length));
  const plain = await download(page, 'Download both lanes as one SVG');
  assert.doesNotMatch(plain.name, /\+/);
  const p = svgFacts(plain.text);
  assert.ok(p.queues < shown[0] + shown[1], `queues: ${p.queues} exported of ${shown} shown`);
  await page.getByTestId('slide').check();
  const slide = await download(page, 'Download both lanes as one SVG');
  const [w, h] = svgFacts(slide.text).size;
  assert.ok(Math.abs(w * 9 - h * 16) <= 16, `16:9: ${w}x${h}`);
  // The deck: every step, then each key moment, each a 16:9 slide.
  const deck = await download(page, 'Download every step and key moment as 16:9 slides (one HTML page)');
  assert.equal(deck.name, 'skblab-rx-page-reuse-deck.html');
  const slides = [...deck.text.matchAll(/<section class="slide"><svg[^>]* width="(\d+)" height="(\d+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
  const { len } = await page.evaluate(() => ({ len: Number(document.querySelector('[data-testid=step]').textContent.match(/\/ (\d+)/)[1]) }));
  assert.ok(slides.length > len + 1, `${slides.length} slides for ${len + 1} steps and the key moments`);
  for (const [sw, sh] of slides) assert.ok(Math.abs(sw * 9 - sh * 16) <= 16, `${sw}x${sh}`);
  assert.match(deck.text, /event \d+: reuse_page/);
  const view = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await view.goto('data:text/html;base64,' + Buffer.from(deck.text).toString('base64'));
  await view.screenshot({ path: join(SHOTS, 'deck.png') });
  await view.close();
  await done(page);
});

test('the handout: title and sources, lane captions, the legend, the key moments, the counters side by side, a worksheet', async () => {
  const page = await at({ width: 1280, height: 720 }, '?handout#w=' + b64('rx-page-reuse'), { ready: '[data-testid=handout]' });
  const handout = page.getByTestId('handout');
  assert.equal(await page.getByTestId('handout-title').textContent(), 'Receive buffers: netdev_alloc_frag page reuse (Duyck, 2012)');
  assert.match(await handout.getByTestId('cite').textContent(), /540eb7bf0bbe/);
  assert.ok(await page.getByTestId('handout-legend').locator('li').count() > 5);
  const caps = await page.locator('.hstep[data-step="1"] .hlanes .hcap').allTextContents();
  assert.deepEqual(caps, ['before: pre-2012+none · kernel v3.5', 'after: duyck-2012+none · kernel v3.5']);
  const moments = await page.$$eval('[data-testid=moment]', (ms) => ms.map((m) => [m.dataset.kind, m.querySelector('figcaption').textContent]));
  assert.ok(moments.length > 0 && moments.every(([k]) => k === 'reuse_page'), JSON.stringify(moments));
  assert.match(moments[0][1], /^Key moment, step \d+, after: duyck-2012\+none · kernel v3\.5: event \d+, reuse_page/);
  const head = await page.$$eval('[data-testid=handout-counters] thead th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(head, ['counter', 'before: pre-2012+none · kernel v3.5', 'after: duyck-2012+none · kernel v3.5']);
  const frag = await page.$$eval('[data-testid=handout-counters] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)).find((r) => r[0] === 'frag_cache_pages'));
  assert.equal(frag.length, 3);
  const sheet = page.getByTestId('worksheet');
  const asked = await sheet.locator(':scope > ol > li').count();
  assert.ok(asked > 0 && await sheet.locator('.answer').count() === asked, 'room for each answer');
  await page.emulateMedia({ media: 'print' });
  await page.screenshot({ path: join(SHOTS, 'handout-classroom.png'), fullPage: true });
  await done(page);
});

test('the embed view: the diagram and the stepper only, in an iframe-sized window', async () => {
  const page = await at({ width: 640, height: 400 }, '?embed#w=' + b64('rx-page-reuse') + '&step=2');
  for (const sel of ['header', '.modes', '.narration', '.panels', '.editor', '[data-testid=legend]', 'footer']) {
    assert.equal(await page.locator(sel).first().isVisible(), false, `${sel} left out`);
  }
  assert.ok(await page.getByRole('button', { name: 'Next step' }).isVisible());
  assert.equal(await page.locator('.diagrams figure').count(), 2);
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(sideways <= 0, `scrolls sideways by ${sideways}`);
  await page.getByRole('button', { name: 'Next step' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=step]').dataset.step === '3');
  await shot(page, 'embed');
  await done(page);
});
