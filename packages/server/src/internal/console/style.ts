/** The console's one style sheet, served as `/console/console.css` (no inline style anywhere). */
export const style = String.raw`
:root { --fg:#1d232b; --muted:#57606b; --line:#d5dbe2; --accent:#1f4fb8; --mem:#e8f0ff; --auth:#eef1f4;
  --warn:#a13a12; --ok:#1d6b35; --bg:#f7f8fa; --focus:#ffbf47; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--accent); }
:focus-visible { outline:3px solid var(--focus); outline-offset:1px; }
.skip { position:absolute; left:-9999px; } .skip:focus { left:8px; top:8px; background:#fff; padding:6px; z-index:9; }
header { display:flex; flex-wrap:wrap; gap:8px 16px; align-items:center; padding:8px 16px; border-bottom:1px solid var(--line); background:#fff; }
header .brand { font-size:16px; margin:0; font-weight:700; }
nav ul { display:flex; flex-wrap:wrap; gap:2px; list-style:none; margin:0; padding:0; }
nav a { display:inline-block; padding:6px 9px; color:var(--muted); border-radius:6px; text-decoration:none; }
nav a[aria-current=page] { background:var(--mem); color:var(--accent); font-weight:600; }
.who { margin-left:auto; color:var(--muted); font-size:12px; overflow-wrap:anywhere; }
main { padding:16px; max-width:1200px; }
h1 { font-size:18px; margin:0 0 10px; } h2 { font-size:15px; margin:0 0 8px; } h3 { font-size:14px; margin:10px 0 6px; }
form.inline, .toolbar { display:flex; flex-wrap:wrap; gap:8px; align-items:end; margin-bottom:12px; }
label { display:flex; flex-direction:column; font-size:12px; color:var(--muted); gap:2px; }
label.check { flex-direction:row; align-items:center; gap:6px; }
input, select, textarea { font:inherit; color:var(--fg); padding:5px 7px; border:1px solid #8a94a0; border-radius:6px; background:#fff; max-width:100%; }
textarea { width:100%; min-height:70px; }
button { font:inherit; padding:5px 10px; border:1px solid #8a94a0; border-radius:6px; background:#fff; color:var(--fg); cursor:pointer; }
button.primary { background:var(--accent); color:#fff; border-color:var(--accent); }
button.danger { color:#fff; background:var(--warn); border-color:var(--warn); }
button:disabled { opacity:.6; cursor:default; }
button.id { white-space:nowrap; font:12px ui-monospace, monospace; padding:0 4px; border:1px dashed #8a94a0; background:#fff; }
.scroll { max-width:100%; }
table { border-collapse:collapse; width:100%; background:#fff; border:1px solid var(--line); }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
td { overflow-wrap:break-word; }
th { font-size:12px; color:var(--muted); font-weight:600; white-space:nowrap; }
th button { border:0; padding:0; background:none; color:inherit; font-weight:600; }
tr[aria-selected=true] { background:#eef4ff; }
tr.focus-row:focus { outline:3px solid var(--focus); outline-offset:-3px; }
.pill { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px; background:var(--auth); white-space:nowrap; margin:1px 2px 1px 0; }
.pill.pending { background:#fff0c2; } .pill.confirmed { background:#d9f2e0; } .pill.rejected { background:#fbdcd7; }
.pill.superseded, .pill.invalidated, .pill.expired { background:#e3e6ea; } .pill.flagged { background:#7a1f00; color:#fff; }
.pill.composed, .pill.delivered { background:#d9f2e0; } .pill.shed, .pill.withheld, .pill.declined { background:#fff0c2; }
.grid { display:grid; grid-template-columns:minmax(0,1fr) minmax(0,1fr); gap:12px; }
.card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 14px; margin-bottom:12px; min-width:0; }
dl { display:grid; grid-template-columns:max-content minmax(0,1fr); gap:3px 10px; margin:0; font-size:13px; }
dt { color:var(--muted); } dd { margin:0; overflow-wrap:anywhere; }
ol.chain { list-style:none; padding:0; margin:0; display:flex; flex-direction:column; gap:6px; }
ol.chain li { border-left:3px solid var(--line); padding-left:8px; }
ol.chain li[aria-current=true] { border-color:var(--accent); }
.chip { padding:1px 2px; border-radius:3px; white-space:pre-wrap; color:inherit; text-decoration:none; }
.chip.authored { background:var(--auth); } .chip.memory { background:var(--mem); outline:1px solid #9db7ea; }
a.chip.memory:hover { background:#d4e3ff; }
pre, .prefix { font:12.5px/1.45 ui-monospace, monospace; white-space:pre-wrap; overflow-wrap:anywhere; background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px; margin:0 0 10px; }
.message h3 { margin:8px 0 4px; font-size:12px; color:var(--muted); text-transform:uppercase; }
.chart { display:flex; flex-direction:column; gap:6px; margin:8px 0 12px; }
.chart .row { display:grid; grid-template-columns:150px minmax(0,1fr); gap:8px; align-items:center; font-size:12px; }
.chart .bar { display:flex; height:14px; background:var(--auth); border-radius:4px; overflow:hidden; }
.chart .used { background:var(--accent); } .chart .cut { background:repeating-linear-gradient(45deg,#a13a12,#a13a12 3px,#f3c9b8 3px,#f3c9b8 6px); }
.chart .note { grid-column:2; color:var(--muted); }
.status { min-height:1.4em; margin:6px 0; }
.status.ok { color:var(--ok); } .error { color:var(--warn); margin:8px 0; }
.confirm-box { border:2px solid var(--warn); background:#fff7f4; border-radius:8px; padding:10px 12px; margin:8px 0; }
.empty, .muted { color:var(--muted); }
.pager { display:flex; gap:8px; align-items:center; margin:8px 0; flex-wrap:wrap; }
details > summary { cursor:pointer; font-weight:600; padding:4px 0; }
#login { max-width:420px; margin:60px auto; }
kbd { font:11px ui-monospace, monospace; border:1px solid var(--line); border-bottom-width:2px; border-radius:3px; padding:0 3px; background:#fff; }
@media (max-width: 720px) {
  main { padding:10px; }
  .grid { grid-template-columns:minmax(0,1fr); }
  .who { margin-left:0; width:100%; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display:block; width:100%; }
  table.stack thead { display:none; }
  table.stack tr { border-bottom:2px solid var(--line); padding:4px 0; }
  table.stack td { border:0; padding:2px 8px; display:grid; grid-template-columns:90px minmax(0,1fr); gap:6px; }
  table.stack td::before { content:attr(data-label); color:var(--muted); font-size:12px; }
  .chart .row { grid-template-columns:minmax(0,1fr); }
  .chart .note { grid-column:1; }
}
`
