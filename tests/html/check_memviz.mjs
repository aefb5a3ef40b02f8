// Opens PyTorch memory snapshots in PyTorch's own viewer (tests/third_party/memory_viz/MemoryViz.js) in headless
// Chromium (puppeteer-core) and prints, per snapshot, what the viewer drew, as JSON.
//   node check_memviz.mjs PUPPETEER_MODULE CHROMIUM NPM_MODULES_DIR MEMORYVIZ_JS SNAPSHOT.pickle...
// The page is served from memory: the viewer's CDN imports of d3 are answered from NPM_MODULES_DIR (d3@5 and its
// d3-* packages, ES module sources); any other request is refused and reported. Per snapshot, on the device the
// viewer picks: 'Active Memory Timeline' (the polygons drawn, the text a hover on the largest one shows),
// 'Active Cached Segment Timeline' (the polygons drawn), 'Allocator State History' (the rectangles drawn at the
// last event, at the first event and at the middle one, the events listed, the OOM lines), console errors and
// page errors throughout.
import fs from 'fs';
import os from 'os';
import path from 'path';

const [moduleFile, chromium, npmDir, memvizJs, ...snapshots] = process.argv.slice(2);
const puppeteer = (await import(moduleFile)).default;
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vt_memviz_'));
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true, userDataDir: userDir,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ORIGIN = 'http://memviz.invalid';
const CDN = {'d3@5': 'd3', 'd3-axis@1': 'd3-axis', 'd3-scale@1': 'd3-scale', 'd3-zoom@1': 'd3-zoom', 'd3-brush@1': 'd3-brush'};

// The ES module entry of npm package name, as a path under /npm/.
function entry(name) {
  const pkg = JSON.parse(fs.readFileSync(path.join(npmDir, name, 'package.json'), 'utf8'));
  return `/npm/${name}/${(pkg.module || 'index.js').replace(/^\.\//, '')}`;
}

// The import map: the viewer's CDN addresses and the bare d3-* names the d3 sources import.
const imports = {};
for (const [at, name] of Object.entries(CDN)) imports[`https://cdn.skypack.dev/${at}`] = entry(name);
for (const name of fs.readdirSync(npmDir).filter((n) => /^d3(-|$)/.test(n))) {
  imports[name] = entry(name);
  imports[`${name}/`] = `/npm/${name}/`;
}

// The page for one snapshot: the viewer, given the file as memory_viz's own HTML export gives it.
function page_html(name, b64) {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><script type="importmap">${JSON.stringify({imports})}</script></head>
<body><script type="module">
import {add_local_files} from "/MemoryViz.js";
try { add_local_files([{name: ${JSON.stringify(name)}, base64: "${b64}"}], "Active Memory Timeline"); }
finally { window.vtLoaded = true; } // (an exception still reaches the page's errors)
</script></body></html>`;
}

// A file under the npm directory for URL path p (the d3 sources import "./x" meaning "./x.js").
function npm_file(p) {
  const f = path.join(npmDir, decodeURIComponent(p.slice('/npm/'.length)));
  if (!path.resolve(f).startsWith(path.resolve(npmDir) + path.sep)) return null;
  for (const c of [f, f + '.js', path.join(f, 'index.js')])
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  return null;
}

// Switches the viewer to view (the second select) and waits for it to draw.
async function show(page, view) {
  await page.evaluate((v) => {
    const sel = document.querySelectorAll('body > select')[1];
    sel.value = v;
    sel.dispatchEvent(new Event('change'));
  }, view);
  await sleep(300);
}

const out = [];
try {
  for (const file of snapshots) {
    const res = {file: path.basename(file), errors: [], refused: []};
    const page = await browser.newPage();
    await page.setViewport({width: 1400, height: 900});
    await page.setRequestInterception(true);
    const html = page_html(path.basename(file), fs.readFileSync(file).toString('base64'));
    page.on('request', (req) => {
      const u = new URL(req.url());
      if (u.origin !== ORIGIN) { res.refused.push(req.url()); req.abort(); return; }
      if (u.pathname === '/') { req.respond({status: 200, contentType: 'text/html', body: html}); return; }
      if (u.pathname === '/favicon.ico') { req.respond({status: 204, body: ''}); return; }
      if (u.pathname === '/MemoryViz.js') {
        req.respond({status: 200, contentType: 'text/javascript', body: fs.readFileSync(memvizJs)});
        return;
      }
      const f = u.pathname.startsWith('/npm/') ? npm_file(u.pathname) : null;
      if (!f) { res.refused.push(req.url()); req.respond({status: 404, body: ''}); return; }
      req.respond({status: 200, contentType: 'text/javascript', body: fs.readFileSync(f)});
    });
    page.on('console', (m) => { if (m.type() === 'error') res.errors.push(m.text()); });
    page.on('pageerror', (e) => res.errors.push(String(e)));
    await page.goto(ORIGIN + '/', {waitUntil: 'load'});
    await page.waitForFunction(() => window.vtLoaded === true, {timeout: 120000}).catch((e) => res.errors.push('not loaded: ' + e));
    await sleep(300);
    res.device = await page.evaluate(() => document.querySelectorAll('body > select')[2].value);

    // The timeline of allocations: one polygon per allocation (and one for the small ones not drawn).
    const visible = 'body > div:not([style*="none"])';
    res.timeline = await page.evaluate((vis) => {
      const polys = [...document.querySelectorAll(`${vis} svg:first-of-type polygon`)];
      const big = polys.slice(0, -1).sort((a, b) => b.getBBox().height * b.getBBox().width - a.getBBox().height * a.getBBox().width)[0];
      if (big) big.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
      const pre = [...document.querySelectorAll(`${vis} pre`)].map((p) => p.textContent).join('\n');
      return {polygons: polys.length, hover: pre};
    }, visible);

    await show(page, 'Active Cached Segment Timeline');
    res.cached = await page.evaluate((vis) => ({polygons: document.querySelectorAll(`${vis} svg:first-of-type polygon`).length}), visible);

    // The allocator's state: segments and their blocks at the last event, then at the first and the middle one.
    await show(page, 'Allocator State History');
    const rects = () => page.evaluate((vis) => document.querySelectorAll(`${vis} svg rect`).length, visible);
    const events = `${visible} div[style*="monospace"] pre`;
    res.state = {events: await page.evaluate((sel) => document.querySelectorAll(sel).length, events),
      oom: await page.evaluate((sel) => [...document.querySelectorAll(sel)].map((p) => p.textContent)
        .filter((t) => t.startsWith('OOM')), events),
      last: await rects()};
    for (const which of ['first', 'middle']) {
      await page.evaluate((sel, which) => {
        const pres = document.querySelectorAll(sel);
        const p = pres[which === 'first' ? 0 : Math.floor(pres.length / 2)];
        if (p) p.dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
      }, events, which);
      await sleep(200);
      res.state[which] = await rects();
    }
    await page.close();
    out.push(res);
  }
} finally {
  await browser.close();
  fs.rmSync(userDir, {recursive: true, force: true});
}
console.log(JSON.stringify(out));
