// Headless-browser test of the live map (server/admin/map.html) against the real server.
//
//   node map_test.mjs ZONE_SERVER [CLIENT_SIM] [--screenshot PATH]
//
// Starts zone-server with 20,000 NPCs on a 4 km x 4 km world (and, when given, client-sim
// with 50 bots so players appear), opens the map in Debian's Chromium through Playwright
// (playwright-core only: no browser download), and checks that
//   0. the admin token works as an operator meets it: the address the server logs
//      (/?token=...) shows the map and the token leaves the address bar; a wrong token
//      and no token get the page's token form, and the token typed into it works;
//   1. the page draws every entity and the canvas is not blank;
//   2. it keeps getting and drawing data at >= 5 frames a second for ~3 s;
//   3. wheel zoom around the cursor and drag panning move the view as expected;
//   4. a click on a player selects it: the side panel shows its id and the server
//      answers with selected.id equal to it (with its view set);
//   5. a click on empty space clears the selection (select=0);
//   6. in a world of zones, a fresh page whose /api/map answers are the server's own with
//      world data added (a "zone" object, ghosts of two neighbours, a selected ghost's
//      owner; docs/world.md) draws the neighbours and the ghosts, lists them in the side
//      panel and legend, and shows a clicked ghost's owner, without a page error;
//   8. GM commands (with bots): selecting a player shows the GM panel; Inspect lists its
//      properties by name (as text); Mute and a Teleport to a clicked point are answered
//      ok; Kick disconnects the bot (the server's audit line and
//      zone_disconnects_total{reason="kicked"} say so);
//   7. gameplay: the server's answers carry a health value per entity and the schema's
//      event names; with a hurt entity, events and chat lines added (one of them markup a
//      player typed), the page draws the health bar and the event rings and lists the
//      chat lines as text, never as markup;
// and saves a screenshot of the zoomed-in selection (default: map.png in the current
// directory; docs/map.png is made with --screenshot docs/map.png).
//
// Exit code 0 on success, 1 with "FAIL: ..." otherwise. The server and client-sim are
// killed in every case. Environment: CHROMIUM (default /usr/bin/chromium);
// ZONE_BROWSER_MODULES, the folder whose node_modules holds playwright-core (default:
// this script's folder; run.sh installs it into the build tree).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const started = Date.now();
const OVERALL_TIMEOUT_MS = 120_000;
const NPCS = 20000;
const BOTS = 50;
const MIN_FRAMES_PER_S = 5;
const CHROMIUM_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];

// ---- Arguments -----------------------------------------------------------------------

const positional = [];
let screenshotPath = 'map.png';
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--screenshot') screenshotPath = process.argv[++i];
  else if (a.startsWith('--')) usage(`unknown option ${a}`);
  else positional.push(a);
}
const [serverBin, clientSimBin] = positional;
if (!serverBin || positional.length > 2 || !screenshotPath) usage('expected ZONE_SERVER [CLIENT_SIM]');
for (const bin of positional) {
  if (!fs.existsSync(bin)) usage(`no such binary: ${bin}`);
}
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

function usage(message) {
  console.error(`map_test: ${message}\nusage: node map_test.mjs ZONE_SERVER [CLIENT_SIM] [--screenshot PATH]`);
  process.exit(2);
}

// playwright-core is resolved from ZONE_BROWSER_MODULES so the node_modules folder can
// live in the build tree rather than next to this file.
const requireFrom = createRequire(path.join(process.env.ZONE_BROWSER_MODULES || here, 'package.json'));
const { chromium } = requireFrom('playwright-core');

// ---- Helpers -------------------------------------------------------------------------

