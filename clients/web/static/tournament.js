// A tournament's page: progress, then per game the ratings (Elo with the 95% interval), the
// crosstable, and every match with a link to its replay. Refreshed while the tournament runs.
"use strict";
(function () {
  const { el } = window.Croupier;
  const root = document.getElementById("tournament");
  const id = location.pathname.split("/").filter(Boolean).pop();
  const TITLES = { chinese_ten: "Chinese Ten", spoil_five: "Spoil Five", platinum_fish: "Platinum Fish", pair_battle: "Pair Battle" };

  function table(headers, rows, className) {
    return el("table", className || "list", el("thead", "", el("tr", "", ...headers.map((h) => el("th", "", h)))), el("tbody", "", ...rows));
  }

  function progress(done, total, label) {
    const bar = el("progress", "");
    bar.max = total || 1;
    bar.value = done;
    return el("div", "progress", label ? el("span", "label", label) : null, bar, ` ${done} / ${total} matches`);
  }

  // Ratings come after the tables (/ratings: a bootstrap fit takes seconds): the last ones known
  // are shown meanwhile, or a placeholder the fetch fills in.
  const known = {};
  let fitting = false;

  function ratingsOf(game) {
    if (known[game]) return ratings(known[game]);
    const pending = el("p", "none ratings-pending", "fitting the ratings…");
    pending.dataset.game = game;
    return pending;
  }

  async function fillRatings() {
    if (fitting) return;
    fitting = true;
    try {
      const response = await fetch(`/api/tournaments/${encodeURIComponent(id)}/ratings`);
      if (!response.ok) return;
      const body = await response.json();
      Object.assign(known, body.games);
      for (const [game, list] of Object.entries(body.games)) {
        const section = root.querySelector(`section.game[data-game="${game}"] .ratings-slot`);
        if (section) section.replaceChildren(ratings(list));
      }
      for (const pending of root.querySelectorAll(".ratings-pending")) pending.replaceWith(ratings([]));
    } catch (_) {
      // the next refresh asks again
    } finally {
      fitting = false;
    }
  }

  // Each bot's forfeits in a game and why ("random-1: 2 (timeouts 2)"): a place a forfeit made.
  function forfeits(list, game) {
    const per = {};
    for (const m of list) {
      if (m.game !== game || !m.results) continue;
      for (const r of m.results) {
        if (!r.forfeited) continue;
        const why = (per[r.bot] = per[r.bot] || {});
        const reason = r.note || "forfeited";
        why[reason] = (why[reason] || 0) + 1;
      }
    }
    const bots = Object.keys(per).sort();
    if (!bots.length) return null;
    const text = bots.map((bot) => {
      const reasons = Object.entries(per[bot]);
      const total = reasons.reduce((sum, [, n]) => sum + n, 0);
      return `${bot}: ${total} (${reasons.map(([why, n]) => `${why} ${n}`).join(", ")})`;
    });
    return el("p", "caption forfeits", el("span", "forfeit", "forfeits: "), text.join(" · "), " — a forfeiting seat takes the last place");
  }

  function ratings(list) {
    if (!list.length) return el("p", "none", "no finished matches yet");
    const rows = list.map((r, i) => {
      const interval = r.low === null ? "n/a (one duplicate set)" : `${r.low} – ${r.high} (${r.low - r.elo >= 0 ? "+" : ""}${r.low - r.elo} / +${r.high - r.elo})`;
      return el("tr", "", el("td", "num", `${i + 1}`), el("td", "", el("b", "", r.bot)), el("td", "num elo", `${r.elo}`), el("td", "num", interval), el("td", "num", r.los_next === null ? "" : `${Math.round(100 * r.los_next)}%`), el("td", "num", `${(100 * r.score).toFixed(1)}%`), el("td", "num", `${r.games}`));
    });
    return table(["#", "bot", "Elo", "95% interval", "LOS next", "score", "results"], rows);
  }

  function crosstable(cross) {
    if (!cross.bots.length) return null;
    const rows = cross.rows.map((row) => el("tr", "", el("th", "", row.bot), ...row.cells.map((cell) => el("td", cell ? "num" : "num self", cell)), el("td", "num total", row.total)));
    return el("div", "scroll", table(["", ...cross.bots, "total"], rows, "list cross"), el("p", "caption", "row's points / pairwise results against the column"));
  }

  function matches(list, game) {
    const rows = list
      .filter((m) => m.game === game)
      .map((m) => {
        const result = m.results ? m.results.map((r) => `${r.bot} ${r.score}${r.luck === null || r.luck === undefined ? "" : ` (luck ${r.luck >= 0 ? "+" : ""}${r.luck.toFixed(2)}, skill ${r.skill.toFixed(2)})`}${r.forfeited ? ` (forfeited${r.note ? ": " + r.note : ""})` : ""}`).join(", ") : m.seats.join(", ");
        let action = "";
        if (m.match_id) {
          const a = el("a", "", m.status === "done" ? "replay" : "watch live");
          a.href = `/match/${encodeURIComponent(m.match_id)}`;
          action = a;
        }
        return el("tr", `row ${m.status}`, el("td", "", m.key), el("td", "", el("span", `status ${m.status}`, m.status)), el("td", "", result), el("td", "", action));
      });
    return el("details", "", el("summary", "", `matches (${rows.length})`), table(["match", "status", "seats / result", ""], rows));
  }

  function draw(t) {
    document.title = `${t.name} (run ${t.run}) · Croupier`;
    const back = el("a", "", "← lobby");
    back.href = "/";
    root.replaceChildren(
      el("p", "", back),
      el("h1", "", `${t.name}`, el("span", "run", ` run ${t.run}`), el("span", `status ${t.finished ? "finished" : "running"}`, t.finished ? "finished" : "in play")),
      progress(t.done, t.total),
      ...t.games.map((g) => {
        const section = el(
          "section",
          "game",
          el("h2", "", TITLES[g.game] || g.game),
          progress(g.done, g.total, g.started ? `${g.started} playing` : ""),
          el("h3", "", "ratings (Elo, maximum likelihood, 95% bootstrap interval over duplicate sets)"),
          el("div", "ratings-slot", g.ratings ? ratings(g.ratings) : ratingsOf(g.game)),
          forfeits(t.matches, g.game),
          el("h3", "", "crosstable"),
          crosstable(g.crosstable),
          matches(t.matches, g.game),
        );
        section.dataset.game = g.game;
        return section;
      }),
    );
    fillRatings();
    return t.finished;
  }

  async function refresh() {
    try {
      const response = await fetch(`/api/tournaments/${encodeURIComponent(id)}`);
      const body = await response.json();
      if (!response.ok) return root.replaceChildren(el("div", "problem", body.error || `error ${response.status}`));
      if (!draw(body)) setTimeout(refresh, 3000);
    } catch (error) {
      root.replaceChildren(el("div", "problem", `the viewer cannot be reached: ${error}`));
      setTimeout(refresh, 5000);
    }
  }
  refresh();
})();
