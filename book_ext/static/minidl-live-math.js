/* Maths in live outputs, typeset by the page's own MathJax 3 (the copy under _static/mathjax/
 * that book_ext/offline.py puts into the site), the way the build typesets it.
 *
 * thebe's outputs are JupyterLab renderers; they call a "latex typesetter" after rendering
 * LaTeX, Markdown and HTML. thebe's own one loads MathJax 2 from a CDN, so Live code
 * installs this one instead. A text/latex output becomes what myst-nb writes at build time
 * for it (a display-maths block, delimiters stripped); Markdown and HTML outputs are
 * typeset in place, with the page's delimiters. A page with no maths of its own has no
 * MathJax loaded: the first live formula loads the site's copy.
 */
(function () {
  "use strict";
  const ns = (window.minidlLive = window.minidlLive || {});
  const PAIRS = [["\\(", "\\)"], ["\\[", "\\]"], ["$$", "$$"], ["$", "$"]];

  /* As myst-nb's strip_latex_delimiters: the outermost pair of maths delimiters, if any. */
  function stripDelimiters(source) {
    const s = source.trim();
    for (const [start, end] of PAIRS) {
      if (s.length >= start.length + end.length && s.startsWith(start) && s.endsWith(end)) {
        return s.slice(start.length, s.length - end.length);
      }
    }
    return s;
  }

  let shared = null; // the typesetter Live code installed (the bridge hands work to it)

  /* The MathJax 2 calls thebe's typesetter makes, on whatever window.MathJax is now (MathJax 3
   * replaces its global object when it starts, so this runs again after a load). */
  function installMathJax2Bridge() {
    const MJ = (window.MathJax = window.MathJax || {});
    if (MJ.Hub && MJ.Hub.minidl) return;
    MJ.Hub = {
      minidl: true,
      config: {},
      Config() {},
      Configured() {},
      Register: { StartupHook() {} },
      Queue(...jobs) {
        for (const job of jobs) {
          if (Array.isArray(job) && job[0] === "Typeset" && shared) shared.typeset(job[2]);
        }
      },
    };
  }

  function loadMathJax(root) {
    return new Promise((resolve, reject) => {
      const started = () =>
        window.MathJax.startup.promise.then(() => {
          installMathJax2Bridge();
          resolve(window.MathJax);
        });
      if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
        started();
        return;
      }
      let script = document.querySelector("script[src*='mathjax/tex-chtml']");
      if (!script) {
        // configured as Sphinx and myst configure it on pages with maths
        window.MathJax = {
          Hub: (window.MathJax || {}).Hub,
          options: {
            processHtmlClass: "tex2jax_process|mathjax_process|math|output_area",
            ignoreHtmlClass: "tex2jax_ignore|mathjax_ignore|document",
          },
          startup: { typeset: false },
        };
        script = document.createElement("script");
        script.src = root + "_static/mathjax/tex-chtml.js";
        script.async = true;
        document.head.appendChild(script);
      }
      script.addEventListener("load", started);
      script.addEventListener("error", () => reject(new Error("MathJax did not load")));
    });
  }

  /* A typesetter for JupyterLab renderers ({ typeset(node) }), bound to the site's root. */
  function typesetter(root) {
    let mathjax = null;
    let busy = Promise.resolve();
    shared = {
      typeset(node) {
        mathjax = mathjax || loadMathJax(root);
        const job = async () => {
          const MJ = await mathjax;
          if (node.classList.contains("jp-RenderedLatex")) {
            if (node.querySelector(".minidl-live-math")) return; // typeset already
            const tex = stripDelimiters(node.textContent);
            const block = document.createElement("div");
            block.className = "math notranslate nohighlight minidl-live-math";
            block.textContent = `\\[${tex}\\]`;
            node.replaceChildren(block);
            await MJ.typesetPromise([block]);
          } else {
            node.classList.add("mathjax_process");
            await MJ.typesetPromise([node]);
          }
          node.dataset.typeset = "true";
        };
        // MathJax typesets one call at a time
        busy = busy.then(job, job).catch((e) => console.warn("minidl-live: maths", e));
        return busy;
      },
      /* Typeset the LaTeX outputs inside ``el`` that no renderer typeset (thebe attaches
       * its output areas without telling the renderers, which typeset on attach). */
      typesetWithin(el) {
        const pending = [...el.querySelectorAll(".jp-RenderedLatex")].filter(
          (node) => !node.dataset.typeset,
        );
        return Promise.all(pending.map((node) => this.typeset(node)));
      },
    };
    return shared;
  }

  ns.typesetter = typesetter;
  ns.installMathJax2Bridge = installMathJax2Bridge;
  ns.stripDelimiters = stripDelimiters;
})();
