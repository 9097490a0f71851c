#!/usr/bin/env node
// A Croupier bot in Node.js, built only from the .proto files: it plays a random
// legal action in every game. The shape any gRPC language follows:
//   1. load proto/croupier/v1/bots.proto (it imports the rest),
//   2. open BotService.Play with the token as `croupier-token` metadata,
//   3. send a Hello, then answer every DecisionRequest with a Move naming an
//      index into its legal_actions, tagged with the request's decision_id (and, if
//      it likes, a `comment` for its author: the replay shows it beside the move once
//      the match is over; no other bot ever sees it).
// It asks for every stream option (Hello.options: no ACCEPTED results, no view updates
// between its decisions, batches both ways), since it looks at nothing they leave out;
// --no-stream-options asks for none (protocol 1, every message on its own).
//
// Usage: node bot.js [--server HOST:PORT] [--token TOKEN]... [--name NAME]
//                    [--max-matches N] [--matches N] [--no-stream-options]
// Server, token and name default to $CROUPIER_SERVER, $CROUPIER_TOKEN and
// $CROUPIER_BOT_NAME (what the tournament runner sets).
"use strict";

const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTO_ROOT = path.join(__dirname, "..", "..", "proto");
const PROTOCOL_VERSION = 1;
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30000;
const MAX_RETRIES = 3; // refused answers to one decision before leaving it to the clock
const RESEND_MS = 1000; // REASON_JOURNAL_FULL: nothing was played; the same answer goes again after this
// Errors of normal play, not worth a log line: an answer crossing a newer request or the match's end.
const ROUTINE = new Set(["REASON_DECISION_NOT_OPEN", "REASON_MATCH_OVER"]);
// Stream endings another try would only repeat (a bad token, a wrong protocol version).
const FATAL = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.UNIMPLEMENTED,
]);

function parseArgs(argv) {
  const args = {
    server: process.env.CROUPIER_SERVER || "127.0.0.1:50051",
    tokens: (process.env.CROUPIER_TOKEN || "").split(",").filter(Boolean),
    name: process.env.CROUPIER_BOT_NAME || "node-random",
    maxMatches: 8,
    matches: null,
    streamOptions: true,
  };
  let tokensGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--help" || flag === "-h") {
      console.log("usage: node bot.js [--server HOST:PORT] [--token TOKEN]... [--name NAME] " +
        "[--max-matches N] [--matches N] [--no-stream-options]");
      process.exit(0);
    }
    if (flag === "--no-stream-options") {
      args.streamOptions = false;
      continue;
    }
    if (value === undefined) fail(`${flag} needs a value`);
    i++;
    if (flag === "--server") args.server = value;
    else if (flag === "--token") {
      if (!tokensGiven) args.tokens = [];
      tokensGiven = true;
      args.tokens.push(value);
    } else if (flag === "--name") args.name = value;
    else if (flag === "--max-matches") args.maxMatches = positive(flag, value);
    else if (flag === "--matches") args.matches = positive(flag, value);
    else fail(`unknown option ${flag}`);
  }
  if (args.tokens.length === 0) fail("give a token: --token TOKEN or $CROUPIER_TOKEN");
  return args;
}

function positive(flag, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(`${flag} must be a whole number of at least 1, not ${value}`);
  return n;
}

function fail(message) {
  console.error(`node bot: ${message}`);
  process.exit(2);
}

function log(message) {
  console.error(`${new Date().toISOString()} node bot: ${message}`);
}

function loadBotService() {
  const definition = protoLoader.loadSync(path.join(PROTO_ROOT, "croupier", "v1", "bots.proto"), {
    includeDirs: [PROTO_ROOT],
    keepCase: true, // field names as in the .proto: match_id, decision_id
    longs: String, // uint64 decision ids pass through untouched
    enums: String,
    defaults: true,
    oneofs: true, // message.message names the oneof's set field: "decision", "match_ended", ...
  });
  return grpc.loadPackageDefinition(definition).croupier.v1.BotService;
}

// The stream options granted, in words: "none" for protocol 1.
function describeOptions(granted) {
  const words = [];
  if (granted.quiet_acceptance) words.push("quiet acceptance");
  if (granted.updates === "UPDATES_WITH_NEXT") words.push("deferred updates");
  if (granted.batches) words.push("batches");
  return words.length ? words.join(", ") : "none";
}

