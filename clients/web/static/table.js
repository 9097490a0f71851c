// A match drawn from its header and one scene (the JSON of clients/web/frames.py): the game's
// table, the seats with their hands (faces where the view shows them, else backs and a count),
// clocks, the last events and the result.
"use strict";
(function () {
  const { el, card, cards, backs, words, clock, SUIT, isRed } = window.Croupier;

  function fact(label, value) {
    return el("span", "fact", el("span", "label", label), " ", value);
  }

  function facts(...pairs) {
    return el("div", "facts", ...pairs.filter(Boolean).map(([label, value]) => fact(label, value)));
  }

  function hand(view, seat, size) {
    const cardsOf = view.hands[seat];
    return cardsOf === null ? backs(view.hand_sizes[seat], size) : cards(cardsOf, size);
  }

  // --- the games -----------------------------------------------------------------------------

  const GAMES = {
    chinese_ten(view, ctx) {
      const centre = [
        el("div", "pile", el("div", "pile-label", "table"), cards(view.table, "", "empty")),
        el("div", "pile", el("div", "pile-label", "stock"), backs(view.stock_size)),
      ];
      if (view.turned !== null)
        centre.push(el("div", "pile turned", el("div", "pile-label", "turned up"), cards([view.turned]), el("div", "hint", words(`seat ${view.to_act} picks a target`, ctx.players))));
      return {
        centre,
        info: facts(["deal", `${view.deal}`], ["dealer", words(`seat ${view.dealer}`, ctx.players)], ["scoring", view.scoring.replaceAll("_", " ")], ["target", `${view.target}`]),
        seat: (seat) => ({
          hand: hand(view, seat),
          stats: [["captured", `${view.captured[seat].length} cards`], ["deal points", view.deal_points[seat]], ["total", view.totals[seat]]],
          extra: view.captured[seat].length ? cards(view.captured[seat].slice(-12), "tiny") : null,
        }),
      };
    },

    spoil_five(view, ctx) {
      const trick = el("div", "trick");
      for (const [seat, played] of view.trick) trick.append(el("div", "played", card(played), el("div", "by", words(`seat ${seat}`, ctx.players))));
      if (!view.trick.length) trick.append(el("span", "none", "no card led"));
      const trumps = el("span", `suit ${isRed(view.trumps) ? "red" : "black"}`, SUIT[view.trumps]);
      const centre = [
        el("div", "pile", el("div", "pile-label", "turn-up"), cards([view.turn_up]), view.robbed_by !== null ? el("div", "hint", "robbed by ", words(`seat ${view.robbed_by}`, ctx.players)) : null),
        el("div", "pile", el("div", "pile-label", "stock"), backs(view.stock_size)),
        el("div", "pile grow", el("div", "pile-label", `trick ${view.tricks.length + 1}`), trick),
      ];
      const last = view.last_deal;
      return {
        centre,
        info: facts(
          ["trumps", trumps],
          ["pool", `${view.pool}`],
          ["ante", `${view.ante}`],
          ["deal", `${view.deal} of ${view.deals}`],
          ["dealer", words(`seat ${view.dealer}`, ctx.players)],
          ["phase", view.phase.replaceAll("_", " ")],
          last ? ["last deal", words(`${last.result.replaceAll("_", " ")}${last.seat !== null ? ` (seat ${last.seat}, ${last.chips} chips)` : ""}`, ctx.players)] : null,
        ),
        seat: (seat) => {
          const notes = [
            view.ace_announced_by === seat && "trump Ace announced",
            view.robbed_by === seat && "robbed",
            view.jinxer === seat && "jinxing",
            view.dealer === seat && "dealer",
          ].filter(Boolean);
          return {
            hand: hand(view, seat),
            stats: [["tricks", view.tricks_won.length ? view.tricks_won[seat] : 0], ["chips", view.banks[seat]]],
            extra: notes.length ? el("div", "notes", notes.join(" · ")) : null,
          };
        },
      };
    },

    platinum_fish(view, ctx) {
      const top = view.discard.length ? [view.discard[view.discard.length - 1]] : [];
      const centre = [
        el("div", "pile", el("div", "pile-label", `discard (${view.discard.length})`), cards(top, "", "empty")),
        el("div", "pile", el("div", "pile-label", "stock"), backs(view.stock_size)),
      ];
      if (view.dice !== null) {
        const dice = el("div", "dice", ...view.dice.map((d) => el("span", "die", "⚀⚁⚂⚃⚄⚅"[d - 1] || String(d))));
        centre.push(el("div", "pile", el("div", "pile-label", "dice"), dice, el("div", "hint", `looking for ${view.targets.join(" or ")}`)));
      }
      return {
        centre,
        info: facts(["phase", view.phase.replaceAll("_", " ")], ["dealer", words(`seat ${view.dealer}`, ctx.players)]),
        seat: (seat) => ({
          hand: hand(view, seat),
          stats: [["matches", view.scores[seat]]],
          extra: view.matches[seat].length ? cards(view.matches[seat].slice(-6).flat(), "tiny") : null,
        }),
      };
    },

    pair_battle(view, ctx) {
      const byRank = laidByRank(view.laid);
      let phase = view.phase;
      if (view.timing === "lockstep" && view.phase === "play") phase += ` · tick ${view.tick}`;
      if (view.end !== null) phase += ` (${view.end})`;
      return {
        centre: [el("div", "pile grow", el("div", "pile-label", "laid by rank"), byRank || el("span", "none", "nothing laid yet"))],
        info: facts(["phase", phase], ["timing", view.timing === "realtime" ? "real time: plays as they reach the referee" : "lockstep ticks"]),
        seat: (seat) => ({
          hand: hand(view, seat),
          stats: [["reserve", view.reserve_sizes[seat]], ["score", view.scores[seat]], ["penalties", view.penalties[seat]]],
          extra: el("div", "laid", view.laid[seat].length ? cards(view.laid[seat].slice(-16), "tiny") : null, view.finishers.includes(seat) ? el("span", "done", "finished") : null),
        }),
        noTurns: true,
      };
    },
  };

  // Pair Battle's laid cards, every seat's, as faces grouped by rank (highest first); null if none.
  function laidByRank(laid) {
    const order = ["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2"];
    const groups = {};
    for (const cardsOfSeat of laid) for (const c of cardsOfSeat) (groups[c.slice(0, -1)] = groups[c.slice(0, -1)] || []).push(c);
    const ranks = order.filter((r) => groups[r]);
    if (!ranks.length) return null;
    return el("div", "ranks", ...ranks.map((r) => el("div", "rank-group", cards(groups[r], "tiny"))));
  }

  // --- the whole match -----------------------------------------------------------------------

  function seatClock(scene, seat, nowMs) {
    const clocks = scene.clocks;
    if (!clocks) return null;
    const bank = clocks.banks_ms[seat];
    const since = clocks.acting_since_ms[seat];
    const line = el("div", "clock");
    if (since !== null && nowMs !== null) {
      const thinking = Math.max(0, nowMs - since);
      const spent = Math.max(0, thinking - clocks.decision_ms);
      line.append(el("span", "thinking", `thinking ${clock(thinking)}`), " ");
      line.append(el("span", spent ? "bank spending" : "bank", `bank ${(Math.max(0, bank - spent) / 1000).toFixed(1)} s`));
    } else line.append(el("span", "bank", `bank ${(bank / 1000).toFixed(1)} s`));
    return line;
  }

  function resultPanel(header) {
    if (!header.result) return null;
    const ranking = header.result.map((r, seat) => ({ seat, place: r[0], score: r[1] })).sort((a, b) => a.place - b.place || a.seat - b.seat);
    const list = el("ol", "result-list");
    const lucky = (header.luck || []).some((luck) => luck !== null);
    for (const { seat, place, score } of ranking) {
      const details = header.details ? header.details[seat] : null;
      const notes = details ? [details.timeouts && `${details.timeouts} timeouts`, details.refusals && `${details.refusals} refused`, details.forfeited && `forfeited: ${details.forfeited}`].filter(Boolean).join(", ") : "";
      list.append(el("li", place === 1 ? "winner" : "", el("span", "place", `${place}.`), " ", el("b", "", header.players[seat]), ` (seat ${seat}) `, el("span", "score", `${score}`), notes ? el("span", "notes", ` ${notes}`) : null, lucky ? el("span", "luck", ` · ${luckAndSkill(header, seat)}`) : null));
    }
    const caption = lucky ? el("p", "luck-note", "luck: what chance gave the seat after the deal; skill: its points against the others (1 ahead, ½ level, 0 behind) less its luck") : null;
    return el("section", "result", el("h3", "", "result"), list, caption);
  }

  // Like results/sets.py's luck_and_skill: the seat's mean pair points by place, less its luck.
  function luckAndSkill(header, seat) {
    const luck = header.luck[seat];
    if (luck === null || luck === undefined) return "";
    const mine = header.result[seat][0];
    const others = header.result.filter((_, other) => other !== seat).map((r) => (mine < r[0] ? 1 : mine === r[0] ? 0.5 : 0));
    const points = others.reduce((a, b) => a + b, 0) / others.length;
    return `luck ${luck >= 0 ? "+" : ""}${luck.toFixed(2)}, skill ${(points - luck).toFixed(2)}`;
  }

  // The acting bot's comment on its move (in a finished match's record only), as text.
  function commentLine(scene) {
    return scene.comment ? el("p", "comment", el("span", "label", "its bot said: "), scene.comment) : null;
  }

  // Draws the match into `root`. `nowMs`: the referee clock now (ticks on between frames while live);
  // `mine`: the seat the page's person plays (the seat page), whose view it is.
  function draw(root, header, scene, nowMs, mine) {
    const players = Object.assign([...header.players], { mine }); // the seat page's own seat: "you"
    const ctx = { players };
    const game = GAMES[header.game](scene.view, ctx);
    const hidden = scene.view.hands.some((h) => h === null);
    const bar = el(
      "header",
      "bar",
      el("h1", "", header.title),
      el("span", `status ${header.status}`, header.status),
      el("span", "clock match-clock", `clock ${clock(nowMs !== null && nowMs !== undefined ? nowMs : scene.time_ms)}`),
      header.clocks ? el("span", "rules", `${header.clocks.decision_ms / 1000} s a move, ${header.clocks.bank_ms / 1000} s bank`) : null,
      el("span", "match-id", header.match_id),
    );
    const notes = [];
    if (header.note) notes.push(el("div", `note${header.note.startsWith("✗") ? " bad" : ""}`, header.note));
    if (mine !== undefined) notes.push(el("div", "note", `you play seat ${mine}: ${hidden ? "your cards face up, the others' face down" : "every hand is shown now"}`));
    else if (hidden) notes.push(el("div", "note", "spectator: every hand stays face down until the match is over"));
    if (header.cancel_reason) notes.push(el("div", "note bad", `cancelled: ${header.cancel_reason}`));
    if (header.forked_from) {
      const at = header.forked_from.lastIndexOf("@");
      const [source, step] = [header.forked_from.slice(0, at), header.forked_from.slice(at + 1)];
      const link = el("a", "", source);
      link.href = `/match/${encodeURIComponent(source)}?step=${step}`;
      notes.push(el("div", "note forked", "forked from ", link, ` at step ${step}: the same deal and moves up to there, its own players since`));
    }

    const seats = el("div", "seats");
    scene.view.hands.forEach((_, seat) => {
      const parts = game.seat(seat);
      const acting = !game.noTurns && scene.to_act.includes(seat); // a replay's steps too
      const forfeited = header.forfeited && header.forfeited[seat];
      const stats = el("div", "stats", ...parts.stats.map(([label, value]) => el("span", "stat", el("span", "label", label), " ", el("b", "", `${value}`))));
      const box = el(
        "div",
        `seat seat${seat % 10}${acting ? " acting" : ""}${forfeited ? " forfeited" : ""}${seat === mine ? " mine" : ""}`,
        el("div", "who", acting ? el("span", "marker", "▶") : null, el("span", "name", header.players[seat]), el("span", "number", `seat ${seat}`), forfeited ? el("span", "forfeit", `forfeited: ${forfeited}`) : null),
        parts.hand,
        stats,
        seatClock(scene, seat, acting ? nowMs : null),
        parts.extra,
      );
      box.dataset.seat = seat;
      seats.append(box);
    });

    const lines = [...scene.events_before, ...scene.events].slice(-8);
    const log = el("ol", "log", ...lines.map((line) => el("li", "", words(line, players))));
    if (!lines.length) log.append(el("li", "none", "(none yet)"));
    const events = el("section", "events", el("h3", "", "last events · ", words(scene.step, players)), commentLine(scene), log);

    const felt = el("section", "felt", el("div", "centre", ...game.centre), game.info);
    const page = el("div", `match game-${header.game}`, bar, ...notes, el("div", "play", felt, seats), el("div", "side", events, resultPanel(header)));
    page.dataset.seq = scene.seq;
    page.dataset.status = header.status;
    page.dataset.match = header.match_id || "";
    root.replaceChildren(page);
  }

  window.Croupier.draw = draw;
})();
