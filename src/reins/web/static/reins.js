// reins dashboard: the only script its pages load (the Content-Security-Policy allows no other,
// and no inline script). No framework, no build step. Three small parts:
// - the board stays live without a reload;
// - the review queue answers to keys (j / k move, n writes the note, a / r decide, u undoes,
//   c claims, / finds, ? shows them all);
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
// u undo the decision the banner names, c claim (or release), / find, ? the key sheet, Escape
// leaves a field. A key never fires while typing in a field. No item is current when the page
// opens, so that a key meant for one item cannot land on another: j takes the first, or the
// item that followed the last decision (marked "up"). A decision needs a note: a or r without
// one puts the cursor in the note, and Enter there then finishes that decision.
(function () {
  const queue = document.getElementById("queue");
  if (!queue) return;
  const entries = Array.from(queue.querySelectorAll("article.waiting"));
  const sheet = document.getElementById("keysheet");
  const hint = document.getElementById("hint");
  const search = document.getElementById("search");
  let current = -1;

  function say(text) {
    if (hint) hint.textContent = text;
  }

  function mark(index) {
    if (index === current) return;
    if (current >= 0) {
      entries[current].classList.remove("current");
      entries[current].removeAttribute("aria-current");
    }
    current = index;
    entries[current].classList.remove("up");
    entries[current].classList.add("current");
    entries[current].setAttribute("aria-current", "true");
    say("");
  }

  function select(index) {
    if (index < 0 || index >= entries.length) return;
    mark(index);
    entries[current].focus({ preventScroll: true });
    entries[current].scrollIntoView({ block: "nearest" });
  }

  // The item that followed the one just decided (?at=KEY): offered to j, not chosen yet.
  const at = new URLSearchParams(window.location.search).get("at");
  const up = entries.findIndex((entry) => entry.dataset.key === at);
  if (up >= 0) {
    entries[up].classList.add("up");
    entries[up].scrollIntoView({ block: "nearest" });
  }

  function parts(entry) {
    const form = entry.querySelector("form.act");
    if (!form) return null;
    return {
      form: form,
      note: form.querySelector('input[name="note"]'),
      pending: form.querySelector(".pending"),
      claim: entry.querySelector("form.claim"),
    };
  }

  function chosen() {
    if (current >= 0) return parts(entries[current]);
    say("press j to choose an item first");
    return null;
  }

  function decide(decision) {
    const found = chosen();
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

  function press(id) {
    const button = document.getElementById(id);
    if (button) button.click();
    else say("no decision to undo here");
  }

  const actions = {
    j: () => select(current < 0 ? Math.max(up, 0) : current + 1),
    k: () => select(current < 0 ? Math.max(up, 0) : Math.max(current - 1, 0)),
    a: () => decide("accept"),
    r: () => decide("reject"),
    n: () => {
      const found = chosen();
      if (found) found.note.focus();
    },
    c: () => {
      const found = chosen();
      if (found && found.claim) found.claim.requestSubmit();
    },
    u: () => press("undo"),
    "/": () => {
      if (!search) return;
      search.focus();
      search.select();
    },
    "?": () => {
      if (sheet && !sheet.open) sheet.showModal();
    },
  };

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (sheet && sheet.open) return; // the sheet's own keys: Escape closes it
    if (typing(event.target)) {
      if (event.key === "Escape") {
        event.target.blur();
        if (current >= 0) entries[current].focus({ preventScroll: true });
      }
      return;
    }
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault(); // the key is ours: "n" typed nowhere, the page not scrolled
    action();
  });
  queue.dataset.keys = "ready"; // the keys are live (a test waits for this, not for a time)
})();
