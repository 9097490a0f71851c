// The match page: live from the server-sent events while the match runs, then (or for a
// finished match, or in an exported file) a replay stepped with buttons, the slider, the keys
// and the address (?step=N, 1 the first step).
"use strict";
(function () {
  const { el, draw } = window.Croupier;
  const root = document.getElementById("match");
  const matchId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
  const api = (what) => `/api/matches/${encodeURIComponent(matchId)}/${what}`;

  function problem(text) {
    root.replaceChildren(el("div", "problem", text), el("p", "", el("a", "", "back to the lobby")));
    root.querySelector("a").href = "/";
  }

  // --- live ------------------------------------------------------------------------------------

  function live() {
    let header = null;
    let scene = null;
    let received = 0;
    const redraw = () => {
      if (!header || !scene) return;
      const running = header.status === "running";
      const now = scene.time_ms + (running ? Math.round(performance.now() - received) : 0);
      draw(root, header, scene, now);
      document.title = `${header.title} · ${header.players.join(", ")} · live`;
    };
    const ticker = setInterval(redraw, 250);
    const source = new EventSource(api("live"));
    source.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.header) header = message.header;
      if (message.scene) {
        scene = message.scene;
        received = performance.now();
      }
      redraw();
    };
    source.addEventListener("end", (event) => {
      source.close();
      clearInterval(ticker);
      if (following()) setTimeout(followNext, event.data ? 0 : FOLLOW_PAUSE_MS); // its end, then the next
      else if (event.data) problem(`the referee says: ${event.data}`);
      else setTimeout(load, 200, 10); // the match is over: its replay, every hand shown
    });
    source.addEventListener("sealed", () => {
      source.close();
      clearInterval(ticker);
      sealedWait();
    });
  }

  // --- sealed, and follow mode ---------------------------------------------------------------

  const FOLLOW_PAUSE_MS = 4000;
  const SEALED_RETRY_MS = 2000;

  // A match dealt the same cards as one still playing shows nothing yet: say so, and open it
  // once it may be watched (or, following, go on to the next live match).
  function sealedWait() {
    if (following()) return followNext();
    root.replaceChildren(el("div", "note sealed", `match ${matchId} is sealed until its twin ends: another match dealt the same cards is still being played. This page opens it as soon as it may be watched.`));
    setTimeout(load, SEALED_RETRY_MS, 0);
  }

  function following() {
    return new URLSearchParams(location.search).has("follow");
  }

  function followNext() {
    location.replace(`/follow?after=${encodeURIComponent(matchId)}`);
  }

  function followBar() {
    if (!following()) return;
    const stop = el("a", "", "stop following");
    stop.href = location.pathname;
    const bar = el("nav", "following", "following live play: the next live match opens as this one ends · ", stop);
    root.before(bar);
  }

  // --- replay ----------------------------------------------------------------------------------

  function replay(record) {
    const { header, scenes } = record;
    if (!scenes.length) return problem("this match has no steps to show yet");
    const count = scenes.length;
    const asked = Number(new URLSearchParams(location.search).get("step"));
    let index = Number.isInteger(asked) && asked >= 1 ? Math.min(asked, count) - 1 : count - 1;
    let playing = null;

    const board = el("div", "board");
    const slider = el("input", "slider");
    Object.assign(slider, { type: "range", min: 1, max: count, value: index + 1 });
    slider.setAttribute("aria-label", "step");
    const number = el("input", "step-number");
    Object.assign(number, { type: "number", min: 1, max: count, value: index + 1 });
    number.setAttribute("aria-label", "jump to step");
    const button = (label, title, action) => {
      const b = el("button", "", label);
      b.title = title;
      b.addEventListener("click", action);
      return b;
    };
    const play = button("▶ play", "play the steps one after another", () => (playing ? stop() : start()));
    const controls = el(
      "nav",
      "controls",
      button("|◀", "the first step (Home)", () => go(0)),
      button("◀", "one step back (←)", () => go(index - 1)),
      button("▶", "one step forward (→)", () => go(index + 1)),
      button("▶|", "the last step (End)", () => go(count - 1)),
      play,
      slider,
      el("label", "step-of", "step ", number, ` of ${count}`),
    );
    controls.id = "controls";

    function show() {
      slider.value = index + 1;
      number.value = index + 1;
      draw(board, header, scenes[index], null);
      try {
        const url = new URL(location.href);
        url.searchParams.set("step", index + 1);
        history.replaceState(null, "", url);
      } catch (_) {
        // a file opened from disk may not rewrite its address: the step still shows
      }
      document.title = `${header.title} · ${header.players.join(", ")} · step ${index + 1} of ${count}`;
      document.dispatchEvent(new CustomEvent("croupier-step", { detail: { header, step: index + 1, count } }));
    }
    function go(to) {
      index = Math.max(0, Math.min(count - 1, to));
      if (index === count - 1) stop();
      show();
    }
    function start() {
      if (index === count - 1) index = -1;
      play.textContent = "❚❚ pause";
      playing = setInterval(() => go(index + 1), 700);
    }
    function stop() {
      if (playing) clearInterval(playing);
      playing = null;
      play.textContent = "▶ play";
    }
    slider.addEventListener("input", () => go(Number(slider.value) - 1));
    number.addEventListener("change", () => go(Number(number.value) - 1));
    document.addEventListener("keydown", (event) => {
      if (event.target === number) return;
      const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, PageDown: index + 10, PageUp: index - 10, Home: 0, End: count - 1 };
      if (event.key in moves) {
        event.preventDefault();
        go(moves[event.key]);
      }
    });
    root.replaceChildren(el("div", "replay", controls, board));
    show();
  }

  // --- which ------------------------------------------------------------------------------------

  async function load(tries) {
    let response;
    try {
      response = await fetch(api("record"));
    } catch (error) {
      return problem(`the viewer cannot be reached: ${error}`);
    }
    if (response.ok) return replay(await response.json());
    if (response.status === 409) {
      const body = await response.json().catch(() => ({}));
      if (body.sealed) return sealedWait();
      if (tries) return setTimeout(load, 500, tries - 1); // just ended: the record is moments away
      return live();
    }
    const body = await response.json().catch(() => ({}));
    problem(body.error || `error ${response.status}`);
  }

  const embedded = document.getElementById("replay-data");
  if (embedded) replay(JSON.parse(embedded.textContent));
  else {
    followBar();
    load(0);
  }
})();
