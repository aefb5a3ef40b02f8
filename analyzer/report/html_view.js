// The HTML report's charts: drawn from the JSON figures in #vt-data (html.c), no network, no library.
// Per process: live bytes over time per device with phases, capacity, peak, OOMs and finding markers;
// zoom (drag, buttons, ctrl+wheel) and pan (buttons, shift+wheel); hover: the bytes and the largest sites
// then; a finding selected zooms its chart to its span and draws its site's memory. Many processes: a
// small chart each on one scale, the ones far from the median framed, each opened in place on a click.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('vt-data').textContent);
  var SITE_COLORS = ['#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f', '#1f77b4', '#d62728'];
  var DEV_COLORS = ['#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#17becf', '#7f7f7f'];
  var charts = {};  // trace index -> Chart of its section or its opened card
  var selected = -1; // index into D.finds

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  // Bytes as every report writes them: "512 B", "1.50 GiB", "23.5 GiB", "100 MiB".
  function fb(n) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], v = Math.abs(n), k = 0;
    while (v >= 1024 && k < 5) { v /= 1024; k++; }
    if (!k) return (n < 0 ? '-' : '') + v + ' B';
    return (n < 0 ? '-' : '') + v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) + ' ' + u[k];
  }
  // Nanoseconds as every report writes them: "812 ns", "12.0 us", "600.5 ms", "1.60 s".
  function fns(ns) {
    if (ns == null || ns < 0) return '?';
    if (ns < 1e3) return Math.round(ns) + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' us';
    if (ns < 1e9) return (ns / 1e6).toFixed(1) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  }
  // A window's bound as the text report prints it (vt__fig_fmt_bound): widened outward to its last digit (dir -1 down,
  // +1 up), so that a window read off the page and pasted into export --from/--to holds every event of it; 0 is "0 s".
  function fnsDir(ns, dir) {
    if (ns == null || ns < 0) return '?';
    if (ns === 0) return '0 s';
    var step = ns < 1e3 ? 1 : ns < 1e6 ? 100 : ns < 1e9 ? 1e5 : 1e7, r = ns % step;
    if (r && dir < 0) ns -= r;
    else if (r && dir > 0) ns += step - r;
    return fns(ns);
  }
  function nice(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  // Ticks over [lo, hi] in steps of a round number of `unit`, about n of them: [value, label] pairs.
  function ticks(lo, hi, n, unit, name) {
    var step = nice((hi - lo) / unit / n) * unit, out = [], digits = Math.max(0, -Math.floor(Math.log10(step / unit) + 1e-9));
    for (var v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
      out.push([v, (v === 0 ? '0' : (v / unit).toFixed(digits)) + (v === 0 ? '' : ' ' + name)]);
    return out;
  }
  function timeUnit(span) {
    return span >= 2e9 ? [1e9, 's'] : span >= 2e6 ? [1e6, 'ms'] : span >= 2e3 ? [1e3, 'us'] : [1, 'ns'];
  }
  function byteUnit(max) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], k = 0;
    while (max >= 2 * Math.pow(1024, k + 1) && k < 5) k++;
    return [Math.pow(1024, k), u[k]];
  }
  function devColor(dv, i) { return dv.id === -1 ? '#d62728' : dv.id === -2 ? '#e377c2' : DEV_COLORS[i % DEV_COLORS.length]; }
  function siteColor(s) { return SITE_COLORS[s % SITE_COLORS.length]; }
  function mainDev(T) {
    var best = -1;
    T.devs.forEach(function (dv, i) { if (!dv.host && (best < 0 || dv.peak > T.devs[best].peak)) best = i; });
    return best < 0 ? (T.devs.length ? 0 : -1) : best;
  }
  // Level of device dv before bucket k (the last end of an earlier bucket with events), 0 before any.
  function levelBefore(dv, k) {
    for (var j = k - 1; j >= 0; j--) if (dv.last[j] != null) return dv.last[j];
    return 0;
  }
  // Site curve c (flat [bucket, max, last, ...]) at bucket k: its highest there, or the level carried into it.
  function siteAt(c, k) {
    var v = 0, p = c.p;
    for (var i = 0; i < p.length && p[i] <= k; i += 3) v = p[i] === k ? p[i + 1] : p[i + 2];
    return v;
  }
  function findingsOn(tr) {
    var out = [];
    D.finds.forEach(function (x, fi) {
      for (var i = 0; i < x.on.length; i += 2) if (x.on[i] === tr) out.push([fi, x.on[i + 1]]);
    });
    return out;
  }
  var hasOom = D.traces.some(function (T) { return T.ooms.length > 0; });
  var dataMax = 1, capMax = 1;
  D.traces.forEach(function (T) {
    T.devs.forEach(function (dv) { dataMax = Math.max(dataMax, dv.peak || 0); capMax = Math.max(capMax, dv.peak || 0, dv.cap || 0); });
  });
  // The shared byte scale: the devices' capacity when memory came near it (or ran out), else the highest peak.
  var useCap = hasOom || dataMax >= capMax / 2;

  function Chart(host, tr, small) {
    var T = D.traces[tr];
    this.T = T; this.tr = tr; this.host = host;
    this.dur = T.dur != null && T.dur > 0 ? T.dur + 1 : 1;
    // times are from the one origin of the traces reported; this trace's buckets span off .. dur
    this.off = T.off != null && T.off < this.dur ? T.off : 0;
    this.lo = 0; this.hi = this.dur; this.site = -1; this.span = null; this.fit = false;
    host.innerHTML = '<div class="tools"><button data-a="in" title="zoom in">zoom in</button><button data-a="out" title="zoom out">zoom out</button>' +
      '<button data-a="left" title="pan left">&#9664;</button><button data-a="right" title="pan right">&#9654;</button>' +
      '<button data-a="reset">whole run</button><button data-a="fit">bytes: ' + (useCap ? 'fit to view' : 'show capacity') + '</button>' +
      '<span class="zoomed"></span></div><div class="plot"></div><div class="tip"></div>';
    this.plot = host.querySelector('.plot'); this.tip = host.querySelector('.tip');
    this.info = host.querySelector('.zoomed');
    this.small = !!small;
    var self = this;
    window.addEventListener('mouseup', function (e) { // the end of a drag over the plot: zoom to it
      var x0 = self.x0, g = self.geom;
      if (x0 == null) return;
      var x1 = self.at(e.clientX).x, a = Math.max(g.L, Math.min(x0, x1)), b = Math.min(g.L + g.PW, Math.max(x0, x1));
      self.x0 = null;
      if (b - a > 4) self.zoom(self.lo + (a - g.L) / g.PW * (self.hi - self.lo), self.lo + (b - g.L) / g.PW * (self.hi - self.lo));
      else self.draw();
    });
    host.querySelector('.tools').addEventListener('click', function (e) {
      var a = e.target.getAttribute('data-a'), w = self.hi - self.lo, c = (self.lo + self.hi) / 2;
      if (!a) return;
      if (a === 'in') self.zoom(c - w / 4, c + w / 4);
      else if (a === 'out') self.zoom(c - w, c + w);
      else if (a === 'left') self.zoom(self.lo - w / 4, self.hi - w / 4);
      else if (a === 'right') self.zoom(self.lo + w / 4, self.hi + w / 4);
      else if (a === 'reset') { self.site = -1; self.span = null; clearSelection(); self.zoom(0, self.dur); }
      else if (a === 'fit') { self.fit = !self.fit; e.target.textContent = 'bytes: ' + ((self.fit ? !useCap : useCap) ? 'fit to view' : 'show capacity'); self.draw(); }
    });
    this.draw();
  }
  Chart.prototype.zoom = function (lo, hi) {
    var w = Math.max(hi - lo, Math.min(this.dur, 1000));
    if (w >= this.dur) { lo = 0; hi = this.dur; } else {
      if (lo < 0) lo = 0;
      if (lo + w > this.dur) lo = this.dur - w;
      hi = lo + w;
    }
    this.lo = lo; this.hi = hi; this.draw();
  };
  // The width in ns of one of device dv's buckets (they span this trace, off .. dur).
  Chart.prototype.bw = function (dv) { return (this.dur - this.off) / dv.n; };
  Chart.prototype.draw = function () {
    var self = this, T = this.T, W = Math.max(320, Math.round(this.plot.clientWidth || this.host.clientWidth || 900));
    var H = 300, L = 70, R = 14, TOP = 24, B = 54, PW = W - L - R, PH = H - TOP - B, lo = this.lo, hi = this.hi;
    var capScale = this.fit ? !useCap : useCap, top = capScale ? capMax : dataMax;
    if (this.fit) { // the highest level in view
      top = 1;
      T.devs.forEach(function (dv) {
        var bw = self.bw(dv);
        for (var k = 0; k < dv.n; k++) if (self.off + (k + 1) * bw >= lo && self.off + k * bw <= hi) top = Math.max(top, dv.max[k] != null ? dv.max[k] : levelBefore(dv, k));
        if (capScale && dv.cap) top = Math.max(top, dv.cap);
      });
    }
    var HEAD = 1.12; // headroom above the highest level (or capacity) for the phase labels' band
    top *= HEAD;
    function X(t) { return L + (t - lo) / (hi - lo) * PW; }
    function Y(v) { return TOP + PH * (1 - v / top); }
    var o = [], labels = [], i, k; // labels: text drawn last, over lines and curves (each with a white halo)
    o.push('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ' + W + ' ' + H + '" width="' + W + '" height="' + H + '" role="img" aria-label="live memory of ' + esc(T.name) + ' over time">');
    o.push('<defs><clipPath id="clip' + this.tr + '"><rect x="' + L + '" y="' + (TOP - 2) + '" width="' + PW + '" height="' + (PH + 2) + '"/></clipPath></defs>');
    o.push('<rect x="' + L + '" y="' + TOP + '" width="' + PW + '" height="' + PH + '" fill="#fcfcfc" stroke="#bbb"/>');
    o.push('<g clip-path="url(#clip' + this.tr + ')">');
    T.phases.forEach(function (p) { // phases shaded, named where they fit
      if (p.t0 == null || p.t1 == null || p.t1 < lo || p.t0 > hi) return;
      var x0 = Math.max(L, X(p.t0)), x1 = Math.min(L + PW, X(p.t1)), col = p.kind === 'evaluation' ? '#ffbb78' : p.kind === 'training' ? '#aec7e8' : '#dddddd';
      o.push('<rect class="phase" x="' + x0.toFixed(1) + '" y="' + TOP + '" width="' + Math.max(0.5, x1 - x0).toFixed(1) + '" height="' + PH + '" fill="' + col + '" opacity="0.45"><title>' + esc(p.name) + ' (' + p.kind + '): ' + fnsDir(p.t0, -1) + ' .. ' + fnsDir(p.t1, +1) + '</title></rect>');
      if (x1 - x0 > 7 * p.name.length + 8) labels.push('<text class="phase-label" x="' + (x0 + 4).toFixed(1) + '" y="' + (TOP + 13) + '" font-size="11" fill="#555">' + esc(p.name) + '</text>');
    });
    if (this.span) { // the selected finding's span
      var s0 = X(this.span[0]), s1 = X(this.span[1]);
      o.push('<rect class="span" x="' + s0.toFixed(1) + '" y="' + TOP + '" width="' + Math.max(2, s1 - s0).toFixed(1) + '" height="' + PH + '" fill="#f0c000" opacity="0.18"/>');
    }
    // y grid and the devices' live bytes
    var bu = byteUnit(top), yt = ticks(0, top / HEAD, 5, bu[0], bu[1]);
    yt.forEach(function (t) { o.push('<line x1="' + L + '" x2="' + (L + PW) + '" y1="' + Y(t[0]).toFixed(1) + '" y2="' + Y(t[0]).toFixed(1) + '" stroke="#eee"/>'); });
    T.devs.forEach(function (dv, di) {
      var bw = self.bw(dv), prev = 0, d = 'M' + X(0).toFixed(1) + ',' + Y(0).toFixed(1), col = devColor(dv, di);
      for (k = 0; k < dv.n; k++) {
        if (dv.max[k] == null) continue;
        var x0 = X(self.off + k * bw).toFixed(1), x1 = X(self.off + (k + 1) * bw).toFixed(1);
        d += 'L' + x0 + ',' + Y(prev).toFixed(1) + 'L' + x0 + ',' + Y(dv.max[k]).toFixed(1) + 'L' + x0 + ',' + Y(dv.min[k]).toFixed(1) +
          'L' + x0 + ',' + Y(dv.last[k]).toFixed(1) + 'L' + x1 + ',' + Y(dv.last[k]).toFixed(1);
        prev = dv.last[k];
      }
      d += 'L' + X(self.dur).toFixed(1) + ',' + Y(prev).toFixed(1);
      if (!dv.host) o.push('<path d="' + d + 'L' + X(self.dur).toFixed(1) + ',' + Y(0).toFixed(1) + 'Z" fill="' + col + '" opacity="0.10"/>');
      o.push('<path class="device" d="' + d + '" fill="none" stroke="' + col + '" stroke-width="1.5"' + (dv.host ? ' stroke-dasharray="5 3"' : '') + '><title>' + esc(dv.name) + ': live bytes</title></path>');
    });
    if (this.site >= 0) T.devs.forEach(function (dv) { // the selected site's live bytes
      (dv.curves || []).forEach(function (c) {
        if (c.s !== self.site) return;
        var bw = self.bw(dv), prev = 0, d = 'M' + X(0).toFixed(1) + ',' + Y(0).toFixed(1);
        for (var j = 0; j < c.p.length; j += 3) {
          var x0 = X(self.off + c.p[j] * bw).toFixed(1), x1 = X(self.off + (c.p[j] + 1) * bw).toFixed(1);
          d += 'L' + x0 + ',' + Y(prev).toFixed(1) + 'L' + x0 + ',' + Y(c.p[j + 1]).toFixed(1) + 'L' + x0 + ',' + Y(c.p[j + 2]).toFixed(1) + 'L' + x1 + ',' + Y(c.p[j + 2]).toFixed(1);
          prev = c.p[j + 2];
        }
        d += 'L' + X(self.dur).toFixed(1) + ',' + Y(prev).toFixed(1) + 'L' + X(self.dur).toFixed(1) + ',' + Y(0).toFixed(1) + 'Z';
        o.push('<path class="site-curve" d="' + d + '" fill="' + siteColor(c.s) + '" fill-opacity="0.5" stroke="' + siteColor(c.s) + '"><title>' + esc(T.sites[c.s]) + ' on ' + esc(dv.name) + '</title></path>');
      });
    });
    o.push('</g>');
    // capacity, peak, OOMs
    T.devs.forEach(function (dv, di) {
      if (!dv.cap) return;
      if (dv.cap > top) { labels.push('<text class="capacity-label" x="' + (L + PW) + '" y="' + (TOP - 7) + '" font-size="11" text-anchor="end" fill="' + devColor(dv, di) + '">capacity ' + fb(dv.cap) + ' (above the scale)</text>'); return; }
      var y = Y(dv.cap).toFixed(1);
      o.push('<line class="capacity" x1="' + L + '" x2="' + (L + PW) + '" y1="' + y + '" y2="' + y + '" stroke="' + devColor(dv, di) + '" stroke-dasharray="8 4"><title>' + esc(dv.name) + ' capacity: ' + fb(dv.cap) + '</title></line>');
      labels.push('<text class="capacity-label" x="' + (L + PW - 4) + '" y="' + (+y - 4) + '" font-size="11" text-anchor="end" fill="' + devColor(dv, di) + '">capacity ' + fb(dv.cap) + '</text>');
    });
    T.devs.forEach(function (dv, di) {
      if (dv.peakT == null || dv.peakT < lo || dv.peakT > hi) return;
      var px = X(dv.peakT), py = Y(dv.peak), z = 'peak ' + fb(dv.peak) + (T.devs.length > 1 ? ' (' + (dv.host ? dv.name : 'device ' + dv.id) + ')' : ''), w = 6.2 * z.length;
      var right = px + 8 + w < L + PW, ly = py - 8 > TOP + 25 || py + 16 > TOP + PH ? py - 8 : py + 16; // above it, clear of the phase labels' band, or below
      o.push('<circle class="peak" cx="' + px.toFixed(1) + '" cy="' + py.toFixed(1) + '" r="4" fill="' + devColor(dv, di) + '" stroke="#fff"><title>' + esc(dv.name) + ': ' + z + ' at ' + fns(dv.peakT) + '</title></circle>');
      labels.push('<text class="peak-label" x="' + (right ? px + 7 : px - 7).toFixed(1) + '" y="' + ly.toFixed(1) + '" font-size="11"' + (right ? '' : ' text-anchor="end"') + ' fill="' + devColor(dv, di) + '">' + esc(z) + '</text>');
    });
    T.ooms.forEach(function (m) {
      if (m.t == null || m.t < lo || m.t > hi) return;
      var x = X(m.t).toFixed(1);
      o.push('<g class="marker oom" data-f="' + m.f + '"><title>out of memory: ' + (m.req == null ? 'a request of unknown size' : fb(m.req) + ' requested') + ' at ' + fns(m.t) + '</title><line x1="' + x + '" x2="' + x + '" y1="' + (TOP - 8) + '" y2="' + (TOP + PH) + '" stroke="#d62728" stroke-width="2"/>' +
        '<text class="oom-label" x="' + (+x + 30 > W ? x - 3 : +x + 3) + '" y="' + (TOP - 10) + '" font-size="11"' + (+x + 30 > W ? ' text-anchor="end"' : '') + ' fill="#d62728">OOM</text></g>');
    });
    o.push(labels.join(''));
    // the findings on this process under the plot, nearby ones together
    var fm = findingsOn(this.tr).filter(function (p) { return p[1] != null && !(D.finds[p[0]].kind === 'oom' && T.ooms.length); });
    fm.sort(function (a, b) { return a[1] - b[1]; });
    for (i = 0; i < fm.length;) {
      var x = X(fm[i][1]), j = i + 1;
      while (j < fm.length && X(fm[j][1]) - x < 30) j++;
      if (x >= L - 1 && x <= L + PW + 1) {
        var g = fm.slice(i, j), worst = g.reduce(function (w, p) { var s = ['info', 'low', 'medium', 'high'].indexOf(D.finds[p[0]].sev); return Math.max(w, s); }, 0);
        var col = ['#7f8c8d', '#c9a800', '#f39c12', '#c0392b'][worst], lab = 'F' + D.finds[g[0][0]].n + (g.length > 1 ? ' +' + (g.length - 1) : '');
        o.push('<g class="marker finding-marker" data-f="' + g[0][0] + '"><title>' + g.map(function (p) { return 'F' + D.finds[p[0]].n + ': ' + esc(D.finds[p[0]].title); }).join('\n') + '</title>' +
          '<polygon points="' + x.toFixed(1) + ',' + (TOP + PH + 1) + ' ' + (x - 6).toFixed(1) + ',' + (TOP + PH + 11) + ' ' + (x + 6).toFixed(1) + ',' + (TOP + PH + 11) + '" fill="' + col + '"/>' +
          '<text x="' + (x + 8).toFixed(1) + '" y="' + (TOP + PH + 11) + '" font-size="10" fill="' + col + '">' + lab + '</text></g>');
      }
      i = j;
    }
    // axes: byte ticks on the left, time ticks below, each with its title
    o.push('<g class="axis y-axis">');
    yt.forEach(function (t) { o.push('<text class="tick" x="' + (L - 5) + '" y="' + (Y(t[0]) + 4).toFixed(1) + '" font-size="11" text-anchor="end">' + t[1] + '</text>'); });
    o.push('<text class="axis-title" transform="translate(14,' + (TOP + PH / 2) + ') rotate(-90)" font-size="11" text-anchor="middle">live memory</text></g>');
    var tu = timeUnit(hi - lo), xt = ticks(lo, hi, Math.max(3, Math.floor(PW / 110)), tu[0], tu[1]);
    o.push('<g class="axis x-axis">');
    xt.forEach(function (t) {
      var x = X(t[0]);
      o.push('<line x1="' + x.toFixed(1) + '" x2="' + x.toFixed(1) + '" y1="' + (TOP + PH) + '" y2="' + (TOP + PH + 4) + '" stroke="#888"/><text class="tick" x="' + x.toFixed(1) + '" y="' + (TOP + PH + 26) + '" font-size="11" text-anchor="middle">' + t[1] + '</text>');
    });
    o.push('<text class="axis-title" x="' + (L + PW / 2) + '" y="' + (H - 6) + '" font-size="11" text-anchor="middle">' + (D.traces.length > 1 ? 'time since the first event of the ' + D.traces.length + ' traces (one origin for all)' : 'time since the first event') + '</text></g>');
    o.push('<rect class="overlay" x="' + L + '" y="' + TOP + '" width="' + PW + '" height="' + PH + '" fill="transparent"/>');
    o.push('<rect class="brush" x="0" y="' + TOP + '" width="0" height="' + PH + '" fill="#1f77b4" opacity="0.15" display="none"/>');
    o.push('<line class="guide" x1="0" x2="0" y1="' + TOP + '" y2="' + (TOP + PH) + '" stroke="#444" stroke-dasharray="2 2" display="none"/></svg>');
    this.plot.innerHTML = o.join('');
    this.geom = {W: W, L: L, PW: PW, TOP: TOP, PH: PH};
    this.info.textContent = (lo > 0 || hi < this.dur ? 'showing ' + fnsDir(lo, -1) + ' .. ' + fnsDir(hi, +1) + ' of ' + fns(this.dur - 1) : 'whole run: ' + fns(this.dur - 1)) +
      (this.site >= 0 ? '; highlighted: ' + T.sites[this.site] : '');
    this.wire();
  };
  // Time at client x in the chart, and the svg's scale from viewBox to screen.
  Chart.prototype.at = function (clientX) {
    var svg = this.plot.querySelector('svg'), b = svg.getBoundingClientRect(), g = this.geom, sx = g.W / b.width;
    var x = (clientX - b.left) * sx;
    return {x: x, t: this.lo + (x - g.L) / g.PW * (this.hi - this.lo)};
  };
  Chart.prototype.wire = function () {
    var self = this, svg = this.plot.querySelector('svg'), ov = svg.querySelector('.overlay'), br = svg.querySelector('.brush'), gd = svg.querySelector('.guide');
    svg.querySelectorAll('.marker').forEach(function (m) {
      m.addEventListener('click', function () { var f = +m.getAttribute('data-f'); if (f >= 0) select(f, 'finding'); });
    });
    self.x0 = null;
    ov.addEventListener('mousedown', function (e) { self.x0 = self.at(e.clientX).x; e.preventDefault(); });
    ov.addEventListener('mousemove', function (e) {
      var p = self.at(e.clientX), x0 = self.x0;
      if (x0 != null) { br.setAttribute('display', 'inline'); br.setAttribute('x', Math.min(x0, p.x)); br.setAttribute('width', Math.abs(p.x - x0)); }
      gd.setAttribute('display', 'inline'); gd.setAttribute('x1', p.x); gd.setAttribute('x2', p.x);
      self.hover(p, e);
    });
    ov.addEventListener('mouseleave', function () { gd.setAttribute('display', 'none'); self.tip.style.display = 'none'; });
    ov.addEventListener('wheel', function (e) {
      if (!e.ctrlKey && !e.shiftKey) return;
      e.preventDefault();
      var p = self.at(e.clientX), w = self.hi - self.lo, f = e.deltaY > 0 ? 1.25 : 0.8;
      if (e.shiftKey) self.zoom(self.lo + w * 0.1 * Math.sign(e.deltaY), self.hi + w * 0.1 * Math.sign(e.deltaY));
      else self.zoom(p.t - (p.t - self.lo) * f, p.t + (self.hi - p.t) * f);
    }, {passive: false});
  };
  // The tooltip at point p: the interval hovered, each device's bytes there, the largest sites live then.
  Chart.prototype.hover = function (p, e) {
    var T = this.T, md = mainDev(T), h = [], self = this;
    if (md < 0) return;
    var n = T.devs[md].n, bw = this.bw(T.devs[md]), k = Math.max(0, Math.min(n - 1, Math.floor((p.t - this.off) / bw)));
    h.push('<b>' + fnsDir(this.off + k * bw, -1) + ' .. ' + fnsDir(this.off + (k + 1) * bw, +1) + '</b>');
    T.devs.forEach(function (dv) {
      var kk = Math.max(0, Math.min(dv.n - 1, Math.floor((p.t - self.off) / self.bw(dv))));
      if (dv.max[kk] != null) h.push(esc(dv.name) + ': <b>' + fb(dv.max[kk]) + '</b> highest, ' + fb(dv.last[kk]) + ' at the end');
      else h.push(esc(dv.name) + ': <b>' + fb(levelBefore(dv, kk)) + '</b>');
    });
    var dv = T.devs[md];
    if (dv.curves && dv.curves.length) {
      var v = dv.curves.map(function (c) { return [c, siteAt(c, k)]; }).filter(function (x) { return x[1] > 0; });
      v.sort(function (a, b) { return b[1] - a[1]; });
      if (v.length) h.push('largest sites live then (' + esc(dv.name) + '):');
      v.slice(0, 5).forEach(function (x) {
        h.push('<span class="s"><i style="display:inline-block;width:9px;height:9px;background:' + siteColor(x[0].s) + '"></i> ' + fb(x[1]) + ' ' + esc(T.sites[x[0].s]) + '</span>');
      });
      if (!v.length) h.push('no site of the ' + dv.curves.length + ' largest live then');
    } else if (!T.full) h.push('<i>sites: in the processes drawn in full</i>');
    this.tip.innerHTML = h.join('<br>');
    this.tip.style.display = 'block';
    var hb = this.host.getBoundingClientRect(), tx = e.clientX - hb.left + 14, ty = e.clientY - hb.top + 14;
    if (tx + this.tip.offsetWidth > hb.width) tx = Math.max(0, e.clientX - hb.left - this.tip.offsetWidth - 14);
    this.tip.style.left = tx + 'px'; this.tip.style.top = ty + 'px';
  };
  // Select finding fi: its chart zooms to its span (on its process) and draws its site; from='chart' scrolls to the chart,
  // from='finding' scrolls to the finding.
  function select(fi, from) {
    var x = D.finds[fi], c = charts[x.tr];
    clearSelection();
    selected = fi;
    var div = document.getElementById('f' + x.n);
    if (div) div.classList.add('sel');
    if (!c) c = openCard(x.tr);
    if (c) {
      var t0 = x.t0, t1 = x.t1 != null ? x.t1 : x.t0, pad;
      if (t0 != null) {
        pad = Math.max((t1 - t0) * 0.15, c.dur * 0.01);
        c.span = [t0, t1];
        c.site = c.T.sites.indexOf(x.site);
        c.zoom(t0 - pad, t1 + pad);
      } else { c.site = c.T.sites.indexOf(x.site); c.draw(); }
      if (from === 'chart') c.host.scrollIntoView({block: 'center'});
    }
    if (from === 'finding' && div) div.scrollIntoView({block: 'center'});
  }
  function clearSelection() {
    document.querySelectorAll('.finding.sel').forEach(function (d) { d.classList.remove('sel'); });
    selected = -1;
  }
  // What was live at each device's peak as a stacked bar with its legend; clicking an item draws that site on the chart.
  function drawParts(el, tr) {
    var T = D.traces[tr], o = [];
    T.devs.forEach(function (dv) {
      if (!dv.parts || !dv.parts.items.length) return;
      var P = dv.parts;
      o.push('<p><b>Live at the peak of ' + esc(dv.name) + ' (' + fb(P.total) + '), by ' + P.by + ':</b></p><div class="bar">');
      P.items.forEach(function (it, i) {
        var col = it.s != null ? siteColor(it.s) : it.rest ? '#e0e0e0' : '#bdbdbd';
        o.push('<span style="width:' + (100 * it.bytes / P.total).toFixed(2) + '%;background:' + col + '" data-s="' + (it.s != null ? it.s : -1) + '" title="' + esc(fb(it.bytes) + ': ' + it.label) + '"></span>');
      });
      o.push('</div><div class="legend">');
      P.items.forEach(function (it) {
        var col = it.s != null ? siteColor(it.s) : it.rest ? '#e0e0e0' : '#bdbdbd';
        o.push('<i style="background:' + col + '"></i><span class="part" data-s="' + (it.s != null ? it.s : -1) + '" title="' + esc(it.text) + '">' + esc(it.label) + '</span><span class="b">' + fb(it.bytes) + ' (' + (100 * it.bytes / P.total).toFixed(1) + ' %)</span>');
      });
      o.push('</div>');
    });
    el.innerHTML = o.join('');
    el.addEventListener('click', function (e) {
      var s = e.target.getAttribute('data-s'), c = charts[tr];
      if (s == null || !c) return;
      c.site = +s === c.site ? -1 : +s; c.draw();
    });
  }
  // Open the small chart of process tr in place as a full chart; returns the chart.
  function openCard(tr) {
    var card = document.querySelector('.card[data-tr="' + tr + '"]');
    if (!card) return null;
    if (!card.classList.contains('open')) {
      card.classList.add('open');
      card.innerHTML = '<span class="close">close</span><b>' + esc(D.traces[tr].name) + '</b> (' + (D.traces[tr].full ? 'every bucket' : 'downsampled: highest and lowest of each point kept') + ')<div class="cc"></div>';
      charts[tr] = new Chart(card.querySelector('.cc'), tr);
    }
    return charts[tr];
  }
  function closeCard(card) {
    var tr = +card.getAttribute('data-tr');
    card.classList.remove('open');
    card.innerHTML = smallChart(tr);
    var sec = document.querySelector('.chart[data-tr="' + tr + '"]');
    delete charts[tr];
    if (sec && sec.vtChart) charts[tr] = sec.vtChart;
  }
  // The small chart of process tr: its largest device's highest level per point, on the shared scale.
  function smallChart(tr) {
    var T = D.traces[tr], md = mainDev(T), W = 200, H = 56, o = [], top = dataMax * 1.08;
    var dev = T.dev != null ? (T.dev >= 0 ? '+' : '') + (100 * T.dev).toFixed(1) + ' %' : '';
    o.push('<span class="d">' + dev + '</span><b>' + esc(T.rank != null ? 'rank ' + T.rank : T.name) + '</b> ' + (T.peak != null ? fb(T.peak) : 'unknown'));
    o.push('<svg viewBox="0 0 ' + W + ' ' + H + '" role="img" aria-label="live memory of ' + esc(T.name) + '"><rect width="' + W + '" height="' + H + '" fill="#fcfcfc"/>');
    if (md >= 0 && T.mem) {
      var dv = T.devs[md], pts = [], prev = 0;
      for (var k = 0; k < dv.n; k++) {
        var v = dv.max[k] != null ? dv.max[k] : prev;
        if (dv.last[k] != null) prev = dv.last[k];
        pts.push((k * W / dv.n).toFixed(1) + ',' + (H - v / top * H).toFixed(1), ((k + 1) * W / dv.n).toFixed(1) + ',' + (H - v / top * H).toFixed(1));
      }
      o.push('<polygon points="0,' + H + ' ' + pts.join(' ') + ' ' + W + ',' + H + '" fill="' + (T.out ? '#d62728' : '#1f77b4') + '" opacity="0.35"/>');
      o.push('<polyline points="' + pts.join(' ') + '" fill="none" stroke="' + (T.out ? '#d62728' : '#1f77b4') + '" stroke-width="1"/>');
    } else o.push('<text x="4" y="30" font-size="10">no memory data</text>');
    if (D.median != null) o.push('<line class="median" x1="0" x2="' + W + '" y1="' + (H - D.median / top * H).toFixed(1) + '" y2="' + (H - D.median / top * H).toFixed(1) + '" stroke="#333" stroke-dasharray="2 2"/>');
    o.push('</svg>');
    return o.join('');
  }
  function drawGrid() {
    var grid = document.getElementById('grid');
    if (!grid) return;
    var o = [];
    D.traces.forEach(function (T, tr) {
      o.push('<div class="card' + (T.out ? ' out' : '') + '" data-tr="' + tr + '" title="' + esc(T.name) + (T.dev != null ? ': peak ' + (T.dev >= 0 ? '+' : '') + (100 * T.dev).toFixed(1) + ' % against the median' : '') + '">' + smallChart(tr) + '</div>');
    });
    grid.innerHTML = o.join('');
    grid.addEventListener('click', function (e) {
      var card = e.target.closest('.card');
      if (!card) return;
      if (e.target.classList.contains('close')) closeCard(card);
      else if (!card.classList.contains('open')) openCard(+card.getAttribute('data-tr'));
    });
  }

  document.querySelectorAll('.chart').forEach(function (el) {
    var tr = +el.getAttribute('data-tr');
    el.vtChart = charts[tr] = new Chart(el, tr);
  });
  document.querySelectorAll('.parts').forEach(function (el) { drawParts(el, +el.getAttribute('data-tr')); });
  drawGrid();
  document.querySelectorAll('.finding').forEach(function (div) {
    div.addEventListener('click', function (e) {
      if (e.target.closest('a') || (window.getSelection && String(window.getSelection()).length)) return;
      var n = +div.getAttribute('data-f'), fi = -1;
      D.finds.forEach(function (x, i) { if (x.n === n + 1) fi = i; });
      if (fi >= 0) select(fi, 'chart');
    });
  });
  var rt = null;
  window.addEventListener('resize', function () {
    clearTimeout(rt);
    rt = setTimeout(function () { Object.keys(charts).forEach(function (k) { charts[k].draw(); }); }, 150);
  });
  window.addEventListener('beforeprint', function () { Object.keys(charts).forEach(function (k) { charts[k].draw(); }); });
  window.vtReport = {charts: charts, select: select, data: D, selected: function () { return selected; }};
})();
