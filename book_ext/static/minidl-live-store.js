/* What Live code keeps in the browser, and the progress list that reads it back.
 *
 * One localStorage entry per chapter, "minidl-live/v1/<chapter source path>", holding
 *   edits:    { <cell id>: { source, built, at } }   the reader's text of a cell, and the
 *             digest of the book's text it was edited from (a rebuild that changed the
 *             cell gives the cell a new digest: the edit is kept, and marked);
 *   verdicts: { <exercise label>: { verdict: "right" | "wrong", at } }  never the answer.
 * Cell ids and digests are written into each page at build time (book_ext/live_cells.py).
 * Storage belongs to the site's origin (scheme, host, port): `make serve` on its usual
 * port finds it again the next day; file:// pages and other ports have their own.
 * The progress list (the intro's "Your progress", see book_ext/live.py) shows the book's
 * exercises with these verdicts; it needs no kernel and no network.
 */
(function () {
  "use strict";
  const ns = (window.minidlLive = window.minidlLive || {});
  const PREFIX = "minidl-live/v1/";
  const MARK = { right: "✓", wrong: "✗", none: "·" };

  function storage() {
    try {
      const s = window.localStorage;
      s.getItem(PREFIX); // throws where storage is disabled
      return s;
    } catch (e) {
      return null;
    }
  }

  function read(path) {
    const s = storage();
    let data = {};
    try {
      data = JSON.parse((s && s.getItem(PREFIX + path)) || "{}") || {};
    } catch (e) {
      console.warn("minidl-live: unreadable saved state for " + path, e);
    }
    return { edits: data.edits || {}, verdicts: data.verdicts || {} };
  }

  function write(path, data) {
    const s = storage();
    if (!s) return false;
    try {
      if (!Object.keys(data.edits).length && !Object.keys(data.verdicts).length) {
        s.removeItem(PREFIX + path);
      } else {
        s.setItem(PREFIX + path, JSON.stringify(data));
      }
      return true;
    } catch (e) {
      console.warn("minidl-live: could not save (storage full?)", e);
      return false;
    }
  }

  /* One chapter's saved state. Every change reads the entry afresh, so two tabs of the
   * same chapter do not undo each other's other cells. */
  class PageStore {
    constructor(path) {
      this.path = path;
      this.available = storage() !== null;
    }
    edits() {
      return read(this.path).edits;
    }
    edit(id) {
      return read(this.path).edits[id] || null;
    }
    setEdit(id, source, built) {
      const data = read(this.path);
      data.edits[id] = { source, built, at: Date.now() };
      return write(this.path, data);
    }
    dropEdit(id) {
      const data = read(this.path);
      delete data.edits[id];
      return write(this.path, data);
    }
    dropAllEdits() {
      const data = read(this.path);
      data.edits = {};
      return write(this.path, data);
    }
    verdicts() {
      return read(this.path).verdicts;
    }
    setVerdict(label, verdict) {
      const data = read(this.path);
      data.verdicts[label] = { verdict, at: Date.now() };
      const ok = write(this.path, data);
      window.dispatchEvent(new CustomEvent("minidl-live-verdict", { detail: { label, verdict } }));
      return ok;
    }
  }

  /* The progress list: every chapter with exercises, each exercise with its last verdict
   * (a fold the reader opened stays open when the list is drawn again). */
  function renderProgress(host, cfg) {
    const opened = new Set(
      [...host.querySelectorAll("details[open]")].map((d) => d.dataset.path),
    );
    host.textContent = "";
    let right = 0;
    let total = 0;
    const summary = document.createElement("p");
    summary.className = "minidl-progress-summary";
    host.appendChild(summary);
    for (const chapter of cfg.chapters) {
      const verdicts = read(chapter.path).verdicts;
      // one fold per chapter, open once the reader has tried one of its exercises
      const section = document.createElement("details");
      section.className = "minidl-progress-chapter";
      section.dataset.path = chapter.path;
      section.open =
        opened.has(chapter.path) || chapter.exercises.some((ex) => ex.label in verdicts);
      const h = document.createElement("summary");
      h.className = "minidl-progress-title";
      const a = document.createElement("a");
      a.href = chapter.url;
      a.textContent = chapter.title;
      h.appendChild(a);
      const count = document.createElement("span");
      count.className = "minidl-progress-count";
      h.appendChild(count);
      section.appendChild(h);
      const ul = document.createElement("ul");
      let here = 0;
      for (const ex of chapter.exercises) {
        const v = (verdicts[ex.label] || {}).verdict || "none";
        const li = document.createElement("li");
        li.className = "minidl-progress-item";
        li.dataset.label = ex.label;
        li.dataset.verdict = v;
        const mark = document.createElement("span");
        mark.className = "minidl-progress-mark";
        mark.textContent = MARK[v] || MARK.none;
        mark.title = { right: "right", wrong: "not yet right", none: "not tried" }[v];
        const link = document.createElement("a");
        link.href = `${chapter.url}#${ex.label}`;
        link.textContent = ex.title;
        li.append(mark, " ", link);
        if (!ex.cell) li.append(" (no live check)");
        ul.appendChild(li);
        here += v === "right" ? 1 : 0;
      }
      count.textContent = ` ${here} of ${chapter.exercises.length} right`;
      right += here;
      total += chapter.exercises.length;
      section.appendChild(ul);
      host.appendChild(section);
    }
    summary.textContent = storage()
      ? `${right} of ${total} exercises right in this browser.`
      : "This browser keeps no storage for this page, so no progress can be shown.";
  }

  function initProgress() {
    const el = document.getElementById("minidl-progress-config");
    const host = document.querySelector(".minidl-progress");
    if (!el || !host) return;
    const cfg = JSON.parse(el.textContent);
    renderProgress(host, cfg);
    window.addEventListener("storage", () => renderProgress(host, cfg)); // another tab
    window.addEventListener("minidl-live-verdict", () => renderProgress(host, cfg)); // this one
    host.dataset.ready = "true";
  }

  ns.PageStore = PageStore;
  ns.renderProgress = renderProgress;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initProgress);
  else initProgress();
})();
