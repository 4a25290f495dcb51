"""The page's stylesheet, inlined into its <style> element."""

from pipelines.dashboard.constants import TODAY_COLOUR

CSS = """
:root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7f9;--card:#fff;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif}
header{background:#0f2747;color:#fff;padding:20px 32px}
header h1{margin:0;font-size:22px;font-weight:600}
header p{margin:4px 0 0;color:#c7d2e3}
nav{display:flex;flex-wrap:wrap;gap:4px 18px;margin-top:10px}
nav a{color:#e5edf8;text-decoration:none;font-size:13px}
nav a:hover,nav a:focus{text-decoration:underline}
main{max-width:1240px;margin:0 auto;padding:20px 24px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:18px 22px;margin:18px 0;box-shadow:0 1px 2px rgba(15,23,42,.04)}
h2{font-size:18px;margin:0 0 4px}
h3{font-size:14px;margin:18px 0 4px;color:#374151}
.intro{margin:0 0 12px;color:var(--muted)}
.summary{margin:0 0 8px;font-weight:500}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:14px}
.tile{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;
border-top:4px solid var(--accent)}
.tile-label{font-weight:650;font-size:16px}
.tile-def{color:var(--muted);font-size:12px;margin-bottom:8px}
.halves{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.half+.half{border-left:1px solid var(--line);padding-left:12px}
.tile-period{font-size:12px;font-weight:600;color:#374151}
.tile-period .dates{display:block;font-weight:400;color:var(--muted)}
.tile-value{font-size:26px;font-weight:650;margin:6px 0 2px;font-variant-numeric:tabular-nums;
line-height:1.2}
.tile-value .cur{display:block;font-size:20px}
.tile-sub{color:var(--muted);font-size:12px}
.two{display:grid;grid-template-columns:1fr 1fr;gap:0 24px}
.multiples{display:grid;grid-template-columns:1fr 1fr;gap:8px 24px;margin-top:8px}
figure{margin:0}
figcaption{font-weight:600;font-size:13px;color:#374151;margin-top:12px}
@media (max-width:900px){.two,.multiples{grid-template-columns:1fr}}
.scroll{overflow-x:auto}
svg.chart{display:block;width:100%;height:auto;margin:4px 0 8px}
svg text{font-family:inherit}
.grid{stroke:#eef0f3}
.axis{stroke:#9ca3af}
.tick{fill:#4b5563;font-size:11px}
.row-label{fill:#1f2937;font-size:11.5px}
.axis-label{fill:#374151;font-size:12px;font-weight:600}
.line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
.today{stroke:$today;stroke-width:2;stroke-dasharray:4 3}
.today-label{fill:$today;font-size:11px;font-weight:600}
.hover{fill:transparent}
.hover:hover{fill:rgba(37,99,235,.08)}
.bar:hover,rect:hover{opacity:.85}
.in-bar{fill:#fff;font-size:11px;font-weight:600;pointer-events:none}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;list-style:none;padding:0;margin:6px 0 0;
font-size:12.5px}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:14px;height:10px;border-radius:2px;background:var(--c)}
.swatch.dashed{height:0;border-top:3px dashed var(--c);background:none}
.heat-legend{display:flex;align-items:center;gap:8px;font-size:12.5px;color:#374151;margin:6px 0}
.heat-legend .ramp{display:inline-block;width:180px;height:10px;border-radius:2px;
border:1px solid var(--line)}
.heat-legend .swatch{margin-left:12px}
table{border-collapse:collapse;width:100%;margin-top:10px;font-size:13px;
font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);font-size:12px;padding-bottom:4px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left}
th{background:#f9fafb;font-weight:600;color:#374151}
.num{text-align:right;white-space:nowrap}
tbody tr:hover{background:#f8fafc}
.empty{padding:18px;border:1px dashed #cbd5e1;border-radius:8px;color:var(--muted);
background:#fafafa;margin:0}
footer{color:var(--muted);font-size:12px;text-align:center;padding:0 0 30px}
""".replace("$today", TODAY_COLOUR)
