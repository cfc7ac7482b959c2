import type { Hono } from "hono";
import type { AppEnv } from "../../http/types.js";

/** The account page's only stylesheet and script, served by the app (no CDN, no build step). */

export const ACCOUNT_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fafafa; --muted: #59636e; --line: #d0d7de;
  --accent: #0b5cad; --on-accent: #fff; --ok-fg: #1a7f37; --danger: #b42318; --ok-bg: #e7f5ea; --err-bg: #fdecea; --card: #fff; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #30363d;
  --accent: #4493f8; --on-accent: #0d1117; --ok-fg: #3fb950; --danger: #f85149; --ok-bg: #12261a; --err-bg: #2d1214; --card: #161b22; } }
* { box-sizing: border-box; }
pre { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; overflow-x: auto;
  white-space: pre-wrap; word-break: break-all; margin: .25rem 0 1rem; }
dl.examples dt { font-weight: 600; } dl.examples dd { margin: 0; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
/* Header links are targets of at least 24 px (WCAG 2.5.8). */
header nav a { display: inline-block; min-height: 24px; padding: .2rem 0; line-height: 24px; }
.skip { position: absolute; left: -9999px; top: 0; }
.skip:focus { left: .5rem; top: .5rem; background: var(--card); padding: .5rem .75rem; border: 1px solid var(--accent); z-index: 10; }
/* Phones (390 px): a select never overflows its card; a permission name is not broken mid-word. */
select { max-width: 100%; font: inherit; }
.chart-box { display: inline-block; max-width: 100%; }
.chart-axis { display: flex; justify-content: space-between; margin: 0; font-size: .8rem; }
th[scope="row"] .muted { overflow-wrap: normal; word-break: normal; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
p, pre, code, dd { overflow-wrap: anywhere; }
/* Phones: the keys table becomes one card per key, each cell labelled above its content. */
@media (max-width: 44rem) {
  table, tbody, tr, th, td { display: block; } thead { position: absolute; left: -9999px; }
  tr { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; margin-bottom: .75rem; }
  th[scope="row"] { border: 0; padding: .25rem 0; font-size: 1.05rem; }
  td { border: 0; padding: .25rem 0; }
  td::before { content: attr(data-label); display: block; color: var(--muted); font-size: .85rem; }
}
h1 { font-size: 1.6rem; margin: 0 0 1rem; } h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
.providers { margin-top: 1rem; } .providers h2 { font-size: 1.05rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; max-width: 32rem; }
.created { max-width: none; border-color: var(--accent); margin-bottom: 1rem; } .card h2 { margin-top: 0; }
label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
input { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 6px; width: 100%; max-width: 22rem;
  background: var(--bg); color: var(--fg); }
/* Every control is a tap target of at least 44 × 44 px (WCAG 2.5.5). */
button, a.button, select, input:not([type=checkbox]):not([type=radio]) { min-height: 44px; min-width: 44px; }
button { font: inherit; padding: .4rem .9rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: var(--on-accent); cursor: pointer; margin-top: .5rem; }
form.inline { display: inline-block; margin: .75rem .75rem 0 0; }
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: transparent; color: var(--danger); border-color: var(--danger); }
button:focus-visible, a:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
a { color: var(--accent); }
.hint, .who { color: var(--muted); font-size: .9rem; }
.notice { padding: .6rem .9rem; border-radius: 6px; } .notice.ok { background: var(--ok-bg); } .notice.error { background: var(--err-bg); }
.top { display: flex; justify-content: space-between; align-items: baseline; flex-wrap: wrap; gap: 1rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
td.actions form { display: inline-block; margin-right: .5rem; } td.actions button { margin: 0; }
.status.active { color: var(--ok-fg); } .status.revoked, .status.expired, .status.exhausted { color: var(--muted); }
.secret { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
.secret code { font-size: 1rem; padding: .4rem .6rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; word-break: break-all; }
.inline { display: flex; gap: .75rem; align-items: end; flex-wrap: wrap; margin: .5rem 0; }
.inline label { margin: 0 0 .25rem; width: 100%; } .inline input { flex: 1; }
.identities { list-style: none; padding: 0; } .identities li { display: flex; gap: 1rem; align-items: center; }
/* keys (keys-views.tsx) */
.table-wrap { overflow-x: auto; max-width: 100%; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
a.button { display: inline-flex; align-items: center; justify-content: center; padding: .35rem .8rem; border-radius: 6px;
  border: 1px solid var(--accent); text-decoration: none; }
th[scope="row"] .key-name { display: block; } th[scope="row"] code, th[scope="row"] .muted { display: block; font-weight: 400; }
dl.facts { margin: 0; font-size: .9rem; } dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0 0 .25rem; }
svg.chart { display: block; margin-bottom: .25rem; } svg.chart rect { fill: var(--accent); }
svg.chart line { stroke: var(--muted); stroke-width: 1; } svg.chart rect.refused { fill: var(--danger); }
.chart-legend { font-size: .85rem; margin: 0 0 .25rem; } .swatch { display: inline-block; width: .7em; height: .7em; }
.swatch.allowed { background: var(--accent); } .swatch.refused { background: var(--danger); }
div.actions { display: flex; flex-direction: column; align-items: stretch; gap: .5rem; }
.form-actions { display: flex; flex-wrap: wrap; align-items: center; gap: .75rem; margin-top: .75rem; }
.form-actions button { margin: 0; }
a.button.danger { color: var(--danger); border-color: var(--danger); }
select { max-width: 100%; font: inherit; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; } label.check { font-weight: 400; }
label.check { display: flex; align-items: center; gap: .5rem; min-height: 44px; margin: 0; }
label.check input { width: auto; flex: none; } .create-key { margin-top: 1rem; } .muted { color: var(--muted); }
`;

/** Copy buttons: `<button data-copy="ID">` copies the text of element ID. */
export const ACCOUNT_JS = `"use strict";
document.addEventListener("click", function (event) {
  var button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  var text = source.textContent || "";
  var done = function () { button.textContent = "Copied"; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { button.textContent = "Select and copy"; });
  } else {
    var range = document.createRange();
    range.selectNodeContents(source);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = document.execCommand("copy") ? "Copied" : "Select and copy";
  }
});
`;

/** The account pages' stylesheet and script (cached an hour). */
export function registerAccountAssets(app: Hono<AppEnv>): void {
  app.get("/account/assets/account.css", (c) =>
    c.body(ACCOUNT_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600" }),
  );
  app.get("/account/assets/account.js", (c) =>
    c.body(ACCOUNT_JS, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
    }),
  );
}
