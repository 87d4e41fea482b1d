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
const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
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
    await page.screenshot({ path: `${art}/resumed.png`, fullPage: true });
    await until('the resumed sweep to end', async () => (await page.textContent('#sweep-state')) !== 'running', 120000);
    figures(`resumed: the URL sweep resume printed served ${want} runs while it ran, ${done0} finished before the interrupt`);
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
    await page.goto(url.replace(/#.*$/, '#/'));
    await page.waitForSelector('#sweeps tbody tr');
    check(await page.locator('#sweeps tbody tr').count() >= 2, 'the list of sweeps');
    await page.screenshot({ path: `${art}/sweeps.png`, fullPage: true });
    await page.goto(url.replace(/#.*$/, `#/compare/${id}/${other}`));
    await page.waitForSelector('[data-compare]');
    check(await page.locator('[data-compare]').count() === 2, 'two sweeps side by side');
    await until('curves on both sides', async () => (await page.locator('[data-compare] [data-curve]').count()) > 0);
    await page.screenshot({ path: `${art}/compare.png`, fullPage: true });
    figures(`ended: sweep ui shows ${n} rows, a stop mark, the failed run's stderr, GPU lanes; list and compare pages`);
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
