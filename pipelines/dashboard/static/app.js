// Draws every chart of the page with plotly.js from the figure specs embedded as JSON, and turns
// a click on a month into a drill-down to its nights (when the figure carries links).
(function () {
  "use strict";
  var charts = document.querySelectorAll("[data-figure]");
  charts.forEach(function (el) {
    var spec = JSON.parse(document.getElementById(el.getAttribute("data-figure")).textContent);
    Plotly.newPlot(el, spec.data, spec.layout, {
      responsive: true,
      displayModeBar: false,
    });
    var links = (spec.meta && spec.meta.links) || null;
    if (links) {
      el.on("plotly_click", function (ev) {
        var x = ev.points && ev.points[0] && String(ev.points[0].x).slice(0, 7);
        if (x && links[x]) { window.location.href = links[x]; }
      });
    }
  });
  document.documentElement.setAttribute("data-charts", String(charts.length));
})();
