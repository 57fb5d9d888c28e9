// Drives the client's web page in headless Chromium through the DevTools
// protocol, for test_client_webui.sh.
//
// usage: node --experimental-websocket webui_drive.js URL TASK OUTDIR
//
// Opens URL (with #token=...), waits until the task table lists TASK,
// prints the task names shown, clicks that task's Suspend button, waits
// until its row says "suspended by user", saves OUTDIR/webui.png and
// prints "suspended". With TASK "-": waits 3 s and prints the status line
// and whether the tables are shown (a page without the right token).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const [url, task, outdir] = process.argv.slice(2);

const chrome = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  `--user-data-dir=${outdir}/chrome`, '--remote-debugging-port=0', '--window-size=1280,1000',
  'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
const die = (msg) => { console.error('webui_drive: ' + msg); chrome.kill('SIGKILL'); process.exit(1); };
setTimeout(() => die('timed out'), 90000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let err = '';
chrome.stderr.on('data', (d) => {
  err += d;
  const m = err.match(/DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//);
  if (m && !chrome.started) { chrome.started = true; run(m[1]).catch((e) => die(e.stack || e)); }
});

async function run(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === 'page');
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
  let id = 0;
  const waiting = {};
  ws.onmessage = (ev) => { const m = JSON.parse(ev.data); if (m.id && waiting[m.id]) waiting[m.id](m); };
  const send = (method, params = {}) => new Promise((r) => {
    waiting[++id] = r; ws.send(JSON.stringify({ id, method, params }));
  });
  const js = async (expr) => {
    const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true });
    return r.result && r.result.result ? r.result.result.value : undefined;
  };
  await send('Page.enable');
  await send('Page.navigate', { url });
  const until = async (expr, what, secs = 30) => {
    for (let i = 0; i < secs * 4; i++) { if (await js(expr)) return; await sleep(250); }
    die('page never showed ' + what + '; status: ' + await js("document.getElementById('status') && document.getElementById('status').textContent"));
  };
  if (task === '-') {
    await sleep(3000);
    console.log('status: ' + await js("document.getElementById('status').textContent"));
    console.log('main shown: ' + await js("!document.getElementById('main').hidden"));
  } else {
    const row = `document.querySelector('tr[data-task="${task}"]')`;
    await until(row, 'the task ' + task);
    console.log('tasks: ' + await js("[...document.querySelectorAll('#tasks tr[data-task]')].map((r) => r.dataset.task).join(' ')"));
    console.log('progress: ' + await js(`${row}.querySelector('progress').value`));
    await js(`${row}.querySelector('button[data-op="suspend"]').click()`);
    await until(`${row} && ${row}.querySelector('.state').textContent === 'suspended by user'`, 'the task suspended');
    const shot = await send('Page.captureScreenshot', { format: 'png' });
    fs.writeFileSync(`${outdir}/webui.png`, Buffer.from(shot.result.data, 'base64'));
    console.log('suspended');
  }
  ws.close();
  chrome.kill('SIGTERM');
  process.exit(0);
}
