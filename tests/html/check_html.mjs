// Loads HTML reports in headless Chromium (puppeteer-core) and prints, per report, what a person sees, as JSON.
//   node check_html.mjs PUPPETEER_MODULE CHROMIUM EXPECTED_DIR UPDATE(0|1) DOCS_IMAGE REPORT.html...
// Per report: console and page errors, failed requests, the page width at a 1000 px window, each chart's
// tick labels and axis titles, labels (phases, capacity, peak, OOM) outside their chart or crossing each other or a
// capacity line, table headers and figures broken across lines. The example report (the first) is also driven: a click on its first finding
// (the chart's window, the site drawn), a hover (the tooltip's text), a click on a chart marker, print media
// (tools hidden, a PDF made). A report named ranks64 / ranks1000: its small charts and one opened. Screenshots
// of the example's chart and of the 64-rank grid are compared with EXPECTED_DIR's PNGs (UPDATE=1: written there,
// and the docs image too).
import fs from 'fs';
import os from 'os';
import path from 'path';

const [moduleFile, chromium, expectedDir, update, docsImage, ...reports] = process.argv.slice(2);
const puppeteer = (await import(moduleFile)).default;
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vt_chromium_'));
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true, userDataDir: userDir,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--font-render-hinting=none'],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Fraction of pixels whose channels differ by more than 48 between two PNGs (decoded by the browser); 1 when the sizes differ.
async function diff(page, a, b) {
  return page.evaluate(async (a, b) => {
    const load = (z) => new Promise((res, rej) => { const i = new Image(); i.onload = () => res(i); i.onerror = rej; i.src = 'data:image/png;base64,' + z; });
    const [x, y] = [await load(a), await load(b)];
    if (x.width !== y.width || x.height !== y.height) return {frac: 1, size: [x.width, x.height, y.width, y.height]};
    const px = (img) => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height; const g = c.getContext('2d'); g.drawImage(img, 0, 0); return g.getImageData(0, 0, img.width, img.height).data; };
    const p = px(x), q = px(y);
    let n = 0;
    for (let i = 0; i < p.length; i += 4)
      if (Math.abs(p[i] - q[i]) > 48 || Math.abs(p[i + 1] - q[i + 1]) > 48 || Math.abs(p[i + 2] - q[i + 2]) > 48) n++;
    return {frac: n / (p.length / 4), size: [x.width, x.height]};
  }, a, b);
}

// A screenshot (PNG, base64) compared with the stored one, or stored when updating.
async function shot(page, name, take, res) {
  const png = await take();
  const file = path.join(expectedDir, name);
  if (update === '1') { fs.writeFileSync(file, Buffer.from(png, 'base64')); res.shots[name] = {written: file}; return; }
  if (!fs.existsSync(file)) { res.shots[name] = {missing: file}; return; }
  const cmp = await page.browser().newPage();
  res.shots[name] = await diff(cmp, fs.readFileSync(file).toString('base64'), png);
  await cmp.close();
}

// What every chart on the page shows: its tick labels on each axis and its axis titles.
function axes(page) {
  return page.evaluate(() => [...document.querySelectorAll('.chart svg, .card.open svg')].filter((s) => s.querySelector('.x-axis')).map((s) => ({
    x: [...s.querySelectorAll('.x-axis .tick')].map((t) => t.textContent),
    y: [...s.querySelectorAll('.y-axis .tick')].map((t) => t.textContent),
    titles: [...s.querySelectorAll('.axis-title')].map((t) => t.textContent),
  })));
}

// The chart labels that leave their chart, or cross another label or a capacity line: what the eye cannot read.
function clashes(page) {
  return page.evaluate(() => {
    const bad = [];
    for (const svg of document.querySelectorAll('.chart svg')) {
      const [, , W, H] = svg.getAttribute('viewBox').split(' ').map(Number);
      const labels = [...svg.querySelectorAll('.phase-label, .capacity-label, .peak-label, .oom-label')].map((t) => ({t: t.textContent, b: t.getBBox()}));
      const caps = [...svg.querySelectorAll('line.capacity')].map((l) => +l.getAttribute('y1'));
      labels.forEach((a, i) => {
        if (a.b.x < 0 || a.b.y < 0 || a.b.x + a.b.width > W || a.b.y + a.b.height > H) bad.push(a.t + ': outside the chart');
        labels.slice(i + 1).forEach((c) => {
          if (a.b.x < c.b.x + c.b.width && c.b.x < a.b.x + a.b.width && a.b.y < c.b.y + c.b.height && c.b.y < a.b.y + a.b.height) bad.push(a.t + ' / ' + c.t);
        });
        caps.forEach((y) => { if (!/capacity/.test(a.t) && y > a.b.y + 1 && y < a.b.y + a.b.height - 1) bad.push(a.t + ': on the capacity line'); });
      });
    }
    return bad;
  });
}

// Table headers and short figures (bytes, shares, times, counts) that the browser broke across lines: "byt es", "16. 2 MiB".
function brokenFigures(page) {
  return page.evaluate(() => {
    const cells = document.querySelectorAll('th, .breakdown td:nth-child(3), .breakdown td:nth-child(4), ' +
      '.phases td:nth-child(n+2):nth-child(-n+6), .sites td:nth-child(n+2), .procs td:nth-child(n+2)');
    return [...cells].filter((c) => {
      const r = document.createRange();
      r.selectNodeContents(c);
      return c.textContent.trim() && new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size > 1;
    }).map((c) => c.textContent.trim());
  });
}