class TestFailure extends Error {}
function check(condition, message) {
  if (!condition) throw new TestFailure(message);
}
function log(message) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}`);
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A child process whose output is kept (the last lines are printed on failure).
function startProcess(name, bin, args) {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = { name, child, lines: [], exited: false, code: null, listeners: [] };
  const onData = (chunk) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      proc.lines.push(line);
      if (proc.lines.length > 200) proc.lines.shift();
      for (const listener of proc.listeners) listener(line);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.on('exit', (code, signal) => { proc.exited = true; proc.code = code ?? signal; });
  child.on('error', (err) => { proc.exited = true; proc.code = err.message; });
  return proc;
}

// Resolves with the first match of `regex` in the process's output.
function waitForLine(proc, regex, timeoutMs) {
  return new Promise((resolve, reject) => {
    for (const line of proc.lines) {
      const m = line.match(regex);
      if (m) return resolve(m);
    }
    const timer = setInterval(() => {
      if (proc.exited) done(new TestFailure(`${proc.name} exited (${proc.code}) before printing ${regex}`));
    }, 50);
    const timeout = setTimeout(() => done(new TestFailure(`${proc.name} did not print ${regex} within ${timeoutMs} ms`)), timeoutMs);
    const listener = (line) => {
      const m = line.match(regex);
      if (m) done(null, m);
    };
    const done = (err, m) => {
      clearInterval(timer);
      clearTimeout(timeout);
      proc.listeners = proc.listeners.filter((l) => l !== listener);
      if (err) reject(err); else resolve(m);
    };
    proc.listeners.push(listener);
  });
}

async function stopProcess(proc) {
  if (!proc || proc.exited) return;
  proc.child.kill('SIGTERM');
  for (let i = 0; i < 60 && !proc.exited; i++) await sleep(50);
  if (!proc.exited) {
    proc.child.kill('SIGKILL');
    for (let i = 0; i < 20 && !proc.exited; i++) await sleep(50);
  }
}

// After a click changed the selection: the page must send `select` with the requests it
// starts from now on (the one request already in flight may not), every one of them, or
// only the first when `once` (clearing sends select=0 once, then no select at all), and
// within 3 s an answer to them must satisfy `accept` (the server publishes about every
// 200 ms). Returns { value: accept's result, answers: how many answers that took }.
async function awaitAnswer(page, select, accept, { once = false } = {}) {
  const deadline = Date.now() + 3000;
  let sentIt = false;
  for (let answers = 1; Date.now() < deadline; answers++) {
    const res = await page.waitForResponse((r) => r.url().includes('/api/map?'),
                                           { timeout: Math.max(1, deadline - Date.now()) })
      .catch(() => null);
    if (!res) break;
    const sent = new URL(res.url()).searchParams.get('select');
    if (sent === select && !(once && sentIt)) {
      sentIt = true;
    } else if (!(once && sentIt && sent === null) && !(answers === 1 && !sentIt)) {
      throw new TestFailure(`request ${answers} after the click sent select=${sent}, expected ` +
                            `select=${select}${once ? ' once' : ''}`);
    }
    if (!sentIt) continue;
    const value = accept(await res.json());
    if (value) return { value, answers };
  }
  throw new TestFailure(`no /api/map answer to select=${select} within 3 s showed the change`);
}

// ---- The test ------------------------------------------------------------------------

const procs = [];
let context = null;
let userDataDir = null;
let cleaning = null;

async function cleanup() {
  cleaning ??= (async () => {
    if (context) await context.close().catch(() => {});
    await Promise.all(procs.map(stopProcess));
    if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  })();
  return cleaning;
}
// Last resort if node is ended in a way that skips cleanup(): never leave a server behind.
process.on('exit', () => {
  for (const p of procs) if (!p.exited) p.child.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.error(`FAIL: interrupted by ${sig}`);
    cleanup().finally(() => process.exit(1));
  });
}

async function main() {
  // 1. The server: ephemeral ports, a big world full of NPCs.
  const server = startProcess('zone-server', serverBin, [
    '--config', path.join(repo, 'configs/zone.yaml'), '--bind', '127.0.0.1', '--port', '0',
    '--admin-port', '0', '--npcs', String(NPCS), '--set', 'world.max_x=4000', '--set', 'world.max_y=4000']);
  procs.push(server);
  const udpPort = (await waitForLine(server, /listening on udp [0-9.]+:(\d+)/, 20000))[1];
  const adminPort = (await waitForLine(server, /admin endpoint on http:\/\/127\.0\.0\.1:(\d+)\//, 20000))[1];
  // No admin.token_file or token_env: the server generates a token and logs the map's
  // address with it, which is what an operator opens.
  const [, mapUrl, token] = await waitForLine(server, /live map: (http:\/\/127\.0\.0\.1:\d+\/\?token=([0-9a-f]+))/, 20000);
  log(`zone-server up: udp ${udpPort}, admin http://127.0.0.1:${adminPort}/ (generated token logged)`);

  // 2. Bots, so there are players to draw and to select.
  if (clientSimBin) {
    procs.push(startProcess('client-sim', clientSimBin, [
      '--server', `127.0.0.1:${udpPort}`, '--bots', String(BOTS), '--ramp', '200',
      '--duration', String(OVERALL_TIMEOUT_MS / 1000), '--seed', '7', '--quiet']));
    log(`client-sim started with ${BOTS} bots`);
  }

  // 3. The browser: Debian's Chromium, a fresh profile.
  check(fs.existsSync(chromiumPath), `no Chromium at ${chromiumPath}`);
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zone-map-test-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 760 },
  });
  const page = context.pages()[0] || await context.newPage();
  const pageErrors = [];
  // A refused token is logged by Chromium as a failed load: expected where this test
  // gives a wrong token or none.
  const watchErrors = (p) => {
    p.on('pageerror', (err) => pageErrors.push(`page error: ${err.message}`));
    p.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().includes('status of 401')) {
        pageErrors.push(`console error: ${msg.text()} (${msg.location().url || 'no url'})`);
      }
    });
  };
  watchErrors(page);

  // 3a. The logged address shows the map, and the token leaves the address bar.
  const first = await context.newPage();
  watchErrors(first);
  await first.goto(mapUrl);
  await first.waitForFunction(() => window.zoneMap && zoneMap.frames >= 1, null, { timeout: 20000 })
    .catch(() => { throw new TestFailure('the address the server logged did not show the map'); });
  check(!new URL(first.url()).searchParams.has('token'), `the token stayed in the address: ${first.url()}`);
  check(await first.isHidden('#auth'), 'the token form shows although the token was accepted');
  // 3b. A wrong token gets the form and no data.
  await first.goto(`http://127.0.0.1:${adminPort}/?token=not-the-admin-token-0000`);
  await first.waitForFunction(() => window.zoneMap && zoneMap.needsToken, null, { timeout: 5000 })
    .catch(() => { throw new TestFailure('a wrong token did not bring up the token form'); });
  check(await first.evaluate(() => zoneMap.frames) === 0, 'a wrong token got data');
  check((await first.textContent('#conn')).includes('refused'), 'no word that the token was refused');
  await first.close();
  log('the logged address shows the map and drops the token from the address bar; a wrong token is refused');

  // 3c. No token at all (a fresh tab): the form asks for it, and what is typed works.
  await page.goto(`http://127.0.0.1:${adminPort}/`);
  log(`page loaded in ${chromiumPath} (${context.browser()?.version() ?? 'persistent context'})`);
  await page.waitForFunction(() => window.zoneMap && zoneMap.needsToken, null, { timeout: 5000 })
    .catch(() => { throw new TestFailure('without a token the page did not ask for one'); });
  check(await page.isVisible('#token'), 'the token field is not visible');
  await page.fill('#token', token);
  await page.click('#auth button');
  log('no token: the page asked for it; the token was typed in');

  // 4. Everything drawn, and the canvas really shows it.
  await page.waitForFunction((n) => window.zoneMap && window.zoneMap.frames >= 2 &&
      window.zoneMap.drawnEntities >= n, NPCS, { timeout: 20000 })
    .catch(async () => {
      const z = await page.evaluate(() => window.zoneMap && { frames: zoneMap.frames, drawn: zoneMap.drawnEntities, errors: zoneMap.errors });
      throw new TestFailure(`the map did not draw ${NPCS} entities within 20 s: ${JSON.stringify(z)}`);
    });
  const pixels = await page.evaluate(() => {
    const c = document.getElementById('map');
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const bg = [0x0d, 0x10, 0x15], npc = [0x9a, 0xa7, 0xb8];
    let nonBackground = 0, npcPixels = 0;
    const colours = new Set();
    for (let i = 0; i < img.length; i += 4) {
      const r = img[i], g = img[i + 1], b = img[i + 2];
      if (r !== bg[0] || g !== bg[1] || b !== bg[2]) nonBackground++;
      if (r === npc[0] && g === npc[1] && b === npc[2]) npcPixels++;
      if (colours.size < 1000) colours.add((r << 16) | (g << 8) | b);
    }
    return { total: img.length / 4, nonBackground, npcPixels, colours: colours.size };
  });
  log(`drawn: ${await page.evaluate(() => zoneMap.drawnEntities)} entities; canvas ${pixels.total} px, ` +
      `${pixels.nonBackground} not background, ${pixels.npcPixels} in the NPC colour, ${pixels.colours} colours`);
  check(pixels.npcPixels >= NPCS, `canvas looks blank: only ${pixels.npcPixels} pixels in the NPC colour`);
  check(pixels.colours >= 8, `canvas has only ${pixels.colours} colours: no cell shading?`);

  // 5. Live: at least MIN_FRAMES_PER_S answers drawn per second, and the tick moves.
  const before = await page.evaluate(() => ({ frames: zoneMap.frames, tick: zoneMap.tick, t: performance.now() }));
  await sleep(3000);
  const after = await page.evaluate(() => ({ frames: zoneMap.frames, tick: zoneMap.tick, t: performance.now(),
                                              latency: zoneMap.latencyMs }));
  const rate = (after.frames - before.frames) / ((after.t - before.t) / 1000);
  log(`update rate: ${rate.toFixed(1)} frames/s over ${((after.t - before.t) / 1000).toFixed(1)} s, ` +
      `tick ${before.tick} -> ${after.tick}, last answer took ${after.latency.toFixed(0)} ms`);
  check(rate >= MIN_FRAMES_PER_S, `the map updates at ${rate.toFixed(1)} frames/s, expected >= ${MIN_FRAMES_PER_S} ` +
        `(one /api/map answer for the whole world took ${after.latency.toFixed(0)} ms in the browser)`);
  check(after.tick > before.tick, `tick did not advance (${before.tick} -> ${after.tick})`);

  // 6. Pick a target: the player that sees the most entities (so the screenshot shows a
  // view set), or an NPC when no bots were started.
  if (clientSimBin) {
    await page.waitForFunction((n) => zoneMap.last.stats.players >= n, Math.ceil(BOTS / 2), { timeout: 20000 })
      .catch(() => { throw new TestFailure(`fewer than ${Math.ceil(BOTS / 2)} players joined within 20 s`); });
  }
  const wantKind = clientSimBin ? 0 : 1;
  const targetId = await page.evaluate((kind) => {
    const d = zoneMap.last, e = d.entities, r2 = d.view_radius * d.view_radius;
    const [x0, y0, x1, y1] = d.world;
    let best = 0, bestCount = -1;
    for (let i = 0; i < e.length; i += 4) {
      if (e[i + 1] !== kind) continue;
      const x = e[i + 2], y = e[i + 3];
      if (x < x0 + 150 || y < y0 + 150 || x > x1 - 150 || y > y1 - 150) continue;  // room around it
      let count = 0;
      for (let j = 0; j < e.length; j += 4) {
        const dx = e[j + 2] - x, dy = e[j + 3] - y;
        if (j !== i && dx * dx + dy * dy < r2) count++;
      }
      if (count > bestCount) { bestCount = count; best = e[i]; }
    }
    return best;
  }, wantKind);
  check(targetId, `no ${wantKind === 0 ? 'player' : 'NPC'} on the map to select`);
  const where = (id) => page.evaluate((id) => {
    const e = zoneMap.last.entities;
    for (let i = 0; i < e.length; i += 4) {
      if (e[i] === id) return { ...zoneMap.worldToScreen(e[i + 2], e[i + 3]), wx: e[i + 2], wy: e[i + 3] };
    }
    return null;
  }, id);

  // 7. Zoom in with the wheel over the target: the world point under the cursor stays put.
  // Whole pixels: mouse events carry integer client coordinates, and at the fitted zoom
  // half a pixel is metres.
  let pos = await where(targetId);
  check(pos, `entity ${targetId} vanished`);
  const cursor = { x: Math.round(pos.x), y: Math.round(pos.y) };
  await page.mouse.move(cursor.x, cursor.y);
  const anchor = await page.evaluate(([x, y]) => zoneMap.screenToWorld(x, y), [cursor.x, cursor.y]);
  for (let i = 0; i < 12 && await page.evaluate(() => zoneMap.view.scale) < 3; i++) {
    await page.mouse.wheel(0, -300);
    await sleep(60);
  }
  const zoomed = await page.evaluate(([x, y]) => ({ scale: zoneMap.view.scale, at: zoneMap.screenToWorld(x, y) }), [cursor.x, cursor.y]);
  log(`wheel zoom: ${zoomed.scale.toFixed(2)} px/m, cursor point (${anchor.x.toFixed(1)}, ${anchor.y.toFixed(1)}) -> ` +
      `(${zoomed.at.x.toFixed(1)}, ${zoomed.at.y.toFixed(1)})`);
  check(zoomed.scale >= 3, `wheel did not zoom in (scale ${zoomed.scale})`);
  check(Math.hypot(zoomed.at.x - anchor.x, zoomed.at.y - anchor.y) < 0.01,
        'zoom did not keep the world point under the cursor in place');

  // 8. Drag the target to the middle of the canvas: a pan, not a click (no selection).
  pos = await where(targetId);
  check(pos, `entity ${targetId} left the window while zooming`);
  const box = await page.locator('#map').boundingBox();
  const from = { x: Math.round(pos.x), y: Math.round(pos.y) };
  const mid = { x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) };
  const grabbed = await page.evaluate(([x, y]) => zoneMap.screenToWorld(x, y), [from.x, from.y]);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(Math.round((from.x + mid.x) / 2), Math.round((from.y + mid.y) / 2), { steps: 4 });
  await page.mouse.move(mid.x, mid.y, { steps: 4 });
  await page.mouse.up();
  const panned = await page.evaluate(([x, y]) => ({ at: zoneMap.screenToWorld(x, y), selected: zoneMap.selected }), [mid.x, mid.y]);
  check(panned.selected === 0, `a drag selected entity ${panned.selected}`);
  check(Math.hypot(panned.at.x - grabbed.x, panned.at.y - grabbed.y) < 0.01,
        `drag did not move (${grabbed.x}, ${grabbed.y}) with the cursor: (${panned.at.x}, ${panned.at.y}) is under it`);
  log(`drag pan: (${grabbed.x.toFixed(1)}, ${grabbed.y.toFixed(1)}) moved from (${from.x}, ${from.y}) to the centre (${mid.x}, ${mid.y})`);

  // 9. Click it. It moves (players at up to 7 m/s), so take its position from the latest
  // answer right before clicking, and try again if a frame arrived in between.
  let selected = 0;
  for (let attempt = 1; attempt <= 5 && selected !== targetId; attempt++) {
    await page.waitForFunction((f) => zoneMap.frames > f, await page.evaluate(() => zoneMap.frames));
    pos = await where(targetId);
    check(pos, `entity ${targetId} left the window`);
    await page.mouse.click(pos.x, pos.y);
    selected = await page.evaluate(() => zoneMap.selected);
    if (selected !== targetId) log(`click ${attempt} selected ${selected || 'nothing'}, trying again`);
  }
  check(selected === targetId, `clicking entity ${targetId} selected ${selected}`);
  const panel = await page.textContent('#sel');
  check(panel.includes(String(targetId)), `side panel does not show id ${targetId}: "${panel.trim()}"`);

  // The server publishes about every 200 ms, so the selection shows up in an answer or two.
  const confirmed = await awaitAnswer(page, String(targetId),
    (body) => body.selected && body.selected.id === targetId ? body.selected : null);
  log(`selected ${confirmed.value.name} #${confirmed.value.id} (kind ${confirmed.value.kind}) at ` +
      `(${confirmed.value.x.toFixed(1)}, ${confirmed.value.y.toFixed(1)}): view radius ${confirmed.value.view_radius} m, ` +
      `sees ${confirmed.value.view.length}; in answer ${confirmed.answers} after the click`);
  const sel = confirmed.value;
  await page.waitForFunction((id) => zoneMap.confirmed === id, targetId, { timeout: 3000 });
  const panelAfter = await page.textContent('#sel');
  check(panelAfter.includes(sel.name), `side panel does not show the name ${sel.name}: "${panelAfter.trim()}"`);
  if (wantKind === 0) check(sel.view_radius > 0, 'a selected player has no view radius');

  // 10. Screenshot: follow the selection so it sits in the middle with its rings, one
  // wheel step further out than the click needed, to show more of the neighbourhood.
  await page.check('#follow');
  await page.mouse.move(mid.x, mid.y);
  await page.mouse.wheel(0, 300);
  await page.waitForFunction((f) => zoneMap.frames >= f + 2, await page.evaluate(() => zoneMap.frames));
  const inView = await page.evaluate(() => zoneMap.drawnInView);
  if (sel.view.length) check(inView > 0, `the selection sees ${sel.view.length} entities, none drawn highlighted`);
  fs.mkdirSync(path.dirname(path.resolve(screenshotPath)), { recursive: true });
  await page.screenshot({ path: screenshotPath });
  const bytes = fs.statSync(screenshotPath).size;
  log(`screenshot: ${screenshotPath} (${(bytes / 1024).toFixed(0)} KB, ${inView} entities highlighted in view)`);
  check(bytes < 300 * 1024, `screenshot is ${bytes} bytes, expected < 300 KB`);

  // 11. A click on empty space (far from every dot) clears the selection.
  await page.uncheck('#follow');
  const empty = await page.evaluate(() => {
    const r = document.getElementById('map').getBoundingClientRect();
    const e = zoneMap.last.entities;
    const sel = zoneMap.last.selected;
    const dots = [];
    for (let i = 0; i < e.length; i += 4) dots.push(zoneMap.worldToScreen(e[i + 2], e[i + 3]));
    if (sel) dots.push(zoneMap.worldToScreen(sel.x, sel.y));
    let best = null, bestD = 0;
    for (let y = r.top + 40; y < r.bottom - 40; y += 17) {
      for (let x = r.left + 40; x < r.right - 40; x += 17) {
        let d = Infinity;
        for (const p of dots) d = Math.min(d, Math.hypot(p.x - x, p.y - y));
        if (d > bestD) { bestD = d; best = { x, y, d }; }
      }
    }
    return best;
  });
  check(empty && empty.d > 20, 'found no empty spot to click');
  await page.mouse.click(empty.x, empty.y);
  check(await page.evaluate(() => zoneMap.selected) === 0, 'a click on empty space did not clear the selection');
  const cleared = await awaitAnswer(page, '0', (body) => body.selected === null ? true : null, { once: true });
  log(`the server dropped the selection by answer ${cleared.answers} after the click`);
  const clearedPanel = await page.textContent('#sel');
  check(!clearedPanel.includes(String(targetId)), `side panel still shows ${targetId} after clearing`);
  log(`click on empty space (${empty.d.toFixed(0)} px from any dot) cleared the selection`);

  // 12. A world of zones, as the page meets it: the server's answers with world data added.
  await checkWorld(context, mapUrl, watchErrors);
  await checkGameplay(context, mapUrl, watchErrors);
  if (clientSimBin) await checkGm(context, mapUrl, watchErrors, server, adminPort);

  check(pageErrors.length === 0, `the page reported errors:\n  ${pageErrors.join('\n  ')}`);
  for (const p of procs) check(!p.exited, `${p.name} exited early (${p.code})`);
}

