// The lobby: live and finished matches and the tournaments, redrawn whenever the server says
// the list changed (server-sent events).
"use strict";
(function () {
  const { el } = window.Croupier;
  const root = document.getElementById("lobby");
  const TITLES = { chinese_ten: "Chinese Ten", spoil_five: "Spoil Five", platinum_fish: "Platinum Fish", pair_battle: "Pair Battle" };

  function link(href, text) {
    const a = el("a", "", text);
    a.href = href;
    return a;
  }

  function when(ms) {
    return ms ? new Date(Number(ms)).toLocaleTimeString() : "";
  }

  function scores(match) {
    if (match.status === "cancelled") return el("span", "notes", `cancelled${match.cancel_reason ? ": " + match.cancel_reason : ""}`);
    if (match.status === "damaged") return el("span", "notes", `damaged: ${match.damage || "its files cannot be read"}`);
    if (!match.result) return "";
    const order = match.result.map((r, seat) => ({ seat, place: r[0], score: r[1] })).sort((a, b) => a.place - b.place);
    return el("span", "", ...order.map(({ seat, place, score }, i) => el("span", place === 1 ? "winner" : "", `${i ? ", " : ""}${match.players[seat]} ${score}`, forfeitNote(match, seat))));
  }

  // "(forfeited: timeouts)" after a seat that forfeited, so its place explains itself.
  function forfeitNote(match, seat) {
    const why = match.forfeited && match.forfeited[seat];
    return why ? el("span", "forfeit", ` (forfeited: ${why})`) : null;
  }

  // The link to a match, or why there is none yet: a sealed match opens once its twin ends.
  function action(match, finished) {
    if (match.watchable === false) return el("span", "sealed", "sealed until its twin ends");
    return link(`/match/${encodeURIComponent(match.match_id)}`, finished ? "replay" : "watch");
  }

  function matchTable(matches, finished) {
    if (!matches.length) return el("p", "none", finished ? "no finished matches yet" : "no live matches right now");
    const head = el("tr", "", ...["game", "players", "status", finished ? "result" : "started", ""].map((h) => el("th", "", h)));
    const rows = matches.map((m) => {
      const row = el(
        "tr",
        `row ${m.status}`,
        el("td", "", TITLES[m.game] || m.game),
        el("td", "players", m.players.join(", ")),
        el("td", "", el("span", `status ${m.status}`, m.status)),
        el("td", "", finished ? scores(m) : when(m.created_unix_ms)),
        el("td", "", action(m, finished)),
      );
      row.dataset.match = m.match_id;
      return row;
    });
    return el("table", "list", el("thead", "", head), el("tbody", "", ...rows));
  }

  function tournaments(list) {
    if (!list.length) return el("p", "none", "no tournaments in the results database");
    return el(
      "table",
      "list",
      el("thead", "", el("tr", "", ...["tournament", "run", "progress", ""].map((h) => el("th", "", h)))),
      el(
        "tbody",
        "",
        ...list.map((t) => {
          const bar = el("progress", "");
          bar.max = t.total || 1;
          bar.value = t.done;
          return el("tr", "", el("td", "", t.name), el("td", "", `${t.run}`), el("td", "", bar, ` ${t.done} / ${t.total}${t.finished ? " · finished" : ""}`), el("td", "", link(`/tournament/${t.id}`, "standings")));
        }),
      ),
    );
  }

  // Follow mode (as lichess TV): one live match after another, moving on as each ends.
  function followLink(live) {
    if (!live.some((m) => m.watchable !== false)) return null;
    const a = link("/follow", "▶ follow live play");
    a.className = "follow";
    return el("span", "", " · ", a);
  }

  function draw(lobby) {
    const live = lobby.matches.filter((m) => m.status === "running" || m.status === "waiting");
    const past = lobby.matches.filter((m) => !(m.status === "running" || m.status === "waiting"));
    root.replaceChildren(
      lobby.error ? el("div", "problem", lobby.error) : "",
      el("section", "", el("h2", "", `live matches (${live.length})`, followLink(live)), matchTable(live, false)),
      el("section", "", el("h2", "", "tournaments"), tournaments(lobby.tournaments || [])),
      el("section", "", el("h2", "", "finished matches"), matchTable(past, true)),
    );
  }

  const source = new EventSource("/api/lobby/live");
  source.onmessage = (event) => draw(JSON.parse(event.data));
  fetch("/api/lobby").then((r) => r.json()).then(draw, () => {});
})();
