// The browser test: opens every trace listed in TRACES_DIR/manifest.json (written by the unit test
// "browser traces: ...", tests/unit/analysis_browser_traces.cpp) in speedscope, served from
// third_party/browser/node_modules on 127.0.0.1, in Debian's chromium driven headless by
// playwright-core, and asserts for each:
// - speedscope imports it as a Trace Event Format profile, with no warning or error on the console
//   (its importer warns for every end it cannot pair and every slice still open at the end) and no
//   page error;
// - it shows one track (profile) per thread with slices: the manifest's count, and the (1/N) label;
// - its own model, exported by its Export command (Ctrl+S) as a speedscope file, opens and closes
//   every slice exactly where the trace's begin and end events say, in the trace's nesting: so no
//   slice is left open or nested in a neighbour.
// Nothing leaves the machine: requests to anything but the local server are aborted and fail the test.
// Usage: node tests/browser/speedscope_test.mjs REPO_ROOT TRACES_DIR
//   HYBRIDSIM_UPDATE_SCREENSHOT=1 also copies the screenshot into scenarios/examples/.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const [root, dir] = process.argv.slice(2);
const require = createRequire(path.join(root, 'third_party/browser/package.json'));
const { chromium } = require('playwright-core');
const speedscopeDir = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release');
const speedscopeVersion = require('speedscope/package.json').version;
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const chromiumPath = process.env.HYBRIDSIM_CHROMIUM || '/usr/bin/chromium';
// Chromium's software WebGL logs this when the page is read back for a screenshot: not the viewer's.
const browserNoise = /^\[\.WebGL-[0-9a-fx]+\]GL Driver Message/;
const started = Date.now();

// What the trace itself says, per thread, in speedscope's terms: a frame key (the name, then the
// args as JSON) opened at each begin and closed at each end, times rebased on the thread's first.
function expectedTracks(file) {
  const bytes = fs.readFileSync(file);
  const doc = JSON.parse((file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8'));
  const names = { process: new Map(), thread: new Map() };
  const threads = new Map();
  for (const e of doc.traceEvents) {
    if (e.ph === 'M' && e.name === 'process_name') names.process.set(e.pid, e.args.name);
    if (e.ph === 'M' && e.name === 'thread_name') names.thread.set(`${e.pid}:${e.tid}`, e.args.name);
    if (e.ph !== 'B' && e.ph !== 'E') continue;
    const key = `${e.pid}:${e.tid}`;
    if (!threads.has(key)) threads.set(key, { pid: e.pid, tid: e.tid, events: [] });
    threads.get(key).events.push({ type: e.ph === 'B' ? 'O' : 'C', key: e.name + (e.args ? ` ${JSON.stringify(e.args)}` : ''), ts: e.ts });
  }
  const tracks = [...threads.values()].sort((a, b) => a.pid - b.pid || a.tid - b.tid);
  for (const t of tracks) {
    const base = Math.min(...t.events.map((e) => e.ts));
    for (const e of t.events) e.at = e.ts - base;
    t.name = `${names.process.get(t.pid)} (pid ${t.pid}), ${names.thread.get(`${t.pid}:${t.tid}`)} (tid ${t.tid})`;
  }
  return tracks;
}

// Differences between speedscope's exported model and the trace (empty when they agree).
function compareModel(exported, tracks) {
  const problems = [];
  if (exported.profiles.length !== tracks.length)
    problems.push(`${exported.profiles.length} tracks in speedscope, ${tracks.length} threads with slices in the trace`);
  const frames = exported.shared.frames;
  tracks.forEach((t, i) => {
    const p = exported.profiles[i];
    if (!p) return;
    if (p.name !== t.name) problems.push(`track ${i} is "${p.name}", expected "${t.name}"`);
    if (p.events.length !== t.events.length)
      problems.push(`${t.name}: ${p.events.length / 2} slices in speedscope, ${t.events.length / 2} in the trace`);
    for (let k = 0; k < Math.min(p.events.length, t.events.length); ++k) {
      const got = p.events[k], want = t.events[k];
      // speedscope adds up time deltas, so its times may differ from the trace's in the last bits.
      if (got.type !== want.type || frames[got.frame].name !== want.key || Math.abs(got.at - want.at) > 1e-6) {
        problems.push(`${t.name}: event ${k} is ${got.type} "${frames[got.frame].name}" at ${got.at} µs, ` +
                      `expected ${want.type} "${want.key}" at ${want.at} µs`);
        break;
      }
    }
  });
  return problems;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  let file = null;
  const ss = url.pathname.match(/^\/speedscope\/([\w.-]+)$/);
  const tr = url.pathname.match(/^\/trace\/(\d+)\/[\w.-]+$/);
  if (ss) file = path.join(speedscopeDir, ss[1]);
  if (tr && manifest.traces[Number(tr[1])]) file = manifest.traces[Number(tr[1])].file;
  if (!file || !fs.existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
                  '.json': 'application/json', '.png': 'image/png', '.woff2': 'font/woff2' };
  res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 960, height: 400 } });
