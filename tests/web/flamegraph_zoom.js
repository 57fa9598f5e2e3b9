// Drive a flame graph SVG of ours in headless Debian chromium (playwright-core):
// click the widest box named FRAME, measure it, then search TERM through the
// Search button's prompt and count the highlighted boxes.
//
// usage: node flamegraph_zoom.js SVG FRAME TERM
// Prints one JSON line: {"before": px, "after": px, "full": px, "reset_shown": bool,
// "count_attr": n, "highlighted": n, "matched_text": str, "unzoomed": px,
// "root_y": px, "first_screen_wide": n, "errors": [...]}.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const [svg, frame, term] = process.argv.slice(2);

async function main() {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ms-chromium-'));
  const errors = [];
  const context = await chromium.launchPersistentContext(userDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1200, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const out = { errors };
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push('console: ' + m.text()); });
    page.on('dialog', (d) => d.accept(term));
    await page.goto('file://' + path.resolve(svg));
    const width = (sel) => page.$eval(sel, (r) => parseFloat(r.getAttribute('width')));
    // the widest box named FRAME
    const id = await page.evaluate((name) => {
      let best = null, bw = -1, i = 0;
      document.querySelectorAll('g.f').forEach((g) => {
        g.setAttribute('data-test-id', String(i++));
        const w = parseFloat(g.getAttribute('data-w'));
        if (g.getAttribute('data-name') === name && w > bw) { best = g; bw = w; }
      });
      return best ? best.getAttribute('data-test-id') : null;
    }, frame);
    if (id === null) throw new Error('no box named ' + frame);
    const sel = 'g.f[data-test-id="' + id + '"]';
    out.root_y = await page.$eval('#root rect', (r) => parseFloat(r.getAttribute('y')));
    out.first_screen_wide = await page.evaluate(() => {
      let n = 0;
      document.querySelectorAll('g.f rect').forEach((r) => {
        const b = r.getBoundingClientRect();
        if (b.width > 100 && b.top >= 0 && b.bottom <= window.innerHeight) n++;
      });
      return n;
    });
    out.before = await width(sel + ' rect');
    out.full = await page.$eval('svg', (s) => parseFloat(s.getAttribute('width')) - 20);
    await page.click(sel + ' rect', { force: true });
    out.after = await width(sel + ' rect');
    out.reset_shown = await page.$eval('#unzoom', (t) => t.style.display !== 'none');
    out.label = await page.$eval(sel + ' text', (t) => t.textContent);
    await page.click('#search');
    out.count_attr = await page.$eval('#matched', (t) => parseInt(t.getAttribute('data-count'), 10));
    out.highlighted = await page.$$eval('g.f.match', (gs) => gs.length);
    out.matched_text = await page.$eval('#matched', (t) => t.textContent);
    await page.click('#unzoom');
    out.unzoomed = await width(sel + ' rect');
  } catch (e) {
    errors.push('driver: ' + e.message);
  } finally {
    await context.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(out));
  process.exit(errors.length ? 1 : 0);
}

main();
