/** A sparkline drawn on the server as inline SVG: no script, no request of its own; a gap where a value is missing. */
const WIDTH = 120;
const HEIGHT = 28;

/** The polylines' point lists: one per run of consecutive values, scaled into the box (zero at the bottom). */
export function sparklineRuns(values: ReadonlyArray<number | null>): string[] {
  const top = Math.max(0, ...values.filter((v): v is number => v !== null));
  const x = (i: number) => (values.length > 1 ? (i / (values.length - 1)) * WIDTH : WIDTH / 2);
  const y = (v: number) => (top > 0 ? HEIGHT - 1 - (v / top) * (HEIGHT - 2) : HEIGHT - 1);
  const runs: string[] = [];
  let run: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (run.length) runs.push(run.join(" "));
      run = [];
    } else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  if (run.length) runs.push(run.join(" "));
  return runs;
}

export function Sparkline(props: { values: ReadonlyArray<number | null>; label: string }) {
  const runs = sparklineRuns(props.values);
  return (
    <svg
      class="sparkline"
      width={WIDTH}
      height={HEIGHT}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={props.label}
      data-points={String(props.values.filter((v) => v !== null).length)}
    >
      {runs.map((points) => (points.includes(" ") ? <polyline points={points} /> : <circle cx={points.split(",")[0]} cy={points.split(",")[1]} r="1.2" />))}
    </svg>
  );
}
