// A walkthrough says, before its first step, what the running kernel judged of it: the
// core's `kernel` line (core/walkthroughs/*.toml), the line the terminal prints under the
// patch citation (docs/kernel-oracle.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { launch, open, position } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** The `kernel = "..."` line of a built-in walkthrough. */
const kernelLine = (name) => readFileSync(new URL(`../../core/walkthroughs/${name}.toml`, import.meta.url), 'utf8')
  .match(/^kernel = "(.*)"$/m)[1].replace(/\\"/g, '"');

test("the page shows the lesson's kernel line before step 1, and only there", async () => {
  const page = await open(browser);
  const line = page.locator('[data-testid=kernel-judged]');
  assert.equal(await line.textContent(), kernelLine('anatomy'));
  await page.getByRole('button', { name: 'Next step' }).click();
  assert.equal((await position(page)).at, 1);
  assert.equal(await line.count(), 0);
  assert.deepEqual(page.errors, []);
});
