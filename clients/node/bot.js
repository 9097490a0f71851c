#!/usr/bin/env node
// A Croupier bot in Node.js, built only from the .proto files: it plays a random
// legal action in every game. The shape any gRPC language follows:
//   1. load proto/croupier/v1/bots.proto (it imports the rest),
//   2. open BotService.Play with the token as `croupier-token` metadata,
//   3. send a Hello, then answer every DecisionRequest with a Move naming an
//      index into its legal_actions, tagged with the request's decision_id.
//
// Usage: node bot.js [--server HOST:PORT] [--token TOKEN]... [--name NAME]
//                    [--max-matches N] [--matches N]
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
  };
  let tokensGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--help" || flag === "-h") {
      console.log("usage: node bot.js [--server HOST:PORT] [--token TOKEN]... [--name NAME] " +
        "[--max-matches N] [--matches N]");
      process.exit(0);
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

// One stream: resolves with "stopped" or "done", rejects with the gRPC error that ended it.
function playOnce(BotService, args, state) {
  return new Promise((resolve, reject) => {
    const client = new BotService(args.server, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    for (const token of args.tokens) metadata.add("croupier-token", token);
    const call = client.Play(metadata);
    // The decision each seat answered last ("match/seat" -> {decisionId, legal, refusals}), so that a
    // refusal, which leaves the decision open, can be answered with another move.
    const open = new Map();
    const send = (matchId, seat, decisionId, index) =>
      call.write({ move: { match_id: matchId, decision_id: decisionId, seat, index } });
    let settled = false;
    const finish = (outcome, error) => {
      if (settled) return;
      settled = true;
      call.cancel();
      client.close();
      if (error) reject(error);
      else resolve(outcome);
    };
    call.on("data", (message) => {
      switch (message.message) {
        case "welcome":
          state.welcomed = true;
          log(`connected to ${args.server} as ${message.welcome.bot_name || args.name}`);
          break;
        case "match_started": {
          const m = message.match_started;
          log(`match ${m.match_id} (${m.game}) ${m.resumed ? "resumed" : "started"} in seat ${m.seat}`);
          break;
        }
        case "decision": {
          const d = message.decision;
          const legal = d.legal_actions.length;
          open.set(`${d.match_id}/${d.seat}`, { decisionId: d.decision_id, legal, refusals: 0 });
          send(d.match_id, d.seat, d.decision_id, Math.floor(Math.random() * legal));
          break;
        }
        case "action_result": {
          const r = message.action_result;
          const key = `${r.match_id}/${r.seat}`;
          const pending = open.get(key);
          const same = pending !== undefined && pending.decisionId === r.decision_id;
          if (r.status !== "REFUSED") {
            if (same) open.delete(key);
            break;
          }
          log(`match ${r.match_id}: refused: ${r.reason}`);
          // The decision stays open after a refusal: answer it again, unless a newer one replaced it.
          if (same && pending.refusals < MAX_RETRIES) {
            pending.refusals += 1;
            send(r.match_id, r.seat, r.decision_id, Math.floor(Math.random() * pending.legal));
          }
          break;
        }
        case "error":
          // A stale answer (a newer request replaced it) is routine in real-time games.
          if (!message.error.message.includes("is not open")) {
            log(`referee: ${message.error.code}: ${message.error.message}`);
          }
          break;
        case "seat_forfeited": {
          // The referee plays the seat on; no match_ended comes for it, so it counts as finished here.
          const f = message.seat_forfeited;
          log(`match ${f.match_id}: seat ${f.seat} was forfeited (${f.reason})`);
          open.delete(`${f.match_id}/${f.seat}`);
          state.finished += 1;
          if (args.matches !== null && state.finished >= args.matches) finish("done");
          break;
        }
        case "match_ended": {
          const e = message.match_ended;
          const mine = e.result.seats.find((s) => s.seat === e.seat);
          open.delete(`${e.match_id}/${e.seat}`);
          state.finished += 1;
          log(`match ${e.match_id} over: place ${mine ? mine.place : "?"} of ${e.result.seats.length}`);
          if (args.matches !== null && state.finished >= args.matches) finish("done");
          break;
        }
        default:
          break;
      }
    });
    call.on("error", (error) => finish(null, error));
    call.on("end", () => finish("stopped"));
    state.stop = () => finish("stopped");
    call.write({ hello: { protocol_version: PROTOCOL_VERSION, name: args.name, max_matches: args.maxMatches } });
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