// The zone as "west" of a world (its 4 km square at index 0, a 40 m ghost distance) with
// "east" beside it and "north" above it: their ghosts in the band around the zone, in the
// JSON the server sends in a world (server/zone/map_publisher.cpp, tests/server/
// map_world_test.cpp). Ids carry their owner's index in the top 6 bits.
const GHOST_DISTANCE = 40;
const WORLD_GHOSTS = [
  [(1 << 26) + 11, 4, 4020, 1000],   // east's NPCs: kind 4, a ghost NPC
  [(1 << 26) + 12, 4, 4020, 2000],
  [(1 << 26) + 13, 4, 4030, 3000],
  [(2 << 26) + 21, 3, 2000, 4020],   // north's player: kind 3, a ghost player
];
function addWorld(body, select) {
  const [x0, y0, x1, y1] = body.world;
  const d = GHOST_DISTANCE;
  for (const g of WORLD_GHOSTS) body.entities.push(...g);
  body.entities_in_window += WORLD_GHOSTS.length;
  body.zone = {
    name: 'west', index: 0, covered: [x0 - d, y0 - d, x1 + d, y1 + d],
    ghosts: WORLD_GHOSTS.length, ghosts_in_window: WORLD_GHOSTS.length,
    neighbours: [
      { index: 1, name: 'east', rect: [x1, y0, x1 + 4000, y1], ghosts: 3 },
      { index: 2, name: 'north', rect: [x0, y1, x1, y1 + 4000], ghosts: 1 },
    ],
  };
  const ghost = WORLD_GHOSTS.find((g) => String(g[0]) === select);
  if (ghost) {
    body.selected = {
      id: ghost[0], name: 'wolf', kind: ghost[1] === 3 ? 0 : 1, x: ghost[2], y: ghost[3],
      view_radius: 0, view: [], party: 0, guild: 0, party_members: [], position_cm: 1,
      heading_bits: 16, engaged: false, owner: { index: ghost[0] >>> 26, name: ghost[0] >>> 26 === 1 ? 'east' : 'north' },
    };
  }
  return body;
}

