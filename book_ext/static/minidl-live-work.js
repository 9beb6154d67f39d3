/* The reader's work in Live code: edits saved and restored, resets, exercise verdicts.
 *
 * minidl-live.js calls keepWork(cfg, ui, placed) once thebe has made the cells editors:
 * saved edits are put back (a cell whose book text changed since its edit is marked, with
 * the new text one click away), every later change is saved as it is typed (an edit undone
 * back to the book's text is forgotten), each edited cell shows "reset", the bar "Reset this
 * page". ran(i) is called after cell i ran: each ✓ or ✗ its checks printed is stored as the
 * verdict of the exercise the cell checks (in order, a ✎ "write your prediction first"
 * taking its place and storing nothing). Storage: minidl-live-store.js.
 */
(function () {
  "use strict";
  const ns = (window.minidlLive = window.minidlLive || {});
  const VERDICT_LINE = /^\s*([✓✗✎])/;

  function button(cls, text, title) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.title = title;
    return b;
  }

  /* The texts a cell printed or displayed: from thebe's output model when it has one
   * (nbformat outputs), else from the output area in the page. */
  function outputTexts(cell, cellEl) {
    const outputs = cell && Array.isArray(cell.outputs) ? cell.outputs : null;
    if (outputs) {
      return outputs.map((o) => {
        const t = o.output_type === "stream" ? o.text : (o.data || {})["text/plain"];
        return Array.isArray(t) ? t.join("") : t || "";
      });
    }
    const out = cellEl && cellEl.querySelector("[data-output]");
    if (!out) return [];
    const parts = out.querySelectorAll(".jp-OutputArea-output");
    return parts.length ? [...parts].map((p) => p.textContent) : [out.textContent];
  }

  /* The ✓/✗/✎ marks that start the lines of a cell's live output, in order. */
  function verdictMarks(texts) {
    const marks = [];
    for (const text of texts) {
      for (const line of text.split("\n")) {
        const m = VERDICT_LINE.exec(line);
        if (m) marks.push(m[1]);
      }
    }
    return marks;
  }

  function savedOnPage(cfg, store) {
    const ids = new Set(cfg.cells.map((c) => c.id));
    return Object.keys(store.edits()).filter((id) => ids.has(id)).length;
  }

  /* Before Live code starts: say that this page has saved edits, and offer to drop them. */
  function announceSaved(cfg, ui) {
    const store = new ns.PageStore(cfg.path);
    const n = savedOnPage(cfg, store);
    if (!n) return;
    ui.say(
      `${n} ${n === 1 ? "cell" : "cells"} you edited on this page ${n === 1 ? "is" : "are"} ` +
        "saved in this browser: Live code brings them back.",
      "saved",
    );
    ui.resetPage.hidden = false;
    ui.resetPage.onclick = () => {
      store.dropAllEdits();
      ui.resetPage.hidden = true;
      ui.say("Your saved edits of this page are dropped: the cells have the book's text.", "");
    };
  }

  function keepWork(cfg, ui, placed) {
    const store = new ns.PageStore(cfg.path);
    const editors = [];
    placed.forEach(({ el, info }) => {
      const cmEl = el.querySelector(".CodeMirror");
      if (!info || !cmEl || !cmEl.CodeMirror || cmEl.closest(".minidl-live-hidden")) return;
      const ed = { el, info, cm: cmEl.CodeMirror, stale: false, box: null };
      const thebeCell = cmEl.closest(".thebe-cell") || cmEl;
      ed.reset = button("minidl-live-reset-cell", "reset", "Put back the book's text of this cell");
      ed.reset.hidden = true;
      ed.reset.onclick = () => resetCell(ed);
      const controls = el.querySelector(".thebe-controls");
      if (controls) controls.appendChild(ed.reset);
      else thebeCell.after(ed.reset);
      ed.anchor = thebeCell;
      el.dataset.liveCell = info.id;
      editors.push(ed);
    });

    function mark(ed) {
      ed.stale = true;
      ed.el.dataset.stale = "true";
      const box = document.createElement("div");
      box.className = "minidl-live-stale";
      box.setAttribute("role", "note");
      const say = document.createElement("span");
      say.textContent =
        "The book changed this cell since you edited it; your edit is kept below. ";
      const show = button("minidl-live-show-new", "Show the book's new text",
        "The text of this cell in the book as it is now");
      const use = button("minidl-live-use-new", "Use the book's text",
        "Replace your edit with the book's new text");
      const keep = button("minidl-live-keep", "Keep my edit", "Keep your edit, unmarked");
      const pre = document.createElement("pre");
      pre.className = "minidl-live-new-text";
      pre.textContent = ed.info.source;
      pre.hidden = true;
      show.onclick = () => {
        pre.hidden = !pre.hidden;
        show.textContent = pre.hidden ? "Show the book's new text" : "Hide the book's new text";
      };
      use.onclick = () => resetCell(ed);
      keep.onclick = () => {
        unmark(ed);
        store.setEdit(ed.info.id, ed.cm.getValue(), ed.info.hash);
      };
      box.append(say, show, " ", use, " ", keep, pre);
      ed.anchor.before(box);
      ed.box = box;
    }

    function unmark(ed) {
      ed.stale = false;
      delete ed.el.dataset.stale;
      if (ed.box) ed.box.remove();
      ed.box = null;
    }

    function refreshPageButton() {
      const edited = editors.some((ed) => ed.cm.getValue() !== ed.info.source);
      ui.resetPage.hidden = !edited && savedOnPage(cfg, store) === 0;
    }

    function sync(ed) {
      const value = ed.cm.getValue();
      const edited = value !== ed.info.source;
      ed.el.dataset.edited = String(edited);
      ed.reset.hidden = !edited;
      if (!edited) {
        store.dropEdit(ed.info.id);
        unmark(ed);
      } else {
        const saved = store.edit(ed.info.id);
        // a marked edit stays marked (its old digest) until the reader settles it
        store.setEdit(ed.info.id, value, ed.stale && saved ? saved.built : ed.info.hash);
      }
      refreshPageButton();
    }

    function resetCell(ed) {
      ed.cm.setValue(ed.info.source); // the change handler forgets the saved edit
      sync(ed);
    }

    // put the saved edits back, then save every change
    let restored = 0;
    let stale = 0;
    const saved = store.edits();
    for (const ed of editors) {
      const s = saved[ed.info.id];
      if (s && typeof s.source === "string" && s.source !== ed.info.source) {
        ed.cm.setValue(s.source);
        restored += 1;
        if (s.built !== ed.info.hash) {
          mark(ed);
          stale += 1;
        }
        ed.el.dataset.edited = "true";
        ed.reset.hidden = false;
      } else if (s) {
        store.dropEdit(ed.info.id); // the book's text is now the edit itself
      }
      ed.cm.on("change", () => sync(ed));
    }
    refreshPageButton();
    ui.resetPage.onclick = () => {
      editors.forEach((ed) => resetCell(ed));
      store.dropAllEdits(); // edits of cells the book no longer has, too
      ui.resetPage.hidden = true;
      ui.say("every cell has the book's text again", "ready");
    };

    return {
      ran(i, cell) {
        const { el, info } = placed[i] || {};
        if (!info || !info.answers || !info.answers.length) return;
        const marks = verdictMarks(outputTexts(cell, el));
        info.answers.forEach((label, k) => {
          const m = marks[k];
          if (m === "✓") store.setVerdict(label, "right");
          else if (m === "✗") store.setVerdict(label, "wrong");
        });
      },
      restored() {
        if (!store.available) return " (this browser keeps no storage: edits are not saved)";
        if (!restored) return "";
        let text = `; ${restored} of your edited ${restored === 1 ? "cell is" : "cells are"} back`;
        if (stale) text += ` (${stale} marked: the book changed ${stale === 1 ? "it" : "them"} since)`;
        return text;
      },
    };
  }

  ns.keepWork = keepWork;
  ns.announceSaved = announceSaved;
  ns.verdictMarks = verdictMarks;
})();
