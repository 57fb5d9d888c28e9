/*
 * The web page's three files (webui.c serves them): the HTML, one script
 * that drives the client through POST /rpc with the same GUI RPC
 * operations a Manager uses, and a style sheet. Everything a reply holds is
 * put into the page as text (textContent), never as markup.
 */
#include <string.h>

#include "client/gui_rpc_int.h"
#include "volsched/client.h"

static const char page_html[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>volsched client</title><link rel=\"stylesheet\" href=\"/app.css\"></head>\n"
    "<body>\n"
    "<header><h1>volsched client</h1> <span id=\"status\">not connected</span></header>\n"
    "<form id=\"login\"><label>Token (the password in gui_rpc_auth.cfg) "
    "<input id=\"token\" type=\"password\" autocomplete=\"off\"></label> "
    "<button type=\"submit\">Connect</button></form>\n"
    "<main id=\"main\" hidden>\n"
    "<section><h2>Activity</h2>\n"
    "<p>Computing: <select id=\"run_mode\"><option value=\"always\">always</option>"
    "<option value=\"auto\">according to preferences</option><option value=\"never\">suspended"
    "</option></select> Network: <select id=\"network_mode\"><option value=\"always\">always"
    "</option><option value=\"auto\">according to preferences</option><option value=\"never\">"
    "suspended</option></select> <span id=\"cc\"></span></p></section>\n"
    "<section><h2>Projects</h2><table id=\"projects\"><thead><tr><th>Project</th><th>User</th>"
    "<th>Credit</th><th>Share</th><th>Status</th><th></th></tr></thead><tbody></tbody></table>\n"
    "<form id=\"attach\">Attach to <input id=\"attach_url\" placeholder=\"project URL\" "
    "size=\"40\">"
    " with account key <input id=\"attach_key\" size=\"34\"> <button type=\"submit\">Attach"
    "</button></form></section>\n"
    "<section><h2>Tasks</h2><table id=\"tasks\"><thead><tr><th>Project</th><th>Task</th>"
    "<th>Progress</th><th>Elapsed</th><th>Deadline</th><th>Status</th><th></th></tr></thead>"
    "<tbody></tbody></table></section>\n"
    "<section><h2>Transfers</h2><table id=\"transfers\"><thead><tr><th>Project</th><th>File</th>"
    "<th>Size</th><th>Direction</th><th>Retries</th></tr></thead><tbody></tbody></table>"
    "</section>\n"
    "<section><h2>Computing preferences</h2><form id=\"prefs\">\n"
    "<label>Store at least <input id=\"work_buf_min_days\" size=\"5\"> days of work</label>\n"
    "<label>and up to <input id=\"work_buf_additional_days\" size=\"5\"> more days</label>\n"
    "<label>Use at most <input id=\"max_ncpus_pct\" size=\"5\"> % of the CPUs</label>\n"
    "<label>Use at most <input id=\"cpu_usage_limit\" size=\"5\"> % of CPU time</label>\n"
    "<label>Switch between tasks every <input id=\"cpu_scheduling_period_minutes\" size=\"5\"> "
    "minutes</label>\n"
    "<label>Use at most <input id=\"disk_max_used_gb\" size=\"5\"> GB of disk (0: no limit)"
    "</label>\n"
    "<button type=\"submit\">Save</button> <span id=\"prefs_status\"></span></form></section>\n"
    "<section><h2>Event log</h2><pre id=\"log\"></pre></section>\n"
    "</main>\n"
    "<script src=\"/lib.js\"></script><script src=\"/view.js\"></script>"
    "<script src=\"/app.js\"></script>\n"
    "</body></html>\n";

static const char lib_js[] =
    "'use strict';\n"
    "const $ = (id) => document.getElementById(id);\n"
    "let token = sessionStorage.getItem('vs_token') || '';\n"
    "const m = location.hash.match(/token=([^&]+)/);\n"
    "if (m) { token = decodeURIComponent(m[1]); sessionStorage.setItem('vs_token', token);\n"
    "  history.replaceState(null, '', location.pathname); }\n"
    "const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;')\n"
    "  .replace(/>/g, '&gt;').replace(/\"/g, '&quot;');\n"
    "async function rpc(body) {\n"
    "  const r = await fetch('/rpc', {method: 'POST', body: body,\n"
    "    headers: {'Authorization': 'Bearer ' + token, 'Content-Type': 'text/xml'}});\n"
    "  if (r.status === 401) { $('main').hidden = true; $('login').hidden = false;\n"
    "    throw new Error('wrong token'); }\n"
    "  if (!r.ok) throw new Error(await r.text());\n"
    "  const x = new DOMParser().parseFromString(await r.text(), 'text/xml');\n"
    "  const e = x.querySelector('boinc_gui_rpc_reply > error');\n"
    "  if (e) throw new Error(e.textContent);\n"
    "  return x;\n"
    "}\n"
    "const txt = (n, tag) => { const e = n.querySelector(tag); return e ? e.textContent.trim() : "
    "''; };\n"
    "const num = (n, tag) => parseFloat(txt(n, tag)) || 0;\n"
    "const has = (n, tag) => n.querySelector(tag) !== null;\n"
    "function cell(tr, text) { const td = document.createElement('td'); td.textContent = text;\n"
    "  tr.appendChild(td); return td; }\n"
    "function button(td, label, op) { const b = document.createElement('button');\n"
    "  b.textContent = label; b.dataset.op = label.toLowerCase().replace(/ /g, '_');\n"
    "  b.onclick = () => op().then(refresh).catch(say); td.appendChild(b); }\n"
    "function say(e) { $('status').textContent = String(e.message || e); }\n"
    "function hms(s) { s = Math.round(s); const h = Math.floor(s / 3600);\n"
    "  return h + ':' + String(Math.floor(s / 60) % 60).padStart(2, '0') + ':' +\n"
    "    String(s % 60).padStart(2, '0'); }\n"
    "function fill(id, rows) { const tb = $(id).querySelector('tbody'); tb.textContent = '';\n"
    "  rows.forEach((r) => tb.appendChild(r)); }\n"
    "const projOp = (url, op) => rpc('<project_' + op + '><project_url>' + esc(url) +\n"
    "  '</project_url></project_' + op + '>');\n"
    "const taskOp = (url, name, op) => rpc('<' + op + '_result><project_url>' + esc(url) +\n"
    "  '</project_url><name>' + esc(name) + '</name></' + op + '_result>');\n"
    "const modes = {1: 'always', 2: 'auto', 3: 'never'};\n"
    "";

static const char view_js[] =
    "'use strict';\n"
    "let seqno = 0;\n"
    "let prefsLoaded = false;\n"
    "async function refresh() {\n"
    "  const st = await rpc('<get_state/>');\n"
    "  const cc = await rpc('<get_cc_status/>');\n"
    "  $('status').textContent = 'connected';\n"
    "  $('run_mode').value = modes[num(cc, 'task_mode')] || 'auto';\n"
    "  $('network_mode').value = modes[num(cc, 'network_mode')] || 'auto';\n"
    "  $('cc').textContent = num(cc, 'task_suspend_reason') ? 'computing suspended' : '';\n"
    "  const names = {};\n"
    "  fill('projects', [...st.querySelectorAll('client_state > project')].map((p) => {\n"
    "    const url = txt(p, 'master_url'); names[url] = txt(p, 'project_name') || url;\n"
    "    const tr = document.createElement('tr'); cell(tr, names[url]);\n"
    "    cell(tr, txt(p, 'user_name')); cell(tr, num(p, 'user_total_credit').toFixed(0));\n"
    "    cell(tr, num(p, 'resource_share').toFixed(0));\n"
    "    const flags = [];\n"
    "    if (has(p, 'suspended_via_gui')) flags.push('suspended');\n"
    "    if (has(p, 'dont_request_more_work')) flags.push('no new tasks');\n"
    "    cell(tr, flags.join(', ')); const td = cell(tr, '');\n"
    "    button(td, 'Update', () => projOp(url, 'update'));\n"
    "    if (has(p, 'suspended_via_gui')) button(td, 'Resume', () => projOp(url, 'resume'));\n"
    "    else button(td, 'Suspend', () => projOp(url, 'suspend'));\n"
    "    if (has(p, 'dont_request_more_work'))\n"
    "      button(td, 'Allow new tasks', () => projOp(url, 'allowmorework'));\n"
    "    else button(td, 'No new tasks', () => projOp(url, 'nomorework'));\n"
    "    return tr; }));\n"
    "  fill('tasks', [...st.querySelectorAll('client_state > result')].map((r) => {\n"
    "    const url = txt(r, 'project_url'), name = txt(r, 'name');\n"
    "    const at = r.querySelector('active_task');\n"
    "    const tr = document.createElement('tr'); tr.dataset.task = name;\n"
    "    cell(tr, names[url] || url); cell(tr, name);\n"
    "    const pct = at ? num(at, 'fraction_done') * 100 : (has(r, 'ready_to_report') ? 100 : 0);\n"
    "    const pc = cell(tr, ''); const bar = document.createElement('progress');\n"
    "    bar.max = 100; bar.value = pct; pc.appendChild(bar);\n"
    "    pc.appendChild(document.createTextNode(' ' + pct.toFixed(1) + '%'));\n"
    "    cell(tr, hms(at ? num(at, 'elapsed_time') : num(r, 'final_elapsed_time')));\n"
    "    cell(tr, new Date(num(r, 'report_deadline') * 1000).toLocaleString());\n"
    "    let s = has(r, 'ready_to_report') ? 'ready to report' : at ?\n"
    "      (num(at, 'scheduler_state') === 2 ? 'running' : 'waiting') : 'ready to start';\n"
    "    if (has(r, 'suspended_via_gui')) s = 'suspended by user';\n"
    "    cell(tr, s).className = 'state'; const td = cell(tr, '');\n"
    "    if (has(r, 'suspended_via_gui')) button(td, 'Resume', () => taskOp(url, name, "
    "'resume'));\n"
    "    else button(td, 'Suspend', () => taskOp(url, name, 'suspend'));\n"
    "    button(td, 'Abort', () => confirm('Abort ' + name + '?') ?\n"
    "      taskOp(url, name, 'abort') : Promise.resolve());\n"
    "    return tr; }));\n"
    "  const ft = await rpc('<get_file_transfers/>');\n"
    "  fill('transfers', [...ft.querySelectorAll('file_transfer')].map((f) => {\n"
    "    const tr = document.createElement('tr'); const url = txt(f, 'project_url');\n"
    "    cell(tr, names[url] || url); cell(tr, txt(f, 'name'));\n"
    "    cell(tr, (num(f, 'nbytes') / 1e6).toFixed(2) + ' MB');\n"
    "    cell(tr, num(f, 'is_upload') ? 'upload' : 'download'); cell(tr, txt(f, 'num_retries'));\n"
    "    return tr; }));\n"
    "  const ms = await rpc('<get_messages><seqno>' + seqno + '</seqno></get_messages>');\n"
    "  ms.querySelectorAll('msg').forEach((g) => { seqno = Math.max(seqno, num(g, 'seqno'));\n"
    "    const p = txt(g, 'project');\n"
    "    $('log').textContent += new Date(num(g, 'time') * 1000).toLocaleString() + ' [' +\n"
    "      (p || '---') + '] ' + txt(g, 'body') + '\\n'; });\n"
    "  if (!prefsLoaded) { prefsLoaded = true; const gp = await "
    "rpc('<get_global_prefs_working/>');\n"
    "    $('prefs').querySelectorAll('input').forEach((i) => { i.value = num(gp, i.id); }); }\n"
    "}\n"
    "";

static const char app_js[] =
    "'use strict';\n"
    "function setMode(op, v) { return rpc('<' + op + '><' + v + '/><duration>0</duration></' +\n"
    "  op + '>'); }\n"
    "$('run_mode').onchange = (e) => setMode('set_run_mode', "
    "e.target.value).then(refresh).catch(say);\n"
    "$('network_mode').onchange = (e) =>\n"
    "  setMode('set_network_mode', e.target.value).then(refresh).catch(say);\n"
    "$('attach').onsubmit = (e) => { e.preventDefault();\n"
    "  rpc('<project_attach><project_url>' + esc($('attach_url').value.trim()) +\n"
    "    '</project_url><authenticator>' + esc($('attach_key').value.trim()) +\n"
    "    '</authenticator></project_attach>').then(refresh).catch(say); };\n"
    "$('prefs').onsubmit = (e) => { e.preventDefault(); let x = '<global_preferences>\\n';\n"
    "  $('prefs').querySelectorAll('input').forEach((i) => {\n"
    "    const v = parseFloat(i.value); if (!isNaN(v)) x += '<' + i.id + '>' + v + '</' + i.id + "
    "'>\\n'; });\n"
    "  x += '</global_preferences>';\n"
    "  rpc('<set_global_prefs_override>\\n' + x + '\\n</set_global_prefs_override>')\n"
    "    .then(() => rpc('<read_global_prefs_override/>'))\n"
    "    .then(() => { $('prefs_status').textContent = 'saved'; }).catch(say); };\n"
    "$('login').onsubmit = (e) => { e.preventDefault(); token = $('token').value;\n"
    "  sessionStorage.setItem('vs_token', token); start(); };\n"
    "let timer = null;\n"
    "function start() { refresh().then(() => { $('login').hidden = true; $('main').hidden = "
    "false;\n"
    "  if (!timer) timer = setInterval(() => refresh().catch(say), 2000); }).catch(say); }\n"
    "if (token) start();\n";

static const char app_css[] =
    "body{font-family:sans-serif;margin:1em;color:#222}h1{display:inline;font-size:1.4em}\n"
    "h2{font-size:1.1em;margin:1.2em 0 .3em}#status{color:#666;margin-left:1em}\n"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.2em .5em;"
    "border-bottom:1px solid #ddd;font-size:.9em}\n"
    "progress{width:8em}pre{background:#f6f6f6;max-height:20em;overflow:auto;font-size:.8em}\n"
    "label{display:block;margin:.2em 0}button{margin-right:.3em}\n";

bool vs_client_webui_asset(const char *path, const char **out_data, size_t *out_len,
                           const char **out_type)
{
    static const struct {
        const char *path, *type, *data;
        size_t len;
    } files[] = {
        {"/", "text/html; charset=utf-8", page_html, sizeof(page_html) - 1},
        {"/index.html", "text/html; charset=utf-8", page_html, sizeof(page_html) - 1},
        {"/lib.js", "text/javascript; charset=utf-8", lib_js, sizeof(lib_js) - 1},
        {"/view.js", "text/javascript; charset=utf-8", view_js, sizeof(view_js) - 1},
        {"/app.js", "text/javascript; charset=utf-8", app_js, sizeof(app_js) - 1},
        {"/app.css", "text/css; charset=utf-8", app_css, sizeof(app_css) - 1},
    };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (strcmp(path, files[i].path) == 0) {
            *out_data = files[i].data;
            *out_len = files[i].len;
            *out_type = files[i].type;
            return true;
        }
    return false;
}
