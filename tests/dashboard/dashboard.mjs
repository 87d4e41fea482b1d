// dashboard.mjs - one phase of test_dashboard.sh in headless chromium.
//   node dashboard.mjs live|resumed|busy|ended|big URL ARTEFACT_DIR [OTHER_SWEEP]
// Exits non-zero, saying why, when the page does not do what
// docs/dashboard.md promises; saves a screenshot of each page; appends
// what it measured to ARTEFACT_DIR/figures.txt.
import { chromium } from 'playwright-core';
import { appendFileSync, writeFileSync } from 'node:fs';

const [mode, rawUrl, art, other] = process.argv.slice(2);
// a wildcard address is printed with this host's name: reach it on loopback
const url = rawUrl.replace(/\/\/[^/:]+:/, '//127.0.0.1:');
const base = url.replace(/\/(\?[^#]*)?#.*$/, '');
const figures = (line) => { console.log(line); appendFileSync(`${art}/figures.txt`, line + '\n'); };
function check(ok, what) { if (!ok) throw new Error(what); }

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const WIDE = { width: 1280, height: 1400 }, NARROW = { width: 420, height: 900 };
const page = await browser.newPage({ viewport: WIDE });
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));

async function rows() { return page.locator('#runs tbody tr').count(); }
async function until(what, fn, ms = 30000) {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(100);
  }
}
async function api(path) {
  return page.evaluate(async (u) => (await fetch(u)).json(), `${base}/api/v1/${path}`);
}
async function values() {
  return page.$$eval('#runs tbody td[data-col="value"]', (tds) => tds.map((t) => t.textContent).filter((t) => t !== '').map(Number));
}
// At `size`, the page is no wider than the window (tables scroll in
// their own box, charts fit): what the page measures, and a screenshot.
async function fits(what, size, shot) {
  await page.setViewportSize(size);
  await page.waitForTimeout(600); // the page redraws its charts 200 ms after a resize
  const m = await page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const over = [...document.querySelectorAll('svg, canvas, table, .scroll, .panel, header, h2, #sweep-status')]
      .filter((el) => !el.closest('.scroll, .scroll-x, .report') || el.matches('.scroll, .scroll-x'))
      .filter((el) => el.getBoundingClientRect().right > w + 1)
      .map((el) => el.id || el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + el.className : ''));
    return { w, scroll: document.documentElement.scrollWidth, over };
  });
  if (shot) await page.screenshot({ path: `${art}/${shot}`, fullPage: true });
  check(m.scroll <= m.w && m.over.length === 0,
    `${what} at ${size.width} px: the page is ${m.scroll} px wide in a ${m.w} px window; past its edge: ${m.over.join(', ')}`);
  return m;
}
// The page says its sweep ended, and when, as a state, not an error.
async function saysEnded(what, endedAt) {
  const live = await page.textContent('#live-text');
  check(live.startsWith('ended '), `${what}: the header says "${live}", not that the sweep ended`);
  const at = Number(await page.getAttribute('#live', 'data-ended-at'));
  if (endedAt != null) check(Math.abs(at - endedAt) < 1e-3, `${what}: the header's end ${at} is not the store's ${endedAt}`);
  check(at > 0, `${what}: no end time in the header`);
  check(await page.getAttribute('#sweep-status', 'data-status') === 'ended', `${what}: the status is not "ended"`);
  const text = await page.evaluate(() => document.body.innerText);
  check(!/failed to fetch|does not answer/i.test(text) && (await page.locator('.error').count()) === 0,
    `${what}: the page shows an error: ${text.match(/.*(fetch|answer).*/i)}`);
  return text;
}
const sorted = (a, dir) => a.every((v, i) => i === 0 || (dir > 0 ? a[i - 1] <= v : a[i - 1] >= v));

async function checkSorting() {
  await page.click('#runs th[data-key="value"]');
  let v = await values();
  const dir1 = sorted(v, 1) ? 1 : -1;
  check(sorted(v, dir1) && v.length > 1, `sorting by value: ${v}`);
  await page.click('#runs th[data-key="value"]');
  v = await values();
  check(sorted(v, -dir1), `sorting by value the other way: ${v}`);
}

