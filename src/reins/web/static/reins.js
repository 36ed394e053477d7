// reins dashboard: the only script its pages load (the Content-Security-Policy allows no other,
// and no inline script). No framework, no build step. Five small parts:
// - the board stays live without a reload;
// - the review queue answers to keys (j / k move, n writes the note, a / r decide, u undoes,
//   c claims, / finds, ? shows them all), each only when pressed on its own, and those that
//   record something only once Enter confirms them;
// - the "by" name a person types is kept in this browser, not taken from the server's user;
// - the queue's forms post in place, so a refusal keeps what was typed;
// - the queue stays live: what others decide or claim, and what comes to wait.
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
// leaves a field or cancels. Keys must never turn typing into decisions:
// - a key never fires while typing in a field;
// - a key acts only when pressed on its own: keys outside a field that follow one another
//   within QUIET ms are words typed where no field had the cursor ("ok as is"), and do
//   nothing (j j j or k k k still move, one item each);
// - a key that records something (a, r, u, c) only arms its action, saying what Enter will do;
//   Enter then confirms it, and any other key (or ARMED ms) cancels it.
// No item is current when the page opens, so that a key meant for one item cannot land on
// another: j takes the first, or the item that followed the last decision (marked "up"). A
// decision needs a note: n puts the cursor there, and Enter in the note only leaves it.
(function () {
  const queue = document.getElementById("queue");
  if (!queue) return;
  const QUIET = 400; // ms: a key closer than this to another one is typing
  const ARMED = 10000; // ms an armed action waits for its Enter
  const entries = Array.from(queue.querySelectorAll("article.waiting"));
  const sheet = document.getElementById("keysheet");
  const hint = document.getElementById("hint");
  const search = document.getElementById("search");
  let current = -1;
  let burst = []; // the keys pressed outside a field, each within QUIET of the one before
  let settling = null; // the timer that acts on the burst once QUIET passed
  let armed = null; // { run, said, where, expires }: the action Enter confirms

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

  // An action that records something waits for Enter; ``where`` shows what Enter will do.
  function arm(run, said, where, cancelled) {
    disarm(null);
    armed = { run: run, where: where, cancelled: cancelled, expires: Date.now() + ARMED };
    where.textContent = `${said}; Esc or any other key cancels`;
  }

  function disarm(why) {
    if (!armed) return;
    if (why !== null) armed.where.textContent = why === "" ? armed.cancelled : why;
    armed = null;
  }

  function decide(decision) {
    const found = chosen();
    if (!found) return;
    const button = found.form.querySelector(`button[name="decision"][value="${decision}"]`);
    if (!button) return;
    if (!found.note.value.trim()) {
      found.pending.textContent = "a decision needs a note: press n to write it";
      return;
    }
    const key = entries[current].dataset.key;
    const verb = decision === "accept" ? "accepts" : "rejects";
    arm(() => found.form.requestSubmit(button), `Enter ${verb} ${key}`, found.pending,
        `not ${decision}ed`);
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
      // Enter in a note never decides: it leaves the note for the keys that do.
      event.preventDefault();
      found.pending.textContent = "press a to accept or r to reject";
      found.note.blur();
      entry.focus({ preventScroll: true });
    });
  }

  const undo = document.getElementById("undo");
  const done = document.getElementById("done-text");

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
      if (!found || !found.claim) return;
      const button = found.claim.querySelector("button");
      const verb = button && button.classList.contains("release") ? "releases" : "claims";
      arm(() => found.claim.requestSubmit(), `Enter ${verb} ${entries[current].dataset.key}`,
          hint || found.pending, `not ${verb === "claims" ? "claimed" : "released"}`);
    },
    u: () => {
      if (!undo || !hint) {
        say("no decision to undo here");
        return;
      }
      arm(() => undo.click(), `Enter undoes: ${done ? done.textContent.trim() : "it"}`, hint,
          "not undone");
    },
    "/": () => {
      if (!search) return;
      search.focus();
      search.select();
    },
    "?": () => {
      if (sheet && !sheet.open) sheet.showModal();
    },
  };
  const MOVES = new Set(["j", "k"]); // a run of one of these is moving, not typing

  function forget() {
    if (settling !== null) window.clearTimeout(settling);
    settling = null;
    burst = [];
  }

  function settle() {
    const keys = burst;
    forget();
    if (typing(document.activeElement)) return; // the person went on to a field meanwhile
    if (keys.length === 1 || (MOVES.has(keys[0]) && keys.every((k) => k === keys[0]))) {
      for (const key of keys) if (actions[key]) actions[key]();
      return;
    }
    say("you typed words, not keys: nothing was done");
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.isComposing) return;
    if (sheet && sheet.open) return; // the sheet's own keys: Escape closes it
    if (typing(event.target)) {
      forget();
      disarm("");
      if (event.key === "Escape") {
        event.target.blur();
        if (current >= 0) entries[current].focus({ preventScroll: true });
      }
      return;
    }
    if (event.key === "Escape") {
      forget();
      disarm("");
      return;
    }
    if (event.key === "Enter" && armed && !burst.length) {
      event.preventDefault(); // Enter confirms the armed action, and presses nothing else
      const run = armed.run;
      const late = Date.now() > armed.expires;
      disarm(late ? "that waited too long: press its key again" : "…");
      if (!late) run();
      return;
    }
    if (event.key.length !== 1 && event.key !== "Enter" && event.key !== "Backspace") return;
    disarm(""); // any other key cancels what waited for Enter
    if (actions[event.key]) event.preventDefault(); // our key: "n" typed nowhere, no scroll
    if (!burst.length) say(""); // what the hint said was of the keys before
    if (!actions[event.key] && !burst.length) {
      // A key of no action starts no burst of its own unless another follows it soon.
      burst = [event.key];
      settling = window.setTimeout(forget, QUIET);
      return;
    }
    burst.push(event.key);
    if (settling !== null) window.clearTimeout(settling);
    settling = window.setTimeout(settle, QUIET);
  });
  queue.dataset.keys = "ready"; // the keys are live (a test waits for this, not for a time)
})();

