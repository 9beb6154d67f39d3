/* The "Live code" control of the minidl book (book_ext/live.py puts it on chapter pages).
 *
 * Pressed on a page that `make serve` serves: reads _live/server.json (the Jupyter server
 * that `make serve` started on 127.0.0.1 and its token), loads thebe from the site
 * (_live/thebe/), turns every code cell into an editor with a kernel behind it, and lets the
 * outputs of a run replace the build-time ones. Running a cell first runs the cells above it
 * that have not run yet (hidden ones included), so an exercise's check works at once.
 * Anywhere else (file://, another server) it says how to get live code: `make serve`.
 *
 * The reader's work survives a reload (minidl-live-store.js): each edit is saved under the
 * cell's stable id as it is typed and comes back when Live code starts again; a cell whose
 * text in the book changed since it was edited keeps the edit, marked, with the book's new
 * text one click away. "reset" puts back one cell's book text, "Reset this page" all of
 * them. After a cell that checks exercises runs, each check's ✓ or ✗ is remembered for the
 * progress list in the intro. Maths in outputs is typeset by the page's MathJax (minidl-live-math.js).
 */
(function () {
  "use strict";
  const ns = (window.minidlLive = window.minidlLive || {});
  const CONFIG_ID = "minidl-live-config";
  const MAKE_SERVE =
    "Live code needs a Jupyter kernel beside the site: in the project folder run " +
    "<code>make serve</code> and open the address it prints.";

  function pageConfig() {
    const el = document.getElementById(CONFIG_ID);
    return el ? JSON.parse(el.textContent) : null;
  }

  function buildControl() {
    const bar = document.createElement("div");
    bar.className = "minidl-live";
    bar.innerHTML =
      '<button type="button" class="minidl-live-button" title="Run this page\'s code">' +
      "Live code</button>" +
      '<button type="button" class="minidl-live-restart" hidden ' +
      'title="Restart the kernel; cells run again from the top when you run one">' +
      "Restart kernel</button>" +
      '<button type="button" class="minidl-live-reset-page" hidden ' +
      'title="Put back the book\'s text in every cell of this page (your saved edits of it are dropped)">' +
      "Reset this page</button>" +
      '<span class="minidl-live-status" role="status" aria-live="polite"></span>';
    const article = document.querySelector("article.bd-article") || document.querySelector("article");
    const h1 = article && article.querySelector("h1");
    if (h1) h1.insertAdjacentElement("afterend", bar);
    else if (article) article.prepend(bar);
    else document.body.prepend(bar);
    return {
      bar,
      button: bar.querySelector(".minidl-live-button"),
      restart: bar.querySelector(".minidl-live-restart"),
      resetPage: bar.querySelector(".minidl-live-reset-page"),
      status: bar.querySelector(".minidl-live-status"),
      say(html, kind) {
        this.status.innerHTML = html;
        bar.dataset.state = kind || "";
      },
    };
  }

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = src;
      s.onload = resolve;
      s.onerror = () => reject(new Error("could not load " + src));
      document.head.appendChild(s);
    });
  }

  function loadCss(href) {
    const l = document.createElement("link");
    l.rel = "stylesheet";
    l.href = href;
    document.head.appendChild(l);
  }

  function hiddenSource(source) {
    const wrap = document.createElement("div");
    wrap.className = "minidl-live-hidden";
    const pre = document.createElement("pre");
    pre.textContent = source;
    wrap.appendChild(pre);
    return { wrap, pre };
  }

  /* Mark every cell's source and output for thebe, pairing them one to one. thebe pairs the
   * n-th source with the n-th output, so a cell without output gets an empty one, and cells
   * the page does not show (remove-cell, remove-input) get a hidden source from the config.
   * Returns, in the order thebe finds them, each cell's element and its config entry (null
   * when the page's cells and the notebook's could not be paired: nothing is saved then). */
  function prepareCells(article, cfg) {
    const shown = [...article.querySelectorAll("div.cell")];
    const wanted = cfg.cells.filter((c) => !c.tags.includes("remove-cell"));
    const paired = shown.length === wanted.length;
    if (!paired) console.warn("minidl-live: page cells and notebook cells differ; using the page");
    const order = [];
    let k = 0;
    const place = (cell, info) => {
      let pre = cell.querySelector(".cell_input pre");
      if (!pre) {
        const h = hiddenSource(info ? info.source : "");
        cell.prepend(h.wrap);
        pre = h.pre;
      } else if (info) {
        pre.textContent = info.source; // the exact notebook source, not the highlighted text
      }
      pre.setAttribute("data-executable", "true");
      pre.setAttribute("data-language", "python");
      let out = cell.querySelector(".cell_output"); // inside a <details> when hide-output
      if (!out) {
        out = document.createElement("div");
        out.className = "cell_output minidl-live-output";
        cell.appendChild(out);
      }
      out.setAttribute("data-output", "true");
      order.push(cell);
    };
    if (!paired) {
      shown.forEach((cell) => place(cell, null));
      return order.map((el) => ({ el, info: null }));
    }
    for (const info of cfg.cells) {
      if (info.tags.includes("remove-cell")) {
        const cell = document.createElement("div");
        cell.className = "cell minidl-live-removed";
        const h = hiddenSource(info.source);
        cell.appendChild(h.wrap);
        const next = shown[k];
        if (next) next.before(cell);
        else if (shown.length) shown[shown.length - 1].after(cell);
        else article.appendChild(cell);
        cell.hidden = true;
        place(cell, info);
      } else {
        place(shown[k++], info);
      }
    }
    return cfg.cells.map((info, i) => ({ el: order[i], info }));
  }

  /* Running cell i first runs every earlier cell that has not run since the kernel started
   * (a cell tagged raises-exception is expected to raise, as in the build). What runs is the
   * text in the cell's editor: an edit restored from the reader's store is put there with
   * setValue, which thebe's own copy of the source does not always see. */
  function runAboveFirst(notebook, ui, placed, onRan) {
    const tags = placed.map((p) => (p.info ? p.info.tags : []));
    const cells = notebook.cells || [];
    const shown = (j) => {
      const box = placed[j] && placed[j].el && placed[j].el.querySelector(".CodeMirror");
      return box && box.CodeMirror ? box.CodeMirror.getValue() : cells[j].source;
    };
    const done = new Set();
    const original = cells.map((c) => c.execute.bind(c));
    let chain = Promise.resolve();
    cells.forEach((cell, i) => {
      cell.execute = () => {
        const run = async () => {
          for (let j = 0; j < i; j++) {
            if (done.has(j)) continue;
            ui.say(`running the cells above first (${j + 1} of ${i})…`, "busy");
            const r = await original[j](shown(j));
            done.add(j);
            onRan(j, cells[j]);
            if (r && r.error && !(tags[j] || []).includes("raises-exception")) {
              ui.say("a cell above failed: fix it, then run again", "error");
              return r;
            }
          }
          ui.say("running…", "busy");
          const r = await original[i](shown(i));
          done.add(i);
          onRan(i, cell);
          if (r && r.error) ui.say("the cell raised (see its output)", "error");
          else ui.say("ready: edit a cell, then Shift-Enter or run", "ready");
          return r;
        };
        chain = chain.then(run, run);
        return chain;
      };
    });
    return () => done.clear();
  }

  async function goLive(cfg, ui) {
    if (location.protocol === "file:") {
      ui.say(`This page was opened as a file. ${MAKE_SERVE}`, "explain");
      return;
    }
    if (!cfg.vendored) {
      ui.say("This site was built without thebe (npm was missing at build time).", "explain");
      return;
    }
    ui.button.disabled = true;
    ui.say("connecting to the kernel…", "busy");
    const visit = Math.random().toString(36).slice(2, 10);
    const maths = ns.typesetter(cfg.root); // before thebe renders anything
    let server;
    try {
      const r = await fetch(cfg.root + "_live/server.json", { cache: "no-store" });
      if (!r.ok) throw new Error(String(r.status));
      server = await r.json();
    } catch (e) {
      ui.button.disabled = false;
      ui.say(`No kernel is served with this site. ${MAKE_SERVE}`, "explain");
      return;
    }
    // sphinx-thebe leaves a Binder config on the page; thebe would merge it into ours.
    document.querySelectorAll("script[type='text/x-thebe-config']").forEach((s) => s.remove());
    try {
      loadCss(cfg.root + "_live/thebe/thebe.css");
      await loadScript(cfg.root + "_live/thebe/index.js");
      const article = document.querySelector("article") || document.body;
      const placed = prepareCells(article, cfg);
      const live = await window.thebe.bootstrap({
        useBinder: false,
        useJupyterLite: false,
        requestKernel: true,
        mountStatusWidget: false,
        mountActivateWidget: false,
        mountRestartButton: false,
        mountRestartAllButton: false,
        selector: "[data-executable]",
        outputSelector: "[data-output]",
        predefinedOutput: true,
        // thebe's default is MathJax 2 from a CDN. A URL keeps its LaTeX renderer; what it
        // loads there is a bridge to the page's own MathJax 3 (minidl-live-math.js).
        mathjaxUrl: cfg.root + "_static/minidl-live-mathjax2-bridge.js",
        mathjaxConfig: "none",
        serverSettings: {
          baseUrl: server.baseUrl,
          wsUrl: server.wsUrl,
          token: server.token,
          appendToken: true,
        },
        // a session of this visit's own: Jupyter hands out the running session of a path
        // again, so after a reload the old page's "end my session" beacon (sent on leaving)
        // would shut down the new page's kernel too
        kernelOptions: { kernelName: server.kernel || cfg.kernel, path: `${cfg.path}-${visit}` },
        codeMirrorConfig: { theme: "default", lineNumbers: false },
      });
      if (!live.session) throw new Error("the server started no kernel");
      live.notebook.rendermime.latexTypesetter = maths;
      const work = ns.keepWork(cfg, ui, placed);
      const ran = (i, cell) => {
        work.ran(i, cell);
        if (placed[i]) maths.typesetWithin(placed[i].el); // what the renderers left untypeset
      };
      const reset = runAboveFirst(live.notebook, ui, placed, ran);
      ui.restart.hidden = false;
      ui.restart.onclick = async () => {
        ui.say("restarting the kernel…", "busy");
        await live.session.kernel.restart();
        reset();
        ui.say("kernel restarted: running a cell runs the cells above it first", "ready");
      };
      // leaving the page ends its kernel (make serve would otherwise keep one per visit):
      // a beacon to the site itself, which asks the Jupyter server (no CORS at unload time)
      const end = `${cfg.root}_live/end?session=${encodeURIComponent(live.session.id)}`;
      window.addEventListener("pagehide", () => navigator.sendBeacon(end));
      document.body.classList.add("minidl-live-on");
      ui.button.textContent = "Live code: on";
      ui.bar.dataset.kernel = "ready";
      ui.say("ready: edit a cell, then Shift-Enter or run" + work.restored(), "ready");
    } catch (e) {
      console.error("minidl-live", e);
      const why = e && e.message ? e.message : String(e);
      ui.say(`Could not start live code (${why}). Is <code>make serve</code> still running? ` +
        "Reload the page to try again.", "error"); // the cells were rebuilt: no second try here
    }
  }

  function init() {
    const cfg = pageConfig();
    if (!cfg) return;
    const ui = buildControl();
    ns.announceSaved(cfg, ui);
    ui.button.addEventListener("click", () => goLive(cfg, ui), { once: false });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
