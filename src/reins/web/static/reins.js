// reins dashboard: keep the board live without a reload. Polls a cheap change counter (kept
// counters only) every second; when it moved, fetches the board's figures as an HTML fragment
// rendered by the server and swaps them in. No framework, no build step.
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live) return;
  let version = live.dataset.version;
  let busy = false;

  async function tick() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const pulse = await fetch("/api/pulse", { credentials: "same-origin", cache: "no-store" });
      if (!pulse.ok) return;
      const now = String((await pulse.json()).version);
      if (now === version) return;
      const page = await fetch("/?fragment=1", { credentials: "same-origin", cache: "no-store" });
      if (!page.ok) return;
      live.innerHTML = await page.text();
      version = now;
      live.dataset.version = now;
    } catch (err) {
      // The server went away (or restarts): keep the last figures and try again.
    } finally {
      busy = false;
    }
  }

  setInterval(tick, 1000);
})();