async function checkWorld(context, mapUrl, watchErrors) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  watchErrors(page);
  await page.route((url) => url.pathname === '/api/map', async (route) => {
    const res = await route.fetch();
    if (!res.ok()) return route.fulfill({ response: res });
    const select = new URL(route.request().url()).searchParams.get('select');
    await route.fulfill({ response: res, json: addWorld(await res.json(), select) });
  });
  await page.goto(mapUrl);
  await page.waitForFunction(() => window.zoneMap && zoneMap.frames >= 2, null, { timeout: 20000 })
    .catch(() => { throw new TestFailure('the page did not draw the world data'); });
  check(errors.length === 0, `the page failed on world data:\n  ${errors.join('\n  ')}`);

  // Fitted to the zone and the band around it: every ghost, both neighbours.
  const drawn = await page.evaluate(() => ({ ghosts: zoneMap.drawnGhosts, neighbours: zoneMap.drawnNeighbours,
                                              corner: zoneMap.worldToScreen(-40, -40) }));
  check(drawn.ghosts === WORLD_GHOSTS.length, `drew ${drawn.ghosts} ghosts, expected ${WORLD_GHOSTS.length}`);
  check(drawn.neighbours === 2, `drew ${drawn.neighbours} neighbour rectangles, expected 2`);
  const box = await page.locator('#map').boundingBox();
  check(drawn.corner.x >= box.x && drawn.corner.y <= box.y + box.height,
        `the fitted view leaves out the covered band's corner (${JSON.stringify(drawn.corner)})`);
  const ghostPixels = await page.evaluate(() => {
    const c = document.getElementById('map');
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < img.length; i += 4) {
      // The ghost NPC colour #b48cff, give or take antialiasing.
      if (Math.abs(img[i] - 0xb4) + Math.abs(img[i + 1] - 0x8c) + Math.abs(img[i + 2] - 0xff) < 24) n++;
    }
    return n;
  });
  check(ghostPixels > 0, 'no pixel in the ghost NPC colour');
  check(await page.isVisible('#world'), 'the side panel has no World section');
  const panel = await page.textContent('#world');
  for (const want of ['west (#0)', '4 / 4', 'east (#1)', '3 ghosts', 'north (#2)', '1 ghost']) {
    check(panel.includes(want), `the World section does not say "${want}": "${panel.replace(/\s+/g, ' ').trim()}"`);
  }
  check(await page.isVisible('#legend-world'), 'the legend does not explain ghosts and neighbours');
  check((await page.textContent('#legend-world')).includes('ghost NPC'), 'the legend has no ghost NPC');

  // Zoom in on a ghost of east's and click it: the panel names east as its owner.
  const [ghostId, , gx, gy] = WORLD_GHOSTS[1];
  await page.evaluate(([x, y]) => { zoneMap.view.cx = x; zoneMap.view.cy = y; zoneMap.view.scale = 8; }, [gx, gy]);
  await page.waitForFunction((f) => zoneMap.frames >= f + 1, await page.evaluate(() => zoneMap.frames));
  const at = await page.evaluate(([x, y]) => zoneMap.worldToScreen(x, y), [gx, gy]);
  await page.mouse.click(at.x, at.y);
  check(await page.evaluate(() => zoneMap.selected) === ghostId, `clicking the ghost did not select ${ghostId}`);
  await page.waitForFunction((id) => zoneMap.confirmed === id, ghostId, { timeout: 3000 })
    .catch(() => { throw new TestFailure(`the selected ghost ${ghostId} was never confirmed`); });
  const sel = await page.textContent('#sel');
  check(sel.includes('ghost NPC') && sel.includes('east (#1)'),
        `the selection does not say it is east's ghost: "${sel.trim()}"`);
  check(errors.length === 0, `the page failed on world data:\n  ${errors.join('\n  ')}`);
  log(`world data: ${drawn.ghosts} ghosts and ${drawn.neighbours} neighbours drawn, panel and legend list them, ` +
      'a clicked ghost names its owner');
  await page.close();
}