const blocked = [];
await context.route('**/*', (route) => {
  if (route.request().url().startsWith(`${base}/`)) return route.continue();
  blocked.push(route.request().url());
  return route.abort();
});

let passed = 0, failed = 0;
for (const [index, trace] of manifest.traces.entries()) {
  const t0 = Date.now();
  const problems = [];
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => logs.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const traceUrl = `${base}/trace/${index}/${path.basename(trace.file)}`;
  await page.goto(`${base}/speedscope/index.html#profileURL=${encodeURIComponent(traceUrl)}`);
  let label = null;
  try {
    await page.waitForFunction(() => /\(1\/\d+\)/.test(document.body.innerText), null, { timeout: 60_000 });
    label = (await page.evaluate(() => document.body.innerText)).match(/\(1\/(\d+)\)/);
  } catch (e) {
    problems.push(`speedscope showed no profile: ${e.message.split('\n')[0]}`);
  }
  if (label) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Control+s')]);
    const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    const tracks = expectedTracks(trace.file);
    if (Number(label[1]) !== trace.tracks) problems.push(`speedscope's label says ${label[1]} tracks, expected ${trace.tracks}`);
    if (tracks.length !== trace.tracks) problems.push(`the trace has ${tracks.length} threads with slices, the manifest ${trace.tracks}`);
    const slices = tracks.reduce((n, t) => n + t.events.length / 2, 0);
    if (slices !== trace.slices) problems.push(`the trace has ${slices} slices, the manifest ${trace.slices}`);
    problems.push(...compareModel(exported, tracks));
    if (trace.screenshot) {
      // The track, then zoomed in with the wheel (Ctrl held) around a point of the view.
      const { track, x, zoom } = trace.screenshot;
      for (let k = 0; k < track; ++k) await page.keyboard.press('n');
      await page.mouse.move(x, 200);
      for (let k = 0; k < zoom; ++k) {
        await page.keyboard.down('Control');
        await page.mouse.wheel(0, -30);
        await page.keyboard.up('Control');
        await page.waitForTimeout(50);
      }
      await page.waitForTimeout(300);
      const shot = path.join(dir, trace.screenshot.file);
      await page.screenshot({ path: shot });
      if (process.env.HYBRIDSIM_UPDATE_SCREENSHOT === '1')
        fs.copyFileSync(shot, path.join(root, 'scenarios/examples', trace.screenshot.file));
      console.log(`  screenshot ${shot} (${fs.statSync(shot).size} bytes)`);
    }
  }
  if (!logs.some((l) => l.text === 'Importing as Trace Event Format profile'))
    problems.push('speedscope did not import it as a Trace Event Format profile');
  for (const l of logs)
    if ((l.type === 'warning' || l.type === 'error') && !browserNoise.test(l.text)) problems.push(`console ${l.type}: ${l.text.slice(0, 300)}`);
  await page.close();
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (problems.length === 0) {
    ++passed;
    console.log(`ok   ${trace.title}: ${trace.tracks} tracks, ${trace.slices} slices, in ${seconds} s`);
  } else {
    ++failed;
    console.log(`FAIL ${trace.title} (${seconds} s):`);
    for (const p of problems.slice(0, 10)) console.log(`       ${p}`);
    if (problems.length > 10) console.log(`       ... and ${problems.length - 10} more`);
  }
}
await browser.close();
server.close();
if (blocked.length > 0) {
  ++failed;
  console.log(`FAIL requests that would have left the machine: ${[...new Set(blocked)].slice(0, 5).join(', ')}`);
}
console.log(`speedscope ${speedscopeVersion} in ${chromiumPath}: ${((Date.now() - started) / 1000).toFixed(1)} s in all`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
