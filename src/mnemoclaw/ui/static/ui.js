// Highlights the lines a citation names (#L10-L20) and the query's words in snippets.
"use strict";
function highlightLines() {
  const m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
  document.querySelectorAll("tr.hl").forEach((tr) => tr.classList.remove("hl"));
  if (!m) return;
  const first = +m[1], last = +(m[2] || m[1]);
  for (let n = first; n <= last; n++) {
    const tr = document.getElementById("L" + n);
    if (tr) tr.classList.add("hl");
  }
  const top = document.getElementById("L" + first);
  if (top) top.scrollIntoView({ block: "center" });
}
function showTab(name) {
  const source = document.getElementById("source"), rendered = document.getElementById("rendered");
  if (!source || !rendered) return;
  source.hidden = name === "rendered";
  rendered.hidden = name !== "rendered";
}
// a letter of an alphabet that spaces its words (a Chinese character next to a word is a boundary)
const WORDCHAR = "[\\p{Script=Latin}\\p{Script=Greek}\\p{Script=Cyrillic}\\p{N}_]";
function markWords() {
  const list = document.querySelector(".results");
  if (!list) return;
  const words = (list.dataset.query || "").split(/\s+/).filter((w) => w.length > 1 || /[\u3400-\u9fff]/.test(w));
  if (!words.length) return;
  // Chinese, Japanese, Korean: any occurrence (no spaces between words). Other words: whole words
  // only ("is" never marks "Risk"), longer ones with their plural and -ed/-ing endings.
  const parts = words.map((w) => {
    const e = w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    if (/[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(w)) return e;
    return "(?<!" + WORDCHAR + ")" + e + (w.length >= 4 ? "(?:s|es|ed|ing|'s)?" : "") + "(?!" + WORDCHAR + ")";
  });
  const escape = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  list.querySelectorAll(".snippet").forEach((pre) => {
    // the query's Chinese words as this snippet writes them in the other script (資料庫 for 数据库),
    // and the irregular forms of its words (won for win), these as whole words
    const other = (pre.dataset.marks || "").split(" ").filter((w) => w).map((w) =>
      /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(w) ? escape(w)
        : "(?<!" + WORDCHAR + ")" + escape(w) + "(?!" + WORDCHAR + ")");
    const re = new RegExp("(" + parts.concat(other).join("|") + ")", "giu");
    const text = pre.textContent;
    pre.textContent = "";
    let last = 0;
    text.replace(re, (hit, _w, at) => {
      pre.append(text.slice(last, at));
      const mark = document.createElement("mark");
      mark.textContent = hit;
      pre.append(mark);
      last = at + hit.length;
      return hit;
    });
    pre.append(text.slice(last));
  });
}
// While a sync or rebuild runs, the health page shows how far it is, then reloads.
function followJob() {
  const box = document.getElementById("job");
  if (!box || !box.dataset.running) return;
  const bar = box.querySelector("progress"), line = box.querySelector(".jobline");
  bar.hidden = false;
  const poll = () => fetch("/index/progress", { credentials: "same-origin" }).then((r) => r.json()).then((s) => {
    if (s.running) {
      bar.max = Math.max(s.filesTotal, 1);
      bar.value = s.filesDone;
      line.textContent = s.kind + ": " + s.filesDone + " of " + s.filesTotal + " files";
      setTimeout(poll, 300);
    } else {
      location.reload();
    }
  });
  poll();
}
document.addEventListener("DOMContentLoaded", () => {
  followJob();
  document.querySelectorAll("[data-tab]").forEach((a) => a.addEventListener("click", (e) => {
    e.preventDefault();
    showTab(a.dataset.tab);
  }));
  highlightLines();
  markWords();
});
window.addEventListener("hashchange", highlightLines);
