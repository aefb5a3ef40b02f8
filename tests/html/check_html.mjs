// Loads HTML reports in headless Chromium (puppeteer-core) and prints, per file, what the page shows as JSON.
//   node check_html.mjs PUPPETEER_MODULE CHROMIUM REPORT.html...
// For each report: console errors and page errors, the SVGs, text labels that overlap one another or
// leave their SVG, capacity lines, finding markers without a label.
const [moduleFile, chromium, ...reports] = process.argv.slice(2);
const puppeteer = (await import(moduleFile)).default;
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const out = [];
try {
  for (const file of reports) {
    const page = await browser.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('requestfailed', (r) => errors.push('request failed: ' + r.url()));
    await page.setViewport({ width: 1200, height: 900 });
    await page.goto('file://' + file, { waitUntil: 'load', timeout: 120000 });
    const res = await page.evaluate(() => {
      const overlaps = [], outside = [];
      let nText = 0;
      const svgs = [...document.querySelectorAll('svg')];
      for (const svg of svgs) {
        const sb = svg.getBoundingClientRect();
        const boxes = [...svg.querySelectorAll('text')].map((t) => [t.textContent, t.getBoundingClientRect()]);
        nText += boxes.length;
        for (const [z, b] of boxes)
          if (b.left < sb.left - 0.5 || b.right > sb.right + 0.5 || b.top < sb.top - 0.5 || b.bottom > sb.bottom + 0.5)
            outside.push(z);
        for (let i = 0; i < boxes.length; i++)
          for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i][1], b = boxes[j][1];
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 0.5 && h > 0.5) overlaps.push(boxes[i][0] + ' / ' + boxes[j][0]);
          }
      }
      const markers = [...document.querySelectorAll('g.finding-marker')];
      return {
        svgs: svgs.length, texts: nText, overlaps, outside,
        capacity: document.querySelectorAll('line.capacity').length,
        markers: markers.length,
        unlabelled: markers.filter((g) => !g.querySelector('text')).length,
        band: document.querySelectorAll('polygon.band').length,
        outliers: document.querySelectorAll('polyline.outlier').length,
        imbalance: (document.querySelector('p.imbalance') || {}).textContent || '',
      };
    });
    out.push({ file, errors, ...res });
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