// A typed note is never lost. The queue's forms (decide, claim, undo) post without leaving the
// page: a refusal (another's claim, an item that moved, a missing token) is said beside the
// buttons and everything typed stays where it was; only what the server did sends the page on
// to where it answered. A note is also kept in this tab as it is typed, so a reload (or a post
// that went another way) brings it back until its decision is recorded.
(function () {
  const queue = document.getElementById("queue");
  if (!queue) return;
  const DRAFT = "reins.note.";

  function stash(key, value) {
    try {
      if (value) window.sessionStorage.setItem(DRAFT + key, value);
      else window.sessionStorage.removeItem(DRAFT + key);
    } catch (err) {
      // not kept across a reload; the field still holds it
    }
  }

  function stashed(key) {
    try {
      return window.sessionStorage.getItem(DRAFT + key);
    } catch (err) {
      return null;
    }
  }

  for (const entry of queue.querySelectorAll("article.waiting")) {
    const note = entry.querySelector('form.act input[name="note"]');
    if (!note) continue;
    const kept = stashed(entry.dataset.key);
    if (kept && !note.value) note.value = kept;
    note.addEventListener("input", () => stash(entry.dataset.key, note.value));
  }

  // What a refusal says: a page of the server's (its problem paragraph), or its plain text.
  async function refusal(response) {
    const text = await response.text();
    if ((response.headers.get("content-type") || "").includes("text/html")) {
      const doc = new DOMParser().parseFromString(text, "text/html");
      const problem = doc.getElementById("problem");
      if (problem) return problem.textContent.trim();
    }
    return text.trim() || `refused (${response.status})`;
  }

  async function post(form, submitter) {
    const where = form.querySelector(".pending, .said"); // the decision's, or a claim's
    const say = (text, refused) => {
      if (!where) return;
      where.textContent = text;
      where.classList.toggle("refusal", refused);
    };
    const body = new URLSearchParams(new FormData(form, submitter));
    say("…", false);
    let response;
    try {
      response = await fetch(form.action, {
        method: "POST",
        body: body,
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch (err) {
      say("the dashboard did not answer: nothing was recorded; what you typed is kept", true);
      return;
    }
    if (response.ok) {
      const key = body.get("key");
      if (key && body.get("decision")) stash(key, ""); // decided: the draft is done with
      window.location.assign(response.url);
      return;
    }
    say(`${await refusal(response)} (what you typed is kept)`, true);
  }

  const forms = [...queue.querySelectorAll("form.act"), ...document.querySelectorAll("form.undo")];
  for (const form of forms) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      post(form, event.submitter);
    });
  }
  queue.dataset.posts = "ready";
})();

