// The estate page's AI overview: asked of the API with the session cookie once the page is shown, so a slow
// LLM never holds up the table. Text only (textContent), never markup from the answer.
(async () => {
  const panel = document.getElementById("overview");
  if (!panel) return;
  const say = (text, cls) => {
    const p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    panel.replaceChildren(panel.querySelector("h2"), p);
  };
  try {
    const res = await fetch("/api/v1/overview", { headers: { accept: "application/json" } });
    const body = await res.json();
    if (!res.ok) return say(body.error || `the overview answered ${res.status}`, "error");
    if (body.summary) return say(body.summary);
    say(body.status === "generating" ? "A summary is being written; reload in a moment." : "No summary yet.", "muted");
  } catch (err) {
    say(`The overview could not be loaded: ${err.message}`, "error");
  }
})();