// One stream: resolves with "stopped" or "done", rejects with the gRPC error that ended it.
function playOnce(BotService, args, state) {
  return new Promise((resolve, reject) => {
    const client = new BotService(args.server, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    for (const token of args.tokens) metadata.add("croupier-token", token);
    const call = client.Play(metadata);
    // The decision each seat answered last ("match/seat" -> {decisionId, legal, refusals, index}), so
    // that a refusal, which leaves the decision open, can be answered with another move.
    const open = new Map();
    const seats = new Set(); // "match/seat" of every seat this stream plays
    // What the referee granted of Hello.options (Welcome.options; unset by a referee that knows none).
    let granted = {};
    // Moves made while handling one message from the referee (a Batch may ask several): sent together.
    let moves = [];
    const send = (matchId, seat, decisionId, index, comment = "") => {
      const pending = open.get(`${matchId}/${seat}`);
      if (pending !== undefined && pending.decisionId === decisionId) pending.index = index;
      moves.push({ match_id: matchId, decision_id: decisionId, seat, index, comment });
    };
    const flush = () => {
      if (moves.length > 1 && granted.batches) call.write({ moves: { moves } });
      else for (const move of moves) call.write({ move });
      moves = [];
    };
    const finished = () => {
      state.finished += 1;
      if (args.matches !== null && state.finished >= args.matches) finish("done");
    };
    let settled = false;
    const finish = (outcome, error) => {
      if (settled) return;
      settled = true;
      call.cancel();
      client.close();
      if (error) reject(error);
      else resolve(outcome);
    };
    const handle = (message) => {
      switch (message.message) {
        case "batch":
          for (const each of message.batch.messages) handle(each);
          break;
        case "welcome":
          granted = message.welcome.options || {};
          state.welcomed = true;
          log(`connected to ${args.server} as ${message.welcome.bot_name || args.name}` +
            `, stream options: ${describeOptions(granted)}`);
          break;
        case "match_started": {
          const m = message.match_started;
          log(`match ${m.match_id} (${m.game}) ${m.resumed ? "resumed" : "started"} in seat ${m.seat}`);
          seats.add(`${m.match_id}/${m.seat}`);
          break;
        }
        case "decision": {
          const d = message.decision;
          const legal = d.legal_actions.length;
          open.set(`${d.match_id}/${d.seat}`, { decisionId: d.decision_id, legal, refusals: 0 });
          const index = Math.floor(Math.random() * legal);
          send(d.match_id, d.seat, d.decision_id, index, `random: ${index + 1} of ${legal}`);
          break;
        }
        case "action_result": {
          // ACCEPTED comes only without quiet acceptance; the decisions that follow are answered anyway.
          const r = message.action_result;
          const key = `${r.match_id}/${r.seat}`;
          const pending = open.get(key);
          const same = pending !== undefined && pending.decisionId === r.decision_id;
          if (r.status !== "REFUSED") {
            if (same) open.delete(key);
            break;
          }
          log(`match ${r.match_id}: refused (${r.refusal_reason}): ${r.reason}`);
          // The decision stays open after a refusal: answer it again, unless a newer one replaced it.
          if (same && pending.refusals < MAX_RETRIES) {
            pending.refusals += 1;
            send(r.match_id, r.seat, r.decision_id, Math.floor(Math.random() * pending.legal));
          }
          break;
        }
        case "error": {
          // Acted on by its reason (docs/protocol.md lists them), never by the words of its message.
          const e = message.error;
          if (!ROUTINE.has(e.reason)) log(`referee: ${e.reason}: ${e.message}`);
          if (e.reason === "REASON_SEAT_TAKEN_OVER") {
            // Another stream plays the seat now: nothing more comes to this one about it.
            open.delete(`${e.match_id}/${e.seat}`);
            if (seats.delete(`${e.match_id}/${e.seat}`)) finished();
          } else if (e.reason === "REASON_JOURNAL_FULL") {
            // Nothing was played and the decision stays open: answer it the same way after a pause.
            for (const [key, pending] of open) {
              if (!key.startsWith(`${e.match_id}/`) || pending.decisionId !== e.decision_id) continue;
              const index = pending.index;
              setTimeout(() => {
                if (!settled && open.get(key) === pending && pending.index === index) {
                  send(e.match_id, Number(key.split("/")[1]), pending.decisionId, index);
                  flush();
                }
              }, RESEND_MS);
            }
          }
          break;
        }
        case "seat_forfeited": {
          // The referee plays the seat on; no match_ended comes for it, so it counts as finished here.
          const f = message.seat_forfeited;
          log(`match ${f.match_id}: seat ${f.seat} was forfeited (${f.reason})`);
          open.delete(`${f.match_id}/${f.seat}`);
          seats.delete(`${f.match_id}/${f.seat}`);
          finished();
          break;
        }
        case "match_ended": {
          const e = message.match_ended;
          const mine = e.result.seats.find((s) => s.seat === e.seat);
          open.delete(`${e.match_id}/${e.seat}`);
          seats.delete(`${e.match_id}/${e.seat}`);
          log(`match ${e.match_id} over: place ${mine ? mine.place : "?"} of ${e.result.seats.length}`);
          finished();
          break;
        }
        default:
          break;
      }
    };
    call.on("data", (message) => {
      handle(message);
      if (!settled) flush();
    });
    call.on("error", (error) => finish(null, error));
    call.on("end", () => finish("stopped"));
    state.stop = () => finish("stopped");
    const hello = { protocol_version: PROTOCOL_VERSION, name: args.name, max_matches: args.maxMatches };
    if (args.streamOptions) {
      hello.options = { quiet_acceptance: true, updates: "UPDATES_WITH_NEXT", batches: true };
    }
    call.write({ hello });
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const BotService = loadBotService();
  const state = { finished: 0, stopping: false, welcomed: false, stop: null, wake: null };
  const shutdown = () => {
    state.stopping = true;
    if (state.stop) state.stop();
    if (state.wake) state.wake();
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  let delay = FIRST_DELAY_MS;
  while (!state.stopping) {
    state.welcomed = false;
    try {
      const outcome = await playOnce(BotService, args, state);
      if (outcome === "done") break;
    } catch (error) {
      if (state.stopping) break;
      if (FATAL.has(error.code)) {
        log(`the referee refused this bot: ${grpc.status[error.code]}: ${error.details}`);
        process.exit(2);
      }
      log(`connection to ${args.server} lost: ${grpc.status[error.code] || error.code}: ${error.details}`);
    }
    if (state.stopping) break;
    if (state.welcomed) delay = FIRST_DELAY_MS;
    const wait = Math.round(delay * (0.8 + 0.4 * Math.random()));
    log(`reconnecting in ${(wait / 1000).toFixed(1)} s`);
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, wait);
      state.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    state.wake = null;
    delay = Math.min(MAX_DELAY_MS, delay * 2);
  }
  log(`stopped after ${state.finished} match(es)`);
}

main();
