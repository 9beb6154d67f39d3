/* Loaded by thebe in place of MathJax 2 (minidl-live.js gives thebe this file's address).
 *
 * thebe's LaTeX typesetter loads MathJax 2 from its mathjaxUrl on first use and then calls
 * MathJax.Hub; an output area it renders while starting up keeps that typesetter. This
 * file gives it the Hub calls it makes, answered by the page's own MathJax 3
 * (minidl-live-math.js), so no second MathJax is ever loaded.
 */
window.minidlLive && window.minidlLive.installMathJax2Bridge();
