// A ladder's pages: the list of ladders, the live leaderboard (per game: Elo with its 95%
// interval, LOS over the next bot, sets, forfeits, last played, trend) and a page per bot (its
// versions, its set scores against each opponent, its recent matches). Refreshed every few seconds.
"use strict";
(function () {
  const { el } = window.Croupier;
  const root = document.getElementById("ladder");
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const TITLES = { chinese_ten: "Chinese Ten", spoil_five: "Spoil Five", platinum_fish: "Platinum Fish", pair_battle: "Pair Battle" };

  function table(headers, rows) {
    return el("table", "list", el("thead", "", el("tr", "", ...headers.map((h) => el("th", "", h)))), el("tbody", "", ...rows));
  }

  function link(href, text) {
    const a = el("a", "", text);
    a.href = href;
    return a;
  }

  function ago(seconds) {
    if (!seconds) return "";
    const s = Math.max(0, Date.now() / 1000 - seconds);
    return s < 90 ? `${Math.round(s)} s ago` : s < 5400 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
  }

  function botHref(name, bot) {
    return `/ladders/${encodeURIComponent(name)}/bots/${encodeURIComponent(bot)}`;
  }

  function leaderboard(board) {
    document.title = `${board.name} · ladder · Croupier`;
    const epochs = board.epochs.map((e) => `epoch ${e.epoch}${e.revealed ? " (revealed)" : e.over ? " (over)" : " (in play)"}`);
    const games = board.games.map((g) => {
      const rows = g.ratings.map((r, i) => {
        const interval = r.low === null ? "n/a (one set)" : `${r.low} – ${r.high}`;
        const trend = r.trend === null ? "" : `${r.trend > 0 ? "+" : ""}${r.trend}`;
        const row = el("tr", "rating", el("td", "num", `${i + 1}`), el("td", "", link(botHref(board.name, r.bot), r.bot)), el("td", "num elo", `${r.elo}`), el("td", "num", interval), el("td", "num", r.tied_next ? "tied" : r.los_next === null ? "" : `${Math.round(100 * r.los_next)}%`), el("td", "num", `${r.sets}`), el("td", "num", `${r.forfeits}`), el("td", "", ago(r.last_played)), el("td", "num", trend));
        row.dataset.bot = r.bot;
        return row;
      });
      const section = el("section", "game", el("h2", "", `${TITLES[g.game] || g.game} · ${g.sets} sets`), rows.length ? table(["#", "bot", "Elo", "95% interval", "LOS next", "sets", "forfeits", "last played", "trend"], rows) : el("p", "none", "no set over yet"));
      section.dataset.game = g.game;
      return section;
    });
    root.replaceChildren(el("p", "", link("/ladders", "← ladders")), el("h1", "", board.name, el("span", "run", ` ${epochs.join(" · ")} · ratings as of ${new Date(board.computed_at * 1000).toLocaleTimeString()}`)), ...(games.length ? games : [el("p", "none", "no set over yet: connect a bot (croupier register NAME)")]));
  }

  function botPage(page) {
    document.title = `${page.bot} · ${page.ladder} · Croupier`;
    const versions = page.versions.map((v) => (v === page.bot ? el("b", "", v) : link(botHref(page.ladder, v), v)));
    const opponents = page.opponents.map((o) => el("tr", "opponent", el("td", "", TITLES[o.game] || o.game), el("td", "", link(botHref(page.ladder, o.opponent), o.opponent)), el("td", "num", `${o.sets}`), el("td", "num", `${(100 * o.score).toFixed(1)}%`)));
    const recent = page.recent.map((m) => el("tr", "recent", el("td", "", TITLES[m.game] || m.game), el("td", "", m.seats.join(", ")), el("td", "num", `${m.place}${m.forfeited ? " (forfeited)" : ""}`), el("td", "", m.match_id ? link(`/match/${encodeURIComponent(m.match_id)}`, "replay") : "")));
    root.replaceChildren(
      el("p", "", link(`/ladders/${encodeURIComponent(page.ladder)}`, `← ${page.ladder}`)),
      el("h1", "", page.bot),
      el("p", "versions", "versions: ", ...versions.flatMap((v, i) => (i ? [" · ", v] : [v]))),
      el("h2", "", "against each opponent (set score: pairwise points over the rotations of a deal)"),
      opponents.length ? table(["game", "opponent", "sets", "score"], opponents) : el("p", "none", "no set over yet"),
      el("h2", "", "recent matches"),
      recent.length ? table(["game", "seats", "place", ""], recent) : el("p", "none", "no match yet"),
    );
  }

  function list(body) {
    const items = body.ladders.map((name) => el("li", "", link(`/ladders/${encodeURIComponent(name)}`, name)));
    root.replaceChildren(el("h1", "", "ladders"), items.length ? el("ul", "", ...items) : el("p", "none", "no ladder in the results database"));
  }

  async function refresh() {
    const api = parts.length === 1 ? "/api/ladders" : parts.length === 2 ? `/api/ladders/${encodeURIComponent(parts[1])}` : `/api/ladders/${encodeURIComponent(parts[1])}/bots/${encodeURIComponent(parts[3])}`;
    try {
      const response = await fetch(api);
      const body = await response.json();
      if (!response.ok) {
        root.replaceChildren(el("div", "problem", body.error || `error ${response.status}`));
      } else {
        (parts.length === 1 ? list : parts.length === 2 ? leaderboard : botPage)(body);
      }
    } catch (error) {
      root.replaceChildren(el("div", "problem", `the viewer cannot be reached: ${error}`));
    }
    setTimeout(refresh, 5000);
  }
  refresh();
})();
