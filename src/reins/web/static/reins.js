// reins dashboard: the only script its pages load (the Content-Security-Policy allows no other,
// and no inline script). No framework, no build step. Three small parts:
// - the board stays live without a reload;
// - the review queue answers to keys (j / k move, n writes the note, a / r decide);
// - the "by" name a person types is kept in this browser, not taken from the server's user.
// Every action still posts the page's own form, with its CSRF token: the keys press its buttons.
"use strict";

// The board: polls a cheap change counter (kept counters only) every second; when it moved,
// fetches the board's figures as an HTML fragment rendered by the server and swaps them in.
(function () {
  const live = document.getElementById("live");
  if (!live || !live.dataset.version) return;
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

// "by": whoever acts is named by this browser. The server's user is only the fallback a blank
// field leaves (shown as the placeholder).
(function () {
  const KEY = "reins.by";
  const fields = Array.from(document.querySelectorAll('input[name="by"]'));
  if (!fields.length) return;

  function load() {
    try {
      return window.localStorage.getItem(KEY);
    } catch (err) {
      return null; // storage refused (a private window, a policy): the field works unkept
    }
  }

  function keep(value) {
    try {
      if (value) window.localStorage.setItem(KEY, value);
      else window.localStorage.removeItem(KEY);
    } catch (err) {
      // not kept; the form still carries what was typed
    }
  }

  const kept = load();
  for (const field of fields) {
    if (kept) field.value = kept;
    field.addEventListener("input", function () {
      const value = field.value.trim();
      for (const other of fields) if (other !== field) other.value = field.value;
      keep(value);
    });
  }
  for (const form of new Set(fields.map((f) => f.form).filter(Boolean))) {
    form.addEventListener("submit", function () {
      const field = form.querySelector('input[name="by"]');
      if (field) keep(field.value.trim());
    });
  }
})();

// The review queue by keys: j / k next / previous item, n the note, a accept, r reject,
// Escape leaves a field. A key never fires while typing in a field. A decision needs a note:
// a or r without one puts the cursor in the note, and Enter there then finishes that decision.
(function () {
  const queue = document.getElementById("queue");
  if (!queue) return;
  const entries = Array.from(queue.querySelectorAll("article.waiting"));
  if (!entries.length) return;
  let current = -1;

  function mark(index) {
    if (index === current) return;
    if (current >= 0) {
      entries[current].classList.remove("current");
      entries[current].removeAttribute("aria-current");
    }
    current = index;
    entries[current].classList.add("current");
    entries[current].setAttribute("aria-current", "true");
  }

  function select(index, scroll = true) {
    if (index < 0 || index >= entries.length) return;
    mark(index);
    entries[current].focus({ preventScroll: true });
    if (scroll) entries[current].scrollIntoView({ block: "nearest" });
  }

  function parts(entry) {
    const form = entry.querySelector("form.act");
    if (!form) return null;
    return {
      form: form,
      note: form.querySelector('input[name="note"]'),
      pending: form.querySelector(".pending"),
    };
  }

  function decide(decision) {
    const found = current >= 0 ? parts(entries[current]) : null;
    if (!found) return;
    const button = found.form.querySelector(`button[name="decision"][value="${decision}"]`);
    if (!button) return;
    if (!found.note.value.trim()) {
      // Say what Enter will do, and wait for the note.
      found.form.dataset.decision = decision;
      found.pending.textContent = `write a note, then Enter to ${decision}`;
      found.note.focus();
      return;
    }
    found.form.requestSubmit(button);
  }

  function typing(target) {
    return target instanceof Element && target.closest("input, textarea, select, [contenteditable]");
  }

  for (const entry of entries) {
    const found = parts(entry);
    // Clicking into an item's fields makes it the current one: the keys then act on it.
    entry.addEventListener("focusin", () => mark(entries.indexOf(entry)));
    if (!found) continue;
    found.note.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      // Enter finishes a decision begun with a or r, never decides on its own.
      event.preventDefault();
      const decision = found.form.dataset.decision;
      if (decision && found.note.value.trim()) {
        found.form.requestSubmit(found.form.querySelector(`button[value="${decision}"]`));
      } else {
        found.pending.textContent = "press a to accept or r to reject";
        found.note.blur();
        entry.focus({ preventScroll: true });
      }
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") {
        event.target.blur();
        if (current >= 0) entries[current].focus({ preventScroll: true });
      }
      return;
    }
    const actions = {
      j: () => select(current + 1),
      k: () => select(Math.max(current - 1, 0)),
      a: () => decide("accept"),
      r: () => decide("reject"),
      n: () => {
        const found = current >= 0 ? parts(entries[current]) : null;
        if (found) found.note.focus();
      },
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault(); // the key is ours: "n" typed nowhere, the page not scrolled
    if (current < 0 && event.key !== "j" && event.key !== "k") select(0);
    action();
  });

  // Start at the item that followed the one just decided (?at=KEY), else at the first.
  const at = new URLSearchParams(window.location.search).get("at");
  const start = entries.findIndex((entry) => entry.dataset.key === at);
  select(start >= 0 ? start : 0, start >= 0);
})();