// Gameplay on the map: the server's answers as they are (checked: a health value per
// entity shown, the schema's event names), with a hurt entity, two events at it and chat
// lines added, one of them markup a hostile player typed.
const HOSTILE_LINE = '<img src=x onerror="window.__xss=1">';
function addGameplay(body, state) {
  state.checked ??= {
    health: Array.isArray(body.health) && body.health.length === body.entities.length / 4,
    names: body.gameplay && body.gameplay.event_names && body.gameplay.event_names[0] === 'chat',
  };
  if (!state.at && body.entities.length >= 4) state.at = [body.entities[2], body.entities[3]];
  if (!state.at) return body;
  const [x, y] = state.at;
  // The first entity at 25% health, wherever it moved since: the bar follows the dot.
  body.health[0] = 25;
  body.entities[2] = x;
  body.entities[3] = y;
  body.gameplay.event_names = ['chat', 'hit', 'death'];
  body.gameplay.events = [[1, 1, body.entities[0], 0, x, y], [2, 2, body.entities[0], 0, x, y]];
  body.gameplay.chat = [[body.tick, 0, 'alice', 'hello there'], [body.tick, 4, 'mallory', HOSTILE_LINE]];
  return body;
}

async function checkGameplay(context, mapUrl, watchErrors) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  watchErrors(page);
  const state = {};
  await page.route((url) => url.pathname === '/api/map', async (route) => {
    const res = await route.fetch();
    if (!res.ok()) return route.fulfill({ response: res });
    await route.fulfill({ response: res, json: addGameplay(await res.json(), state) });
  });
  await page.goto(mapUrl);
  await page.waitForFunction(() => window.zoneMap && zoneMap.frames >= 2, null, { timeout: 20000 })
    .catch(() => { throw new TestFailure('the page did not draw the gameplay data'); });
  check(state.checked && state.checked.health, 'the server\'s answer has no health value per entity shown');
  check(state.checked && state.checked.names, 'the server\'s answer does not name the schema\'s events (chat first)');
  // Zoomed in on the hurt entity: its bar and the events' rings are drawn.
  await page.evaluate(([x, y]) => { zoneMap.view.cx = x; zoneMap.view.cy = y; zoneMap.view.scale = 6; }, state.at);
  await page.waitForFunction((f) => zoneMap.frames >= f + 2, await page.evaluate(() => zoneMap.frames));
  const drawn = await page.evaluate(() => ({ bars: zoneMap.drawnHealthBars, events: zoneMap.drawnEvents,
                                              chat: zoneMap.chatLines, xss: window.__xss === 1,
                                              markup: document.querySelectorAll('#chat img').length }));
  check(drawn.bars >= 1, `drew ${drawn.bars} health bars around a hurt entity`);
  check(drawn.events === 2, `drew ${drawn.events} event rings, expected 2`);
  check(drawn.chat === 2, `the chat panel shows ${drawn.chat} lines, expected 2`);
  check(!drawn.xss && drawn.markup === 0, 'a chat line was rendered as markup');
  const chat = await page.textContent('#chat');
  check(chat.includes('[say] alice: hello there') && chat.includes(HOSTILE_LINE),
        `the chat panel does not show the lines as text: "${chat}"`);
  check(errors.length === 0, `the page failed on gameplay data:\n  ${errors.join('\n  ')}`);
  log(`gameplay: ${drawn.bars} health bar(s), ${drawn.events} event rings and ${drawn.chat} chat lines drawn, markup shown as text`);
  await page.close();
}

