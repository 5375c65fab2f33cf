// A selected model event shows the kernel's path to its function at the lane's release
// (core/src/call_path.rs, docs/call-paths.md): innermost first, joined as a captured stack
// is, each frame linked at its line, inlined frames and renames marked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, open, drawn, eventItem, permalink, SHOTS } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** One 2000-byte write on a device without GSO, today's tcp_sendmsg_locked. */
const WRITE = 'mechanism = "sendmsg"\nvariant = "modern"\n[device]\ngso = false\n[[ops]]\nop = "sendmsg"\nbytes = 2000\n';
const ELIXIR = 'https://elixir.bootlin.com/linux/v6.12';

test("a selected event shows its path from sendmsg, each frame linked, inlined frames marked", async () => {
  const page = await open(browser, permalink(WRITE, 1));
  await page.setViewportSize({ width: 1280, height: 720 });
  const ol = page.locator('ol.events[data-variant="modern"]');
  await (await eventItem(page, ol, /^copy_to_page/)).first().click();
  const path = page.locator('[data-testid=call-path]');
  assert.equal(await path.textContent(),
    'Path from sendmsg(2): skb_copy_to_page_nocache (inlined) ← tcp_sendmsg_locked ← tcp_sendmsg');
  const hrefs = await path.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(hrefs, [
    `${ELIXIR}/source/include/net/sock.h#L2197`,
    `${ELIXIR}/source/net/ipv4/tcp.c#L1221`,
    `${ELIXIR}/source/net/ipv4/tcp.c#L1357`,
  ]);
  // The kernel function it already linked stays, above the path.
  assert.match(await page.locator('[data-testid=kernel-fn]').textContent(), /skb_copy_to_page_nocache/);
  // Legible at 1280x720: the path wraps inside its lane, nothing cut off.
  const fits = await path.evaluate((p) => {
    const lane = p.closest('section.lane').getBoundingClientRect();
    const r = p.getBoundingClientRect();
    return p.scrollWidth <= p.clientWidth && r.left >= lane.left && r.right <= lane.right + 0.5;
  });
  assert.ok(fits, 'the path fits its lane');
  await path.scrollIntoViewIfNeeded();
  await drawn(page);
  await page.screenshot({ path: join(SHOTS, 'call-path.png') });
  // The skb's allocation names the function's earlier name.
  await (await eventItem(page, ol, /^alloc_skb/)).first().click();
  assert.match(await path.textContent(), /^Path from sendmsg\(2\): tcp_stream_alloc_skb \(was sk_stream_alloc_skb through v5\.15\) ← /);
  assert.deepEqual(page.errors, []);
  await page.close();
});
