// Open a profile in the speedscope viewer (npm package "speedscope", served
// from this process on 127.0.0.1) inside headless Debian chromium driven by
// playwright-core, and report what the page shows.
//
// usage: node open_speedscope.js PROFILE EXPECTED_TEXT [SCREENSHOT.png]
// Prints one JSON line: {"ok": bool, "title": ..., "errors": [...], "found": bool}
// (errors: page errors, console errors and warnings, dialogs).
// Exit status 0 when the page loaded without errors and shows EXPECTED_TEXT.
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const [profile, expected, screenshot] = process.argv.slice(2);
const root = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png' };

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0].split('#')[0]);
  const file = url === '/profile' ? profile : path.join(root, path.normalize(url));
  if (file !== profile && !file.startsWith(root)) { res.writeHead(403); res.end(); return; }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});

async function main() {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = 'http://127.0.0.1:' + server.address().port;
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ms-chromium-'));
  const errors = [];
  const context = await chromium.launchPersistentContext(userDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  let result = { ok: false, errors };
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
    // speedscope's importers say what they could not make sense of with
    // console.warn ("Tried to end X when Y was on the top of the stack"):
    // a warning fails the test as an error does (but the software GL
    // driver's own performance notes, "GL Driver Message ... GPU stall").
    page.on('console', (m) => {
      if ((m.type() === 'error' || m.type() === 'warning') && !m.text().includes('GL Driver Message'))
        errors.push('console ' + m.type() + ': ' + m.text());
    });
    page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
    await page.goto(base + '/index.html#profileURL=' + encodeURIComponent(base + '/profile'));
    // The title names the profile once it is loaded.
    await page.waitForFunction(() => document.title.includes(' - speedscope'), null,
      { timeout: 90000 }).catch(() => errors.push('timeout: the profile did not load'));
    // The sandwich view ('3') lists functions in a DOM table.
    await page.keyboard.press('3');
    let found = false;
    try {
      await page.waitForFunction((t) => document.body.innerText.includes(t), expected,
        { timeout: 15000 });
      found = true;
    } catch (e) { /* reported below */ }
    if (screenshot) await page.screenshot({ path: screenshot });
    const text = await page.evaluate(() => document.body.innerText);
    result = { ok: found && errors.length === 0, title: await page.title(), found, errors,
      text: text.slice(0, 2000) };
  } finally {
    await context.close();
    server.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}

main().catch((e) => { console.log(JSON.stringify({ ok: false, errors: [String(e)] })); process.exit(1); });
