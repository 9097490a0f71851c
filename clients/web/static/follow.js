// Follow mode (as lichess TV): open the live match most recently started that this viewer may
// show (not the one just watched, ?after=ID), or wait for one; the match page comes back here as
// its match ends.
"use strict";
(function () {
  const { el } = window.Croupier;
  const root = document.getElementById("follow");
  const after = new URLSearchParams(location.search).get("after");

  function next(lobby) {
    const live = lobby.matches.filter((m) => (m.status === "running" || m.status === "waiting") && m.watchable !== false);
    const fresh = live.filter((m) => m.match_id !== after);
    const running = fresh.filter((m) => m.status === "running");
    const pool = running.length ? running : fresh;
    return pool.sort((a, b) => Number(b.created_unix_ms) - Number(a.created_unix_ms))[0] || null;
  }

  function show(lobby) {
    const match = next(lobby);
    if (match) return location.replace(`/match/${encodeURIComponent(match.match_id)}?follow=1`);
    const sealed = lobby.matches.filter((m) => (m.status === "running" || m.status === "waiting") && m.watchable === false).length;
    const lobbyLink = el("a", "", "the lobby");
    lobbyLink.href = "/";
    root.replaceChildren(
      lobby.error ? el("div", "problem", lobby.error) : "",
      el("p", "none", "waiting for a live match to start…", sealed ? ` (${sealed} live, sealed until their twins end)` : ""),
      el("p", "", "back to ", lobbyLink),
    );
  }

  const source = new EventSource("/api/lobby/live");
  source.onmessage = (event) => show(JSON.parse(event.data));
})();
