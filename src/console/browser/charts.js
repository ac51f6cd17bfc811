// The server page's charts: each <figure data-query> is one request to the public metrics API (with the session
// cookie), drawn with uPlot. A chart the API refuses shows the API's message in its panel. Every figure records
// how it ended (data-state) and how many non-null points each series has (data-points), for people and tests.
(() => {
  const root = document.getElementById("charts");
  if (!root || typeof uPlot !== "function") return;
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
  const UNITS = [
    [1e9, "G"],
    [1e6, "M"],
    [1e3, "k"],
  ];
  const short = (v) => {
    if (v === null || v === undefined) return "–";
    for (const [n, s] of UNITS) if (Math.abs(v) >= n) return `${(v / n).toFixed(1)}${s}`;
    if (Number.isInteger(v) || Math.abs(v) >= 1000) return String(Math.round(v));
    return v.toFixed(Math.abs(v) >= 10 ? 1 : 2);
  };

  /** Axis ticks: as many decimals as the spacing of the ticks needs (95.18, 95.20 rather than 95.2 twice). */
  const ticksText = (ticks) => {
    const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
    if (step >= 1000 || Math.max(...ticks.map(Math.abs)) >= 1e4) return ticks.map(short);
    let decimals = 0;
    while (decimals < 6 && Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) > 1e-6) decimals++;
    return ticks.map((v) => v.toFixed(decimals));
  };

  const label = (s) => {
    const entity = s.entity
      ? Object.values(s.entity)
          .filter((v) => v !== null)
          .join(" ")
      : "";
    return entity ? `${s.name} ${entity}` : s.name;
  };

  /** Share of `part` in part + rest, per entity (cache hits among all block requests). */
  function ratios(series, part, rest) {
    const key = (s) => JSON.stringify(s.entity || {});
    const rests = new Map(series.filter((s) => s.name === rest).map((s) => [key(s), s]));
    return series
      .filter((s) => s.name === part)
      .map((s) => {
        const other = rests.get(key(s));
        const data = s.data.map((p, i) => {
          const r = other ? other.data[i].value : null;
          return { time: p.time, value: p.value === null || r === null || p.value + r === 0 ? null : (100 * p.value) / (p.value + r) };
        });
        return { ...s, name: "hit %", data };
      });
  }

  function message(figure, text, cls) {
    figure.querySelector("p")?.remove();
    const p = document.createElement("p");
    p.className = cls;
    p.textContent = text;
    figure.append(p);
  }

  async function draw(figure) {
    const url = `/api/v1/metrics/query?connection_id=${root.dataset.connection}&${root.dataset.window}&${figure.dataset.query}`;
    let series;
    try {
      const res = await fetch(url, { headers: { accept: "application/json" } });
      const body = await res.json();
      if (!res.ok) {
        figure.dataset.state = "error";
        return message(figure, body.error || `the API answered ${res.status}`, "error");
      }
      series = body;
    } catch (err) {
      figure.dataset.state = "error";
      return message(figure, `could not load: ${err.message}`, "error");
    }
    if (figure.dataset.ratio) series = ratios(series, ...figure.dataset.ratio.split(","));
    if (!series.length) {
      figure.dataset.state = "empty";
      return message(figure, "no data in this range", "muted");
    }
    const times = series[0].data.map((p) => Date.parse(p.time) / 1000);
    const data = [times, ...series.map((s) => s.data.map((p) => p.value))];
    figure.dataset.points = series.map((s) => s.data.filter((p) => p.value !== null).length).join(",");
    figure.querySelector("p")?.remove();
    const unit = figure.dataset.unit;
    new uPlot(
      {
        width: Math.max(280, figure.clientWidth - 16),
        height: 200,
        series: [{}, ...series.map((s, i) => ({ label: label(s), stroke: COLORS[i % COLORS.length], width: 1.5, value: (_u, v) => `${short(v)} ${unit}` }))],
        axes: [{}, { values: (_u, ticks) => ticksText(ticks), size: 60 }],
        scales: { x: { time: true } },
      },
      data,
      figure,
    );
    figure.dataset.state = "drawn";
  }

  for (const figure of root.querySelectorAll("figure[data-query]")) draw(figure);
})();
