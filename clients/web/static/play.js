// The seat page: the person's own view of the match (the referee's seat stream, as JSON: the table
// drawn by table.js), the legal actions as buttons and keys, a click on a card of the hand, the
// clock, and why a move was refused. Moves go to the viewer, which sends them to the referee as
// this seat's; only the browser that opened the seat's link holds its cookie.
"use strict";
(function () {
  const { el, draw, words, clock } = window.Croupier;
  const root = document.getElementById("play");
  const panel = el("section", "your-move");
  const board = el("div", "board");
  root.replaceChildren(panel, board);
  const NUMBERED = "1234567890bcdefghilmnorsuvwxyz";

  let state = null;
  let received = 0; // performance.now() when `state` came
  let pending = false; // a move is on its way: the next state answers it
  let said = ""; // the viewer's own answer to a move it could not send
  let focus = null; // a card of the hand with several actions: those are marked
  let over = false; // the feed ended after a match's end: the run is over
  const selected = new Set(); // Pair Battle: the cards picked for a set

  const pairBattle = () => state && state.header && state.header.game === "pair_battle";
  const rankOf = (card) => card.slice(0, -1);
  const rankKey = (rank) => (rank === "10" ? "t" : rank.toLowerCase());

  // Key -> index of a listed action. Pair Battle: a rank's key lays its largest set (p: pass);
  // the other games: 1-9, 0, then letters, in the list's order.
  function keysOf(legal) {
    const keys = new Map();
    if (pairBattle()) {
      legal.forEach((action, index) => {
        if (!action.cards.length) return keys.set(action.text[0], index);
        const key = rankKey(rankOf(action.cards[0]));
        const before = keys.get(key);
        if (before === undefined || legal[before].cards.length < action.cards.length) keys.set(key, index);
      });
    } else legal.slice(0, NUMBERED.length).forEach((_, index) => keys.set(NUMBERED[index], index));
    return keys;
  }

  async function send(body) {
    if (pending) return;
    pending = true;
    said = "";
    render();
    try {
      const response = await fetch("/api/seat/move", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Croupier-Seat": "1" },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        const answer = await response.json().catch(() => ({}));
        throw new Error(answer.error || `error ${response.status}`);
      }
    } catch (error) {
      pending = false;
      said = error.message;
      render();
    }
  }

  // What boss-1 would play here (a fork's seat only): shown beside the actions, never played for you.
  let hinted = null; // {decision_id, text}
  async function askHint() {
    const asked = state.asked;
    if (!asked) return;
    hinted = { decision_id: asked.decision_id, text: "thinking…" };
    render();
    try {
      const response = await fetch("/api/seat/hint", { method: "POST", headers: { "X-Croupier-Seat": "1" } });
      const answer = await response.json().catch(() => ({}));
      hinted = { decision_id: asked.decision_id, text: response.ok ? `boss-1 would play ${answer.text}` : answer.error || `error ${response.status}` };
    } catch (error) {
      hinted = { decision_id: asked.decision_id, text: error.message };
    }
    render();
  }

  // A listed action: by its index in a turn-based game; in Pair Battle by its text, judged when
  // it reaches the referee (the view may have moved on: the race is the referee's).
  function choose(index) {
    const asked = state.asked;
    if (!asked || !asked.legal[index]) return;
    focus = null;
    selected.clear();
    if (pairBattle()) send({ text: asked.legal[index].text });
    else send({ decision_id: asked.decision_id, index });
  }

  function layCards(cards) {
    if (!cards.length) return;
    selected.clear();
    send({ text: cards.join(" ") });
  }

  function clickCard(card) {
    const asked = state.asked;
    if (pairBattle()) {
      if (selected.has(card)) selected.delete(card);
      else selected.add(card);
      return render();
    }
    if (!asked) {
      said = "wait for your turn";
      return render();
    }
    const uses = asked.legal.map((action, index) => [action, index]).filter(([action]) => action.cards[0] === card);
    if (uses.length === 1) return choose(uses[0][1]);
    if (uses.length > 1) {
      focus = card;
      return render();
    }
    // not among the listed actions (greyed out): said here, never sent, so never a refusal
    said = `${card} cannot be played now: choose one of the actions listed`;
    render();
  }

  function clockLine() {
    const asked = state.asked;
    if (!asked) return null;
    const left = Math.max(0, asked.deadline_ms - (performance.now() - received));
    const bank = Math.min(left, asked.bank_ms);
    return `${clock(left)} left${bank ? ` (bank ${(bank / 1000).toFixed(1)} s)` : ""}`;
  }

  function actionsPanel() {
    const header = state.header;
    const parts = [];
    if (state.note) parts.push(el("p", "note", state.note));
    if (state.refused) parts.push(el("div", "refused", el("b", "", "refused: "), words(state.refused.reason, header ? Object.assign([...header.players], { mine: state.seat }) : [])));
    if (said) parts.push(el("div", "refused", said));
    const asked = state.asked;
    if (header && header.status === "running" && !asked) parts.push(el("p", "none", "waiting for the others…"));
    if (asked) {
      const keys = keysOf(asked.legal);
      const keyOf = new Map([...keys].map(([key, index]) => [index, key]));
      const buttons = asked.legal.map((action, index) => {
        const key = keyOf.get(index);
        const button = el("button", `action${focus && action.cards[0] === focus ? " focus" : ""}`, key ? el("kbd", "", key) : null, " ", words(action.text, header.players));
        button.dataset.action = action.text;
        button.disabled = pending;
        button.addEventListener("click", () => choose(index));
        return button;
      });
      parts.push(el("h2", "", "your move ", el("span", "seat-clock", clockLine())));
      parts.push(el("div", "actions", ...(buttons.length ? buttons : [el("span", "none", "nothing you may play now")])));
      if (pairBattle()) {
        const lay = el("button", "lay", el("kbd", "", "Enter"), ` lay the cards picked (${[...selected].join(" ") || "click cards of your hand"})`);
        lay.disabled = pending || !selected.size;
        lay.addEventListener("click", () => layCards([...selected]));
        parts.push(el("p", "hint", "keys: a rank (2-9, t for 10, j, q, k, a) lays its largest set; or pick cards and press Enter; Esc drops the pick"));
        parts.push(lay);
      } else parts.push(el("p", "hint", "keys: the one beside each action; or click a card of your hand"));
      if (state.hints) {
        const ask = el("button", "ask-hint", "what would boss-1 play?");
        ask.addEventListener("click", askHint);
        parts.push(ask);
        if (hinted && hinted.decision_id === asked.decision_id) parts.push(el("p", "hint", hinted.text));
      }
    }
    parts.unshift(resultScreen());
    parts.push(resultsPanel());
    if (over) parts.push(el("p", "over", "The run is over (its viewer has stopped): these results are final. To play again, run the same croupier match command."));
    panel.replaceChildren(...parts.filter(Boolean));
    panel.dataset.pending = pending ? "1" : "0";
  }

  const ordinal = (n) => `${n}${n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"}`;
  const nameIn = (r, seat) => (seat === r.seat ? "you" : r.players[seat]);

  // Who won, in words: "you won", "heuristic won", "you and bob share first place".
  function winners(names) {
    if (names.length > 1) return `${names.join(" and ")} share first place`;
    return names[0] === "you" ? "you won" : `${names[0]} won`;
  }

  // Every player's points over the seatings played (a pair's two seatings: the one result to read).
  function totals(done) {
    const points = new Map();
    for (const r of done) r.players.forEach((_, seat) => points.set(nameIn(r, seat), (points.get(nameIn(r, seat)) || 0) + r.result[seat][1]));
    return [...points].sort((a, b) => b[1] - a[1]);
  }

  // After each match: who won it and the scores, then over every seating so far; and what comes
  // next: the next match once you ask for it, or at the run's end a rematch or leaving.
  function resultScreen() {
    const done = state.results || [];
    const header = state.header;
    if (!done.length || !header || header.status !== "finished") return null;
    const last = done[done.length - 1];
    const places = last.result.map(([place, score], seat) => ({ who: nameIn(last, seat), place, score }));
    const parts = [
      el("h2", "outcome", `${done.length > 1 ? `seating ${done.length}: ` : ""}${winners(places.filter((p) => p.place === 1).map((p) => p.who))}`),
      el("ul", "scores", ...places.sort((a, b) => a.place - b.place).map((p) => el("li", p.who === "you" ? "you" : "", `${p.who}: ${ordinal(p.place)}, ${p.score} points`))),
    ];
    if (done.length > 1) {
      const ranked = totals(done);
      const top = ranked.filter(([, points]) => points === ranked[0][1]).map(([who]) => who);
      const over = done.length === 2 ? "both seatings" : `${done.length} seatings`;
      parts.push(el("p", "combined-outcome", `${over} together: ${winners(top)} (${ranked.map(([who, points]) => `${who} ${points}`).join(" · ")})`));
    }
    const run = state.run;
    if (state.next) parts.push(button("next-match", `play the next match (seating ${done.length + 1})`, "/api/seat/next"));
    else if (run && run.left) parts.push(el("p", "final", "You left the table: these results are final."));
    else if (run) {
      parts.push(el("p", "final", "The run is over: these are its final results."));
      if (run.rematch) parts.push(button("rematch", "rematch: the same opponents, new deals", "/api/seat/rematch"));
      parts.push(button("leave", "leave the table", "/api/seat/leave"));
    }
    return el("section", "result-screen", ...parts);
  }

  // A button of the result screen: its POST, once; what came back is said if it failed.
  function button(className, text, path) {
    const b = el("button", className, text);
    b.addEventListener("click", async () => {
      b.disabled = true;
      const response = await fetch(path, { method: "POST", headers: { "X-Croupier-Seat": "1" } }).catch((error) => ({ ok: false, statusText: error.message }));
      if (response.ok) return;
      said = response.json ? (await response.json().catch(() => ({}))).error || response.statusText : response.statusText;
      render();
    });
    return b;
  }

  // Each seating played so far, and once there are several, every player's points over all of
  // them (a duplicate set's seatings deal the same cards: the combined result is the one to read).
  function resultsPanel() {
    const done = state.results || [];
    if (!done.length) return null;
    const rows = done.map((r, i) => el("li", "", `seating ${i + 1}: `, ...r.players.flatMap((name, seat) => [seat ? " · " : "", seat === r.seat ? el("b", "", "you") : name, ` ${ordinal(r.result[seat][0])}, ${r.result[seat][1]}`])));
    const parts = [el("h2", "", "results"), el("ol", "seatings", ...rows)];
    if (done.length > 1) parts.push(el("p", "combined", `combined, ${done.length} seatings: `, totals(done).map(([who, points]) => `${who} ${points}`).join(" · ")));
    return el("section", "results", ...parts);
  }

  function render() {
    if (!state) return;
    actionsPanel();
    const { header, scene } = state;
    if (!header || !scene) return;
    const now = scene.time_ms + (header.status === "running" ? Math.round(performance.now() - received) : 0);
    draw(board, header, scene, now, state.seat);
    const legalFirst = new Set(state.asked ? state.asked.legal.map((a) => a.cards[0]).filter(Boolean) : []);
    for (const face of board.querySelectorAll(".seat.mine > .cards:not(.tiny) svg.card[data-card]")) {
      const card = face.dataset.card;
      face.classList.add("mine");
      if (legalFirst.has(card) || (pairBattle() && state.asked && state.asked.legal.some((a) => a.cards.includes(card)))) face.classList.add("playable");
      else if (state.asked && !pairBattle() && legalFirst.size) face.classList.add("unplayable");
      if (selected.has(card) || focus === card) face.classList.add("picked");
      face.setAttribute("tabindex", "0");
      face.addEventListener("click", () => clickCard(card));
    }
    document.title = `${header.title} · your seat · ${header.status}`;
  }

  document.addEventListener("keydown", (event) => {
    if (!state || !state.asked || event.ctrlKey || event.metaKey || event.altKey) return;
    if (pairBattle() && event.key === "Enter") return layCards([...selected]);
    if (event.key === "Escape") {
      selected.clear();
      focus = null;
      return render();
    }
    const index = keysOf(state.asked.legal).get(event.key.toLowerCase());
    if (index !== undefined) {
      event.preventDefault();
      choose(index);
    }
  });

  const source = new EventSource("/api/seat/live");
  let heard = false;
  source.onmessage = (event) => {
    heard = true;
    const next = JSON.parse(event.data);
    if (!state || !next.header || !state.header || next.header.match_id !== state.header.match_id) selected.clear();
    state = next;
    over = false;
    received = performance.now();
    pending = false;
    for (const card of [...selected]) if (!ownHand().includes(card)) selected.delete(card);
    render();
  };
  source.onerror = () => {
    if (heard) {
      // a dropped feed: EventSource comes back by itself; after a match's end, the run is over (its
      // viewer stopped), and the page stays with its results
      over = Boolean(state && state.header && state.header.status === "finished");
      return render();
    }
    source.close();
    root.replaceChildren(el("div", "problem", "This browser holds no seat here: a seat is taken by opening its link, once. You may watch the matches as a spectator."), el("p", "", el("a", "", "the lobby")));
    root.querySelector("a").href = "/";
  };

  function ownHand() {
    const hands = state && state.scene ? state.scene.view.hands : null;
    return hands && state.seat !== undefined && hands[state.seat] ? hands[state.seat] : [];
  }

  setInterval(() => {
    // only the clocks' text: redrawing the table under the pointer would swallow a click
    const line = panel.querySelector(".seat-clock");
    if (line && state) line.textContent = clockLine();
    const matchClock = board.querySelector(".match-clock");
    if (matchClock && state && state.scene && state.header.status === "running") matchClock.textContent = `clock ${clock(state.scene.time_ms + performance.now() - received)}`;
  }, 250);
})();