const out = [];
try {
  for (const [iReport, file] of reports.entries()) {
    const name = path.basename(file);
    const page = await browser.newPage();
    const res = {file: name, errors: [], shots: {}};
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') res.errors.push(m.text()); });
    page.on('pageerror', (e) => res.errors.push(String(e)));
    page.on('requestfailed', (r) => res.errors.push('request failed: ' + r.url()));
    page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) res.errors.push('network request: ' + r.url()); });
    await page.setViewport({width: 1000, height: 900});
    await page.goto('file://' + file, {waitUntil: 'load', timeout: 180000});
    res.scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    res.axes = await axes(page);
    res.clashes = await clashes(page);
    res.broken = await brokenFigures(page);
    res.cards = await page.evaluate(() => document.querySelectorAll('.card').length);
    res.outCards = await page.evaluate(() => [...document.querySelectorAll('.card.out')].map((c) => +c.dataset.tr));
    if (iReport === 0) { // the example: click, hover, marker, print
      const chart = await page.$('.chart');
      await shot(page, 'example-chart.png', () => chart.screenshot({type: 'png', encoding: 'base64'}), res);
      await page.click('.finding[data-f="0"] h3');
      await sleep(200);
      res.click = await page.evaluate(() => {
        const c = window.vtReport.charts[0];
        return {lo: c.lo, hi: c.hi, dur: c.dur, site: c.site >= 0 ? c.T.sites[c.site] : null, siteCurves: document.querySelectorAll('.chart .site-curve').length,
          selected: [...document.querySelectorAll('.finding.sel')].map((d) => d.id), span: c.span};
      });
      await page.click('.chart button[data-a="reset"]');
      const ov = await page.$('.chart .overlay');
      const b = await ov.boundingBox();
      await page.mouse.move(b.x + b.width * 0.75, b.y + b.height / 2);
      await sleep(100);
      res.hover = await page.evaluate(() => { const t = document.querySelector('.chart .tip'); return {shown: getComputedStyle(t).display !== 'none', text: t.textContent}; });
      await page.mouse.move(0, 0);
      res.markers = await page.evaluate(() => document.querySelectorAll('.chart .finding-marker').length);
      await page.evaluate(() => document.querySelector('.chart .finding-marker').dispatchEvent(new MouseEvent('click', {bubbles: true})));
      res.markerSelects = await page.evaluate(() => window.vtReport.selected());
      await page.click('.chart button[data-a="in"]');
      res.zoomIn = await page.evaluate(() => { const c = window.vtReport.charts[0]; return c.hi - c.lo < c.dur; });
      if (docsImage) { // the docs' picture: the first finding selected, a hover on its chart
        await page.click('.finding[data-f="0"] h3');
        await sleep(200);
        await page.evaluate(() => window.scrollTo(0, document.querySelector('.proc').getBoundingClientRect().top + window.scrollY - 8));
        const ov2 = await page.$('.chart .overlay'), b2 = await ov2.boundingBox();
        await page.mouse.move(b2.x + b2.width * 0.4, b2.y + b2.height * 0.3);
        await sleep(150);
        const sy = await page.evaluate(() => window.scrollY); // the clip is in document coordinates; the viewport as it is
        await page.screenshot({path: docsImage, type: 'png', captureBeyondViewport: false, clip: {x: 0, y: sy, width: 1000, height: 480}});
        res.docsImage = docsImage;
        await page.mouse.move(0, 0);
      }
      await page.emulateMediaType('print');
      res.print = await page.evaluate(() => ({tools: getComputedStyle(document.querySelector('.tools')).display,
        svgWidth: document.querySelector('.chart svg').getBoundingClientRect().width, pageWidth: document.documentElement.scrollWidth}));
      res.pdfBytes = (await page.pdf({format: 'A4', printBackground: true})).length;
      await page.emulateMediaType('screen');
    }
    if (/ranks64/.test(name)) {
      const gb = await page.evaluate(() => { const r = document.getElementById('grid').getBoundingClientRect(); return {x: r.left, y: r.top + window.scrollY, width: r.width, height: r.height}; });
      await shot(page, 'ranks64-grid.png', () => page.screenshot({type: 'png', encoding: 'base64', // document coordinates
        clip: {x: gb.x, y: gb.y, width: gb.width, height: Math.min(gb.height, 260)}}), res);
    }
    if (/ranks/.test(name)) { // open a small chart in place
      await page.evaluate(() => document.querySelector('.card[data-tr="1"]').dispatchEvent(new MouseEvent('click', {bubbles: true})));
      await sleep(100);
      res.opened = await page.evaluate(() => { const c = document.querySelector('.card[data-tr="1"]'); return {open: c.classList.contains('open'), ticks: c.querySelectorAll('.tick').length}; });
      res.scrollWidthOpened = await page.evaluate(() => document.documentElement.scrollWidth);
    }
    out.push(res);
    await page.close();
  }
} finally {
  await browser.close();
  fs.rmSync(userDir, {recursive: true, force: true});
}
console.log(JSON.stringify(out));
