"""The page's stylesheet, inlined into its <style> element: one column on a phone, a grid of
tiles and full-width charts on a desktop; tables turn into label/value cards below 640 px."""

CSS = """
:root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7f9;--card:#fff;--accent:#2563eb}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);overflow-wrap:anywhere;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif}
header{background:#0f2747;color:#fff;padding:16px 24px}
header h1{margin:0;font-size:22px;font-weight:600}
header p{margin:4px 0 0;color:#c7d2e3}
nav{display:flex;flex-wrap:wrap;gap:4px 16px;margin-top:8px}
nav a{color:#e5edf8;text-decoration:none;font-size:13px}
nav a:hover,nav a:focus{text-decoration:underline}
.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px 12px;
margin-top:12px;align-items:end}
.field{display:flex;flex-direction:column;gap:2px;font-size:12px;color:#c7d2e3;min-width:0}
.field select,.field input{width:100%;min-width:0;font:inherit;font-size:13px;padding:4px;
border-radius:6px;border:1px solid #475569;background:#fff;color:var(--ink)}
.actions{display:flex;gap:12px;align-items:center}
.actions button{font:inherit;padding:6px 16px;border-radius:6px;border:0;background:#f59e0b;
color:#111827;font-weight:600;cursor:pointer}
.actions a{color:#e5edf8}
.filter-text{font-size:13px}
main{max-width:1400px;margin:0 auto;padding:12px 20px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:16px 18px;margin:16px 0;box-shadow:0 1px 2px rgba(15,23,42,.04);min-width:0}
h2{font-size:18px;margin:0 0 4px}
.intro{margin:0 0 10px;color:var(--muted)}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:12px}
.tile{border:1px solid var(--line);border-radius:10px;padding:12px 14px;
border-top:4px solid var(--accent);min-width:0}
.tile-label{font-weight:650;font-size:15px}
.tile-def{color:var(--muted);font-size:12px;margin-bottom:6px}
.tile-line{display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 8px;margin:4px 0}
.tile-value{font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}
.tile-ly{color:var(--muted);font-size:12px;flex-basis:100%}
.change{font-size:12px;font-weight:600;padding:0 6px;border-radius:8px;background:#f1f5f9}
.change.up{color:#047857}.change.down{color:#b91c1c}
.chart{width:100%;min-height:320px;margin:0 0 6px}
.chart-title{font-size:14px;margin:14px 0 2px;color:#374151}
.table-wrap{max-width:100%;overflow-x:auto}
table.data{border-collapse:collapse;width:100%;margin:8px 0;font-variant-numeric:tabular-nums}
table.data caption{text-align:left;color:var(--muted);font-size:12px;padding-bottom:4px}
table.data th,table.data td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right;
white-space:nowrap}
table.data th:first-child,table.data td:first-child{text-align:left}
table.data thead th{background:#f8fafc;font-size:12px;color:#374151}
.empty{color:var(--muted);font-style:italic}
.note{margin:0 0 8px;padding:6px 10px;border-left:4px solid #f59e0b;background:#fffbeb;
font-size:13px}
.headline{font-size:15px;margin:4px 0 8px}
.mix-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:4px 16px}
.mix{min-width:0}.mix .chart{min-height:240px}
details{margin:8px 0}details summary{cursor:pointer;color:var(--accent)}
footer{color:var(--muted);font-size:12px;text-align:center;padding:0 20px 24px}
a{color:var(--accent)}
@media (max-width:640px){
.mix-grid{grid-template-columns:1fr}
header{padding:12px 14px}main{padding:8px 10px 32px}section{padding:12px}
.filters{grid-template-columns:1fr 1fr}
table.data thead{display:none}
table.data caption{display:block;width:100%}
table.data,table.data tbody,table.data tr,table.data td{display:block;width:100%}
table.data tr{border:1px solid var(--line);border-radius:8px;margin:0 0 8px;padding:4px 8px}
table.data td{display:flex;justify-content:space-between;gap:12px;border:0;padding:3px 0;
white-space:normal;text-align:right}
table.data td::before{content:attr(data-label);color:var(--muted);text-align:left}
table.data td:first-child{font-weight:600}
}
"""