// GM commands from the page (docs/operations.md): a bot's player selected, inspected,
// muted, teleported to a clicked point and kicked, each through the page's own buttons.
async function checkGm(context, mapUrl, watchErrors, server, adminPort) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  watchErrors(page);
  await page.goto(mapUrl);
  await page.waitForFunction(() => window.zoneMap && zoneMap.frames >= 2 &&
      zoneMap.last.entities.some((v, i) => i % 4 === 1 && v === 0), null, { timeout: 20000 })
    .catch(() => { throw new TestFailure('the GM page saw no player'); });
  const id = await page.evaluate(() => {
    const e = zoneMap.last.entities;
    for (let i = 0; i < e.length; i += 4) if (e[i + 1] === 0) return e[i];
    return 0;
  });
  // Centre the view on it, zoomed in, and click it (it walks: retry on a newer frame).
  const at = () => page.evaluate((id) => {
    const e = zoneMap.last.entities;
    for (let i = 0; i < e.length; i += 4) {
      if (e[i] === id) return { ...zoneMap.worldToScreen(e[i + 2], e[i + 3]), wx: e[i + 2], wy: e[i + 3] };
    }
    return null;
  }, id);
  let selected = 0;
  for (let attempt = 1; attempt <= 8 && selected !== id; attempt++) {
    const w = await at();
    check(w, `player ${id} left the zone before the GM test`);
    await page.evaluate(([x, y]) => { zoneMap.view.cx = x; zoneMap.view.cy = y; zoneMap.view.scale = 8; }, [w.wx, w.wy]);
    await page.waitForFunction((f) => zoneMap.frames > f, await page.evaluate(() => zoneMap.frames));
    const p = await at();
    check(p, `player ${id} left the zone before the GM test`);
    await page.mouse.click(p.x, p.y);
    selected = await page.evaluate(() => zoneMap.selected);
  }
  check(selected === id, `could not select player ${id} for the GM test (selected ${selected})`);
  await page.waitForFunction((id) => zoneMap.confirmed === id, id, { timeout: 3000 })
    .catch(() => { throw new TestFailure(`the selected player ${id} was never confirmed`); });
  check(await page.isVisible('#gm'), 'a selected player shows no GM panel');
  const name = await page.evaluate(() => zoneMap.last.selected.name);

  // Inspect: the panel lists the player's properties by name (the built-in game's health).
  await page.click('#gm-inspect-btn');
  await page.waitForFunction(() => document.querySelector('#gm-inspect table'), null, { timeout: 5000 })
    .catch(() => { throw new TestFailure('Inspect showed nothing'); });
  const inspected = await page.evaluate(() => {
    const rows = {};
    for (const tr of document.querySelectorAll('#gm-inspect tr')) rows[tr.cells[0].textContent] = tr.cells[1].textContent;
    const tags = new Set([...document.querySelectorAll('#gm-inspect *')].map((el) => el.tagName));
    return { rows, tags: [...tags] };
  });
  check(inspected.rows.entity === String(id), `Inspect shows entity ${inspected.rows.entity}, expected ${id}`);
  check(inspected.rows.name === name, `Inspect shows the name "${inspected.rows.name}", expected "${name}"`);
  check(/^\d+$/.test(inspected.rows.health || '') && /^\d+$/.test(inspected.rows.max_health || ''),
        `Inspect does not list the properties by name: ${JSON.stringify(inspected.rows)}`);
  check(inspected.tags.every((t) => ['TABLE', 'TBODY', 'TR', 'TD'].includes(t)),
        `the inspect panel holds more than a table of text: ${inspected.tags}`);

  // Mute, then Teleport to a point clicked 40 px right of the player.
  const answered = (command) => page.waitForFunction((c) => zoneMap.gmAnswers.some((a) => a.command === c),
                                                     command, { timeout: 5000 })
    .catch(() => { throw new TestFailure(`no answer to ${command} from the page`); });
  await page.fill('#gm-minutes', '2');
  await page.click('#gm-mute');
  await answered('mute');
  await page.click('#gm-teleport');
  check(await page.evaluate(() => zoneMap.gmAiming), 'Teleport did not wait for a point');
  // Towards the middle of the 4 km world, so the point is inside it.
  const p = await at();
  await page.mouse.click(p.x + (p.wx < 2000 ? 40 : -40), p.y);
  await answered('teleport');
  const answers = await page.evaluate(() => zoneMap.gmAnswers);
  for (const c of ['inspect', 'mute', 'teleport']) {
    const a = answers.find((x) => x.command === c);
    check(a && a.ok && a.result === 'ok', `${c} from the page was not ok: ${JSON.stringify(a)}`);
  }
  check(await page.evaluate(() => zoneMap.selected) === id, 'the teleport click changed the selection');

  // Kick: the bot is disconnected, with the reason kicked.
  await page.click('#gm-kick');
  await answered('kick');
  const kick = (await page.evaluate(() => zoneMap.gmAnswers)).find((x) => x.command === 'kick');
  check(kick.ok && kick.result === 'ok', `the kick was not ok: ${JSON.stringify(kick)}`);
  await waitForLine(server, new RegExp(`gm audit: caller=127\\.0\\.0\\.1:\\d+ command=kick id=${id} result=ok`), 5000);
  // /metrics is published by the tick thread now and then: wait for the disconnect.
  let metrics = '';
  for (let i = 0; i < 50 && !/zone_disconnects_total\{reason="kicked"\} 1\b/.test(metrics); i++) {
    if (i) await sleep(100);
    metrics = await (await page.request.get(`http://127.0.0.1:${adminPort}/metrics`)).text();
  }
  check(/zone_disconnects_total\{reason="kicked"\} 1\b/.test(metrics),
        'zone_disconnects_total{reason="kicked"} is not 1 within 5 s of the kick');
  check(/zone_gm_commands_total\{command="kick",result="ok"\} 1\b/.test(metrics),
        'zone_gm_commands_total does not count the kick');
  for (const c of ['inspect', 'mute', 'teleport']) {
    await waitForLine(server, new RegExp(`gm audit: .*command=${c} id=${id}.* result=ok`), 5000);
  }
  await page.waitForFunction((id) => !zoneMap.last.entities.some((v, i) => i % 4 === 0 && v === id), id,
                             { timeout: 5000 })
    .catch(() => { throw new TestFailure(`the kicked player ${id} is still on the map`); });
  check(errors.length === 0, `the page failed on GM commands:\n  ${errors.join('\n  ')}`);
  log(`GM: player ${name} #${id} inspected (health ${inspected.rows.health}), muted, teleported and kicked from the page`);
  await page.close();
}

const timer = setTimeout(() => {
  console.error(`FAIL: the test did not finish within ${OVERALL_TIMEOUT_MS / 1000} s`);
  cleanup().finally(() => process.exit(1));
}, OVERALL_TIMEOUT_MS);

let code = 0;
try {
  await main();
  log('PASS: live map loads, draws 20k entities, keeps updating, click selects, shows a world\'s ghosts and neighbours, health bars, events and chat, and acts on a player (GM)');
} catch (err) {
  code = 1;
  console.error(`FAIL: ${err instanceof TestFailure ? err.message : err.stack || err}`);
  for (const p of procs) {
    console.error(`--- last output of ${p.name}${p.exited ? ` (exited: ${p.code})` : ''}:`);
    console.error(p.lines.slice(-25).join('\n'));
  }
} finally {
  clearTimeout(timer);
  await cleanup();
}
process.exit(code);
