// The replay page's "play on from here": forks the finished match at the step shown (the same
// deal and history, then bundled bots from there, or you in a seat of your choice) and opens the
// fork, live (or your seat, in this browser). Served pages only:
// an exported file has no viewer to ask.
"use strict";
(function () {
  const { el } = window.Croupier;
  let shown = null; // {header, step, count} of the replay's step on screen

  function control() {
    const bots = el("select", "fork-bots", el("option", "", "heuristic"), el("option", "", "random"),
        el("option", "", "boss-1"), el("option", "", "boss-2"));
    bots.setAttribute("aria-label", "bots that play on");
    const you = el("select", "fork-you", el("option", "", "no one"));
    you.options[0].value = "";
    shown.header.players.forEach((name, seat) => {
      const option = el("option", "", `seat ${seat} (${name})`);
      option.value = String(seat);
      you.append(option);
    });
    you.setAttribute("aria-label", "the seat you play, in this browser");
    const go = el("button", "fork", "play on from here");
    go.title = "a new match from this step: the same deal and moves so far, then bots (never rated)";
    const said = el("span", "fork-said");
    go.addEventListener("click", async () => {
      if (!shown) return;
      go.disabled = true;
      said.textContent = "forking…";
      try {
        const response = await fetch(`/api/matches/${encodeURIComponent(shown.header.match_id)}/fork`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Croupier-Fork": "1" },
          body: JSON.stringify({ step: shown.step, bots: bots.value, you: you.value === "" ? null : Number(you.value) }),
        });
        const body = await response.json().catch(() => ({}));
        if (!response.ok) throw new Error(body.error || `error ${response.status}`);
        location.href = body.seat || `/match/${encodeURIComponent(body.match_id)}`; // your seat: its one-time link
      } catch (error) {
        said.textContent = error.message;
        go.disabled = false;
      }
    });
    return el("span", "fork-control", go, " with ", bots, " bots; you play ", you, " ", said);
  }

  document.addEventListener("croupier-step", (event) => {
    shown = event.detail;
    const controls = document.getElementById("controls");
    if (!controls || shown.header.status !== "finished") return;
    let mine = controls.querySelector(".fork-control");
    if (!mine) controls.append((mine = control()));
    mine.hidden = shown.step >= shown.count; // the end: nothing is left to play
  });
})();
