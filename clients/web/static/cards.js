// Cards as SVG, and text with cards and seats in it. Everything is built with DOM calls and
// textContent, never HTML strings: nothing a bot names itself can become markup.
"use strict";
const Croupier = (window.Croupier = window.Croupier || {});

const SVG = "http://www.w3.org/2000/svg";
const SUIT = { c: "♣", d: "♦", h: "♥", s: "♠" };
const SUIT_NAME = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const RANK_NAME = { J: "jack", Q: "queen", K: "king", A: "ace" };
const CARD_IN_TEXT = /(^|[^\w])(10|[2-9JQKA])([cdhs])(?![\w])/;
const SEAT_IN_TEXT = /\bseat (\d+)\b/;

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function isRed(suit) {
  return suit === "h" || suit === "d";
}

// One card face from its text form (rank, then suit letter) -> an SVG with its rank in the corners and its suit in colour.
function card(text, size) {
  const rank = text.slice(0, -1);
  const suit = text.slice(-1);
  const face = svg("svg", {
    viewBox: "0 0 60 84",
    class: `card ${isRed(suit) ? "red" : "black"}${size ? " " + size : ""}`,
    role: "img",
    "aria-label": `${RANK_NAME[rank] || rank} of ${SUIT_NAME[suit]}`,
    "data-card": text,
  });
  face.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, class: "paper" }));
  face.append(svg("text", { x: 6, y: 19, class: "rank" }, rank));
  face.append(svg("text", { x: 6, y: 33, class: "pip" }, SUIT[suit]));
  const big = rank.length === 1 && "JQKA".includes(rank) ? rank : SUIT[suit];
  face.append(svg("text", { x: 33, y: 64, class: big === rank ? "court" : "centre", "text-anchor": "middle" }, big));
  if (big === rank) face.append(svg("text", { x: 50, y: 76, class: "pip", "text-anchor": "middle" }, SUIT[suit]));
  return face;
}

function back(size) {
  const node = svg("svg", { viewBox: "0 0 60 84", class: `card back${size ? " " + size : ""}`, role: "img", "aria-label": "a card face down" });
  node.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, class: "paper" }));
  node.append(svg("rect", { x: 6, y: 6, width: 48, height: 72, rx: 3, class: "weave" }));
  node.append(svg("path", { d: "M30 18 L46 42 L30 66 L14 42 Z", class: "diamond" }));
  return node;
}

// A row of faces, or a dash when there are none.
function cards(list, size, empty) {
  const row = el("div", `cards${size ? " " + size : ""}`);
  if (!list || list.length === 0) row.append(el("span", "none", empty || "—"));
  else for (const text of list) row.append(card(text, size));
  return row;
}

// A hidden hand: its backs (fanned, at most 13 drawn) and how many there are.
function backs(count, size) {
  const row = el("div", `cards backs${size ? " " + size : ""}`);
  if (!count) {
    row.append(el("span", "none", "—"));
    return row;
  }
  for (let i = 0; i < Math.min(count, 13); i++) row.append(back(size));
  row.append(el("span", "count", `${count}`));
  return row;
}

// What follows the person's own seat in the referee's words, in the second person: "seat 1 plays"
// is "you play", "seat 1's card" is "your card", "seat 1 (dealer) captures" is "you (dealer) capture".
const THIRD_PERSON = /^( \([^)]*\))? (is|was|has|[a-z]+s)\b/;
const IRREGULAR = { is: "are", was: "were", has: "have" };
const SECOND_PERSON_VERBS = new Set(["plays", "turns", "captures", "deals", "takes", "lays", "passes", "wins", "asks", "gives", "rolls", "draws", "leads", "robs", "declines", "follows", "trumps", "searches", "picks", "gets", "keeps", "loses", "scores", "finishes", "acts", "needs", "holds"]);

function secondPerson(rest) {
  if (rest.startsWith("'s ")) return { said: "your", rest: rest.slice(2) };
  const verb = THIRD_PERSON.exec(rest);
  if (!verb || !(verb[2] in IRREGULAR || SECOND_PERSON_VERBS.has(verb[2]))) return { said: "you", rest };
  const base = IRREGULAR[verb[2]] || verb[2].replace(/(ss|sh|ch|x)es$/, "$1").replace(/s$/, "");
  return { said: "you", rest: `${verb[1] || ""} ${base}${rest.slice(verb[0].length)}` };
}

// Words from the referee with each card drawn as a small coloured card and each "seat N" as
// the bot's name; the seat page's own seat (`players.mine`) as "you", in the second person.
function words(text, players) {
  const out = el("span", "words");
  let rest = String(text);
  while (rest) {
    const c = CARD_IN_TEXT.exec(rest);
    const s = SEAT_IN_TEXT.exec(rest);
    const cAt = c ? c.index + c[1].length : Infinity;
    const sAt = s ? s.index : Infinity;
    if (cAt === Infinity && sAt === Infinity) {
      out.append(rest);
      break;
    }
    if (sAt < cAt) {
      out.append(rest.slice(0, sAt));
      const seat = Number(s[1]);
      let name = players && players[seat] !== undefined ? players[seat] : `seat ${seat}`;
      rest = rest.slice(sAt + s[0].length);
      if (players && players.mine === seat) ({ said: name, rest } = secondPerson(rest));
      const who = el("b", `who seat${seat % 10}`, name);
      who.title = `seat ${seat}`;
      out.append(who);
    } else {
      out.append(rest.slice(0, cAt));
      const text = c[2] + c[3];
      const span = el("span", `ct ${isRed(c[3]) ? "red" : "black"}`, c[2] + SUIT[c[3]]);
      span.dataset.card = text;
      out.append(span);
      rest = rest.slice(cAt + text.length);
    }
  }
  return out;
}

function clock(ms) {
  const tenths = Math.floor(Math.max(0, ms) / 100); // down, so 59.96 s reads 00:59.9, never 00:60.0
  const minutes = Math.floor(tenths / 600);
  const seconds = ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
  return `${String(minutes).padStart(2, "0")}:${seconds}`;
}

Object.assign(Croupier, { el, svg, card, back, cards, backs, words, clock, SUIT, isRed });