// The queue, live: every couple of seconds the page asks what became of the items it shows
// (/api/queue, with its keys and its filter) and says it in place: a card another person
// settled is greyed with who did what (its buttons off, its note left as typed), a claim made
// or ended is shown, the count of items waiting follows, and items that came to wait under the
// filter are offered with a link, never slid in under the person's keys.
(function () {
  const queue = document.getElementById("queue");
  if (!queue) return;
  const EVERY = 2000; // ms
  const entries = Array.from(queue.querySelectorAll("article.waiting"));
  const waiting = document.getElementById("waiting");
  const fresh = document.getElementById("fresh");
  const here = new URLSearchParams(window.location.search);
  let busy = false;

  function ask() {
    const params = new URLSearchParams();
    for (const name of ["rule", "search", "after"]) {
      const value = here.get(name);
      if (value) params.set(name, value);
    }
    for (const entry of entries) params.append("key", entry.dataset.key);
    return `/api/queue?${params}`;
  }

  function holdOf(entry, card) {
    let line = entry.querySelector("p.hold");
    if (!card.holder) {
      if (line) line.remove();
      delete entry.dataset.holder;
      return;
    }
    if (!line) {
      line = document.createElement("p");
      line.className = "hold";
      line.setAttribute("role", "note");
      entry.querySelector(".sides").before(line);
    }
    line.textContent = `claimed by ${card.holder} until ${card.until}: their decision to make, unless they release it`;
    entry.dataset.holder = card.holder;
  }

  function settle(entry, card) {
    if (entry.classList.contains("settled")) return;
    entry.classList.add("settled");
    const note = entry.querySelector(".live-note");
    if (note) note.textContent = `${card.settled}: it no longer waits here`;
    for (const button of entry.querySelectorAll("form button")) button.disabled = true;
    const line = entry.querySelector("p.hold");
    if (line) line.remove();
  }

  function unsettle(entry) {
    // Undone by whoever decided it: it waits again, and can be decided again.
    if (!entry.classList.contains("settled")) return;
    entry.classList.remove("settled");
    const note = entry.querySelector(".live-note");
    if (note) note.textContent = "its decision was undone: it waits again";
    for (const button of entry.querySelectorAll("form button")) {
      if (!button.hidden) button.disabled = false; // Enter's hidden stopper stays off
    }
  }

  function offer(keys) {
    if (!fresh) return;
    fresh.textContent = "";
    if (!keys.length) return;
    const n = keys.length;
    fresh.append(`${n} more item${n === 1 ? "" : "s"} to review on this page: `);
    const link = document.createElement("a");
    link.href = window.location.pathname + window.location.search;
    link.textContent = "show them";
    fresh.append(link);
  }

  async function tick() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const response = await fetch(ask(), { credentials: "same-origin", cache: "no-store" });
      if (!response.ok) return;
      const now = await response.json();
      if (waiting) waiting.textContent = `${now.waiting} waiting`;
      const cards = new Map(now.cards.map((card) => [card.key, card]));
      for (const entry of entries) {
        const card = cards.get(entry.dataset.key);
        if (!card) continue;
        if (card.waiting) {
          unsettle(entry);
          holdOf(entry, card);
        } else settle(entry, card);
      }
      offer(now.fresh);
      queue.dataset.live = String(Number(queue.dataset.live || 0) + 1); // polls answered
    } catch (err) {
      // The server went away (or restarts): keep the page as it is and ask again.
    } finally {
      busy = false;
    }
  }

  setInterval(tick, EVERY);
})();