async function checkStopMark() {
  const mark = page.locator('[data-stopped-at]').first();
  const run = await mark.getAttribute('data-run');
  const at = Number(await mark.getAttribute('data-stopped-at'));
  const m = await api(`runs/${run}/metrics`);
  const steps = m.metrics.loss.map((p) => p[0]);
  check(at === Math.max(...steps), `the stop mark of ${run} is at ${at}, its last step ${Math.max(...steps)}`);
  const r = await api(`runs/${run}`);
  check(r.run.state === 'stopped', `${run} is marked stopped but is ${r.run.state}`);
  const title = await mark.locator('title').textContent();
  check(title.includes(r.run.reason), `the mark says "${title}", not the reason "${r.run.reason}"`);
  return { run, at };
}

try {
  await page.goto(url);
  if (mode !== 'big') await page.waitForSelector('#runs tbody tr', { timeout: 20000 });
  if (mode === 'live') {
    const first = await rows();
    const state0 = await page.getAttribute('#runs tbody tr', 'data-state');
    check(first >= 1 && state0, 'rows carry data-state');
    // the page is up: the trials, waiting for this file, go on
    if (process.env.DASH_GATE) writeFileSync(process.env.DASH_GATE, '');
    // rows appear as runs start
    await until('more rows', async () => (await rows()) > first);
    // curves grow as values arrive (some curve: a run may be stopped,
    // and its curve end, at any moment)
    const points = () => page.$$eval('#curves [data-curve]', (t) => Object.fromEntries(t.map((x) => [x.dataset.curve, Number(x.dataset.points)])));
    const before = await until('a curve', async () => { const p = await points(); return Object.keys(p).length ? p : null; });
    const running = await until('a curve to grow', async () => {
      const now = await points();
      const id = Object.keys(now).find((k) => before[k] !== undefined && now[k] > before[k]);
      return id ? { id, n: before[id] } : null;
    }, 30000);
    // a stopped run is marked where the rule stopped it
    await until('a stop mark', async () => (await page.locator('[data-stopped-at]').count()) > 0, 40000);
    const stop = await checkStopMark();
    await checkSorting();
    await page.screenshot({ path: `${art}/live.png`, fullPage: true });
    figures(`live: ${first} rows at load, curve of ${running.id} grew past ${running.n} points, ${stop.run} marked at step ${stop.at}`);
    await until('the sweep to end', async () => (await page.textContent('#sweep-state')) !== 'running', 90000);
    await page.waitForTimeout(1500);
    await saysEnded('the live page left open', null);
    // the server went with the sweep: what the page last heard must be
    // what the store holds (test_dashboard.sh compares the two)
    const states = await page.$$eval('#runs tbody tr', (t) => Object.fromEntries(t.map((x) => [x.dataset.run, x.dataset.state])));
    writeFileSync(`${art}/live-states.json`, JSON.stringify(states));
    await page.screenshot({ path: `${art}/live-ended.png`, fullPage: true });
  } else if (mode === 'resumed') {
    // the URL `sweep resume` printed, opened while the resumed sweep runs
    const id = url.split('#/sweep/')[1];
    const state0 = await page.textContent('#sweep-state');
    check(state0 === 'running', `the resumed sweep's page says "${state0}", not running`);
    const want = (await api(`sweeps/${id}/runs`)).runs.length;
    await until('every run in the table', async () => (await rows()) === want);
    const done0 = await page.locator('#runs tbody tr[data-state="finished"]').count();
    check(done0 >= 2, `the runs finished before the interrupt are not in the table: ${done0} finished`);
    await until('a resumed run running', async () => (await page.locator('#runs tbody tr[data-state="running"]').count()) > 0);
    check((await page.textContent('#live-text')) === 'live', `the resumed sweep's page is not live: "${await page.textContent('#live-text')}"`);
    await page.screenshot({ path: `${art}/resumed.png`, fullPage: true });
    await fits('the live sweep page', NARROW, 'resumed-420.png');
    await page.setViewportSize(WIDE);
    if (process.env.DASH_GATE) writeFileSync(process.env.DASH_GATE, ''); // the trials go on
    // left open as the sweep ends: its server goes with it; the page
    // keeps the last data and says the sweep ended, not "Failed to fetch"
    let streams = 0;
    page.on('request', (r) => { if (r.url().includes('/api/v1/events')) streams++; });
    await until('the resumed sweep to end', async () => (await page.textContent('#sweep-state')) !== 'running', 120000);
    streams = 0;
    await until('the page to say it ended', async () => (await page.getAttribute('#sweep-status', 'data-status')) === 'ended');
    await page.waitForTimeout(5000); // the stream's retries (2 s apart) and the last fetches fail meanwhile
    const text = await saysEnded('a page left open', null);
    check(/server closed/.test(text), 'a page left open does not say that the server closed with its sweep');
    // again.yaml's grid has 6 points: runs made since the load came by the stream
    check((await rows()) === 6, `a page left open kept ${await rows()} rows of the grid's 6`);
    check(streams <= 1, `the page asked its gone server for the stream ${streams} times after the end`);
    await page.screenshot({ path: `${art}/resumed-ended.png`, fullPage: true });
    await fits('a page left open', NARROW, 'resumed-ended-420.png');
    figures(`resumed: the URL sweep resume printed served ${want} runs at load while it ran, ${done0} finished before the interrupt; left open, the page said "${await page.textContent('#live-text')}"`);
  } else if (mode === 'busy') {
    // responsiveness while 64 trials report: timer lag in the page
    await until('64 running', async () => (await page.locator('#runs tbody tr[data-state="running"]').count()) >= 32, 30000);
    const lag = await page.evaluate(() => new Promise((done) => {
      const lags = []; let last = performance.now(); let events = 0;
      const es = new EventSource('/api/v1/events');
      es.addEventListener('value', () => events++);
      const t = setInterval(() => { const n = performance.now(); lags.push(n - last - 50); last = n; }, 50);
      setTimeout(() => { clearInterval(t); es.close(); lags.sort((a, b) => a - b);
        done({ n: lags.length, p50: lags[lags.length >> 1], p99: lags[Math.floor(lags.length * 0.99)], max: lags[lags.length - 1], events }); }, 5000);
    }));
    const t0 = Date.now();
    await page.click('#runs th[data-key="step"]');
    const clickMs = Date.now() - t0;
    await page.screenshot({ path: `${art}/busy.png`, fullPage: true });
    figures(`busy: 64 trials reporting, ${lag.events} values in 5 s; timer lag p50 ${lag.p50.toFixed(1)} ms, p99 ${lag.p99.toFixed(1)} ms, max ${lag.max.toFixed(1)} ms; a sort click answered in ${clickMs} ms`);
    // a frozen page, not a slow machine: the figure itself goes in the note
    check(lag.p99 < 2000, `the page froze: p99 ${lag.p99} ms`);
  } else if (mode === 'ended') {
    const n = await rows();
    const id = url.split('#/sweep/')[1];
    const want = (await api(`sweeps/${id}/runs`)).runs.length;
    check(n === want, `sweep ui shows ${n} rows of ${want}`);
    // an ended sweep is not "live": it ended, at the store's time
    const ended = (await api(`sweeps/${id}`)).sweep;
    check(ended.state === 'finished' && ended.ended_at > 0, `the sweep is ${ended.state}, ended at ${ended.ended_at}`);
    await saysEnded('sweep ui of an ended sweep', ended.ended_at);
    // sweep tag and sweep note of run 1 (test_dashboard.sh), in its row
    const labels = await page.$eval(`#runs tr[data-run="${id}-1"] td[data-col="labels"]`,
      (td) => ({ text: td.textContent, title: td.title }));
    check(labels.text === 'baseline, lr sweep · kept for the paper',
      `run 1's tags and note read "${labels.text}"`);
    check(labels.title === 'kept for the paper\nsecond line', `the note's whole text: "${labels.title}"`);
    await until('curves', async () => (await page.locator('#curves [data-curve]').count()) > 0);
    await until('a stop mark', async () => (await page.locator('[data-stopped-at]').count()) > 0);
    await checkStopMark();
    await checkSorting();
    await until('the failed run\'s stderr', async () => (await page.textContent('#failures')).includes('out of range'));
    await until('GPU lanes', async () => (await page.locator('[data-lane-run]').count()) > 0);
    const lanes = await page.$$eval('#lanes [data-lane]', (t) => t.map((x) => x.dataset.lane));
    check(lanes.join(',') === '0,1', `the lanes are the two declared GPUs, not ${lanes}`);
    const occ = Number(await page.getAttribute('#lanes [data-occupancy]', 'data-occupancy'));
    const rep = (await api(`sweeps/${id}`)).report.occupancy;
    check(Math.abs(occ - rep) < 0.02, `the lanes' occupancy ${occ} is not the report's ${rep}`);
    await page.screenshot({ path: `${art}/ended.png`, fullPage: true });
    await fits('the ended sweep page', NARROW, 'ended-420.png');
    await page.setViewportSize(WIDE);
    await page.goto(url.replace(/#.*$/, '#/'));
    await page.waitForSelector('#sweeps tbody tr');
    check(await page.locator('#sweeps tbody tr').count() >= 2, 'the list of sweeps');
    await page.screenshot({ path: `${art}/sweeps.png`, fullPage: true });
    await fits('the list of sweeps', NARROW, 'sweeps-420.png');
    await page.setViewportSize(WIDE);
    await page.goto(url.replace(/#.*$/, `#/compare/${id}/${other}`));
    await page.waitForSelector('[data-compare]');
    check(await page.locator('[data-compare]').count() === 2, 'two sweeps side by side');
    // one chart, one y scale, both sweeps' curves on it
    const side = (sid) => page.locator(`#cmp-curves [data-curve][data-sweep="${sid}"]`).count();
    await until('curves of both sweeps', async () => (await side(id)) > 0 && (await side(other)) > 0);
    const charts = await page.locator('#app svg').count(), yAxes = await page.locator('#cmp-curves [data-axis="y"]').count();
    const axes = await page.locator('#app svg g.axis').count();
    check(charts === 1 && yAxes === 1 && axes === 2, `the compare page draws ${charts} charts, ${axes} axes, ${yAxes} y scales`);
    const drawn = await page.$$eval('#cmp-curves [data-curve]', (t) => t.map((x) => [x.dataset.sweep, x.dataset.curve]));
    let lo = Infinity, hi = -Infinity;
    for (const sid of [id, other]) {
      const ids = drawn.filter((d) => d[0] === sid).map((d) => d[1]);
      const ser = (await api(`sweeps/${sid}/metrics?runs=${ids.join(',')}`)).series;
      for (const k of ids) for (const p of ser[k]) if (p[1] != null) { lo = Math.min(lo, p[1]); hi = Math.max(hi, p[1]); }
    }
    const ymin = Number(await page.getAttribute('#cmp-curves', 'data-y-min'));
    const ymax = Number(await page.getAttribute('#cmp-curves', 'data-y-max'));
    check(ymin <= lo && ymax >= hi, `the shared y scale [${ymin}, ${ymax}] does not hold both sweeps' values [${lo}, ${hi}]`);
    await page.screenshot({ path: `${art}/compare.png`, fullPage: true });
    await fits('the compare page', NARROW, 'compare-420.png');
    figures(`ended: sweep ui shows ${n} rows, a stop mark, the failed run's stderr, GPU lanes, ended at the store's time; list and compare pages (one y scale: [${ymin}, ${ymax}]); each page fits 420 px`);
  } else if (mode === 'big') {
    await page.waitForSelector('#sweeps tbody tr');
    const id = (await api('sweeps')).sweeps.find((s) => s.runs >= 10000).id;
    const t0 = Date.now();
    await page.goto(url.replace(/#.*$/, `#/sweep/${id}`));
    const listed = () => page.evaluate(() => (window.sweepDashboard.lastRender || { rows: 0 }).rows);
    await until('10,000 runs in the table', async () => (await listed()) >= 10000, 30000);
    const loadMs = Date.now() - t0;
    const paints = [];
    for (let i = 0; i < 5; i++) paints.push(await page.evaluate(() => window.sweepDashboard.measureRender()));
    paints.sort((a, b) => a - b);
    const t1 = Date.now();
    await page.click('#runs th[data-key="value"]');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    const sortMs = Date.now() - t1;
    // the rows a person scrolls to are there
    await page.evaluate(() => { const w = document.querySelector('#runs-wrap'); w.scrollTop = w.scrollHeight; });
    await page.waitForTimeout(300);
    const last = await page.$$eval('#runs tbody tr[data-run]', (t) => t[t.length - 1].dataset.run);
    const want = await page.evaluate(() => { const m = window.sweepDashboard.model(); return m.list[m.list.length - 1].id; });
    check(last === want, `scrolled to the end, the last row is ${last}, not ${want}`);
    await page.evaluate(() => { document.querySelector('#runs-wrap').scrollTop = 0; });
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${art}/big.png` });
    figures(`big: 10,000 runs: the table rendered and painted in ${paints[2].toFixed(0)} ms (median of 5; min ${paints[0].toFixed(0)}, max ${paints[4].toFixed(0)}); a sort by value, click to paint, ${sortMs} ms; the page from navigation to 10,000 runs listed ${loadMs} ms`);
    check(paints[2] < 1000 && sortMs < 1000, `10,000 runs took ${paints[2]} ms to paint, ${sortMs} ms to sort`);
  }
  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
} catch (e) {
  await page.screenshot({ path: `${art}/${mode}-failed.png`, fullPage: true }).catch(() => {});
  console.error(`dashboard.mjs ${mode}: ${e.message}`);
  await browser.close();
  process.exit(1);
}
await browser.close();
