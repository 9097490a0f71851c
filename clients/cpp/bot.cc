// A Croupier starter bot in C++, built only from the .proto files (make cpp-bot).
//
// It plays a random legal action in every game, except Chinese Ten, where it reads the typed
// view and actions and captures the most points (laying its cheapest card when nothing
// captures). The shape any gRPC language follows:
//   1. generate the stubs: protoc -Iproto --cpp_out=OUT --grpc_out=OUT
//        --plugin=protoc-gen-grpc=$(which grpc_cpp_plugin) proto/croupier/v1/*.proto
//   2. open BotService.Play with the token as `croupier-token` metadata,
//   3. send a Hello, then answer every DecisionRequest with a Move naming an index into its
//      legal_actions, tagged with the request's decision_id (and answer a refusal with
//      another move: the decision stays open). A Move may carry a `comment` for the bot's
//      author: the replay shows it beside the move once the match is over, and no other bot
//      ever sees it (Choice.comment below).
// It reconnects with backoff when the stream breaks, exits 2 when the referee refuses it
// (UNAUTHENTICATED: an unknown token), and stops cleanly on SIGINT/SIGTERM.
//
// Usage: croupier-bot [--server HOST:PORT] [--token TOKEN]... [--name NAME]
//                     [--max-matches N] [--matches N]
// Server, token and name default to $CROUPIER_SERVER, $CROUPIER_TOKEN (comma-separated) and
// $CROUPIER_BOT_NAME (what the tournament runner and croupier check-bot set).

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "croupier/v1/bots.grpc.pb.h"

namespace v1 = croupier::v1;

namespace {

constexpr int kProtocolVersion = 1;
constexpr int kFirstDelayMs = 500;
constexpr int kMaxDelayMs = 30000;
constexpr int kMaxRetries = 3;  // refused answers to one decision before leaving it to the clock
// REASON_JOURNAL_FULL: the referee's disk is full and nothing was played; the same answer goes
// again after this pause (the whole bot waits: so does the referee until it has room).
constexpr auto kResendPause = std::chrono::seconds(1);

struct Args {
  std::string server = "127.0.0.1:50051";
  std::vector<std::string> tokens;
  std::string name = "cpp-starter";
  int max_matches = 8;
  int matches = 0;  // 0: play until stopped
};

void Log(const std::string& message) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::cerr << stamp << " cpp bot: " << message << std::endl;
}

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "cpp bot: " << message << std::endl;
  std::exit(2);
}

std::vector<std::string> SplitTokens(const char* text) {
  std::vector<std::string> tokens;
  std::stringstream in(text ? text : "");
  for (std::string token; std::getline(in, token, ',');) {
    if (!token.empty()) tokens.push_back(token);
  }
  return tokens;
}

int Positive(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < 1 || n > 1000000) {
    Fail(flag + " must be a whole number of at least 1, not " + value);
  }
  return static_cast<int>(n);
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  if (const char* server = std::getenv("CROUPIER_SERVER"); server && *server) args.server = server;
  if (const char* name = std::getenv("CROUPIER_BOT_NAME"); name && *name) args.name = name;
  args.tokens = SplitTokens(std::getenv("CROUPIER_TOKEN"));
  bool tokens_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << "usage: croupier-bot [--server HOST:PORT] [--token TOKEN]... [--name NAME] "
                   "[--max-matches N] [--matches N]\n";
      std::exit(0);
    }
    if (i + 1 >= argc) Fail(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--server") {
      args.server = value;
    } else if (flag == "--token") {
      if (!tokens_given) args.tokens.clear();
      tokens_given = true;
      args.tokens.push_back(value);
    } else if (flag == "--name") {
      args.name = value;
    } else if (flag == "--max-matches") {
      args.max_matches = Positive(flag, value);
    } else if (flag == "--matches") {
      args.matches = Positive(flag, value);
    } else {
      Fail("unknown option " + flag);
    }
  }
  if (args.tokens.empty()) Fail("give a token: --token TOKEN or $CROUPIER_TOKEN");
  return args;
}

// --- choosing ---------------------------------------------------------------------------

// A card's points in Chinese Ten (docs/games/chinese-ten.md). A card is rank * 10 + suit.
int ChineseTenPoints(v1::Card card, v1::ChineseTenScoring scoring) {
  int rank = card / 10, suit = card % 10;
  bool ace = rank == v1::RANK_ACE, spades = suit == v1::SUIT_SPADES;
  bool red = suit == v1::SUIT_DIAMONDS || suit == v1::SUIT_HEARTS;
  if (scoring == v1::CHINESE_TEN_SCORING_RED_FROG) {
    if (ace && spades) return 50;
    if (red || ace) return 0;
    return rank <= 9 ? rank : 10;
  }
  if (ace && spades) return 30;
  if (!red) return 0;
  if (ace) return 20;
  return rank <= 8 ? rank : 10;
}

// An answer: the index into legal_actions, and a note for the bot's author (Move.comment).
struct Choice {
  int index = 0;
  std::string comment;
};

// Chinese Ten: the capture taking the most points (the card played counts too); with nothing
// to capture, the cheapest card to lay, since the next player may take it.
Choice ChineseTen(const v1::ChineseTenView& view, const v1::DecisionRequest& decision) {
  int best = 0;
  double best_score = -1e9;
  for (int i = 0; i < decision.legal_actions_size(); ++i) {
    const v1::ChineseTenAction& action = decision.legal_actions(i).chinese_ten();
    double score = 0;
    if (action.has_pick()) {
      score = ChineseTenPoints(action.pick().target(), view.scoring());
    } else if (action.play().taken_size() > 0) {
      score = 0.5 + ChineseTenPoints(action.play().card(), view.scoring());
      for (int taken : action.play().taken()) {
        score += ChineseTenPoints(static_cast<v1::Card>(taken), view.scoring());
      }
    } else {
      score = -ChineseTenPoints(action.play().card(), view.scoring());
    }
    if (score > best_score) best = i, best_score = score;
  }
  char comment[80];
  std::snprintf(comment, sizeof comment, "best of %d actions, worth %g", decision.legal_actions_size(),
                best_score);
  return {best, comment};
}

std::mt19937& Rng() {
  static std::mt19937 rng{std::random_device{}()};
  return rng;
}

int RandomIndex(int count) { return std::uniform_int_distribution<int>(0, count - 1)(Rng()); }

Choice Choose(const v1::DecisionRequest& decision) {
  if (decision.view().has_chinese_ten()) return ChineseTen(decision.view().chinese_ten(), decision);
  return {RandomIndex(decision.legal_actions_size()), "at random"};
}

// --- playing ----------------------------------------------------------------------------

std::mutex g_mutex;
std::condition_variable g_wake;
bool g_stopping = false;
grpc::ClientContext* g_context = nullptr;  // the live stream's, so a signal can cancel it

// The decision a seat answered last, so that a refusal can be answered with another move.
struct Open {
  uint64_t decision_id = 0;
  int legal = 0;
  int refusals = 0;
  int index = 0;  // the answer sent last
};

class Stream {
 public:
  Stream(const Args& args, int& finished) : args_(args), finished_(finished) {}

  // One stream, until it ends; the status it ended with. `welcomed`: the referee said Welcome.
  grpc::Status Play(bool& welcomed) {
    auto channel = grpc::CreateChannel(args_.server, grpc::InsecureChannelCredentials());
    auto stub = v1::BotService::NewStub(channel);
    grpc::ClientContext context;
    for (const auto& token : args_.tokens) context.AddMetadata("croupier-token", token);
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_stopping) return grpc::Status::CANCELLED;
      g_context = &context;
    }
    stream_ = stub->Play(&context);
    v1::BotMessage hello;
    hello.mutable_hello()->set_protocol_version(kProtocolVersion);
    hello.mutable_hello()->set_name(args_.name);
    hello.mutable_hello()->set_max_matches(args_.max_matches);
    stream_->Write(hello);
    v1::ServerMessage message;
    while (!done_ && stream_->Read(&message)) {
      if (message.has_welcome()) welcomed = true;
      Handle(message);
    }
    if (done_) context.TryCancel();
    grpc::Status status = stream_->Finish();
    std::lock_guard<std::mutex> lock(g_mutex);
    g_context = nullptr;
    return status;
  }

  bool done() const { return done_; }

 private:
  void Handle(const v1::ServerMessage& message) {
    switch (message.message_case()) {
      case v1::ServerMessage::kWelcome:
        Log("connected to " + args_.server + " as " +
            (message.welcome().bot_name().empty() ? args_.name : message.welcome().bot_name()));
        break;
      case v1::ServerMessage::kMatchStarted: {
        const auto& started = message.match_started();
        Log("match " + started.match_id() + " (" + started.game() + ") " +
            (started.resumed() ? "resumed" : "started") + " in seat " +
            std::to_string(started.seat()));
        break;
      }
      case v1::ServerMessage::kDecision: {
        const auto& decision = message.decision();
        open_[Key(decision.match_id(), decision.seat())] = {
            decision.decision_id(), decision.legal_actions_size(), 0, 0};
        const Choice choice = Choose(decision);
        Send(decision.match_id(), decision.seat(), decision.decision_id(), choice.index, choice.comment);
        break;
      }
      case v1::ServerMessage::kActionResult:
        Result(message.action_result());
        break;
      case v1::ServerMessage::kError:
        Error(message.error());
        break;
      case v1::ServerMessage::kSeatForfeited: {
        // The referee plays the seat on; no match_ended comes for it, so it counts as done here.
        const auto& forfeited = message.seat_forfeited();
        Log("match " + forfeited.match_id() + ": seat " + std::to_string(forfeited.seat()) +
            " was forfeited (" + forfeited.reason() + ")");
        open_.erase(Key(forfeited.match_id(), forfeited.seat()));
        Finished();
        break;
      }
      case v1::ServerMessage::kMatchEnded: {
        const auto& ended = message.match_ended();
        open_.erase(Key(ended.match_id(), ended.seat()));
        std::string place = "?";
        for (const auto& seat : ended.result().seats()) {
          if (seat.seat() == ended.seat()) place = std::to_string(seat.place());
        }
        Log("match " + ended.match_id() + " over: place " + place + " of " +
            std::to_string(ended.result().seats_size()));
        Finished();
        break;
      }
      default:
        break;
    }
  }

  // Acted on by its reason (docs/protocol.md lists them), never by the words of its message.
  void Error(const v1::Error& error) {
    const auto reason = error.reason();
    // A stale answer, or one crossing the match's end, is routine in real-time games.
    if (reason != v1::Error::REASON_DECISION_NOT_OPEN && reason != v1::Error::REASON_MATCH_OVER) {
      Log("referee: " + v1::Error::Reason_Name(reason) + ": " + error.message());
    }
    if (reason == v1::Error::REASON_SEAT_TAKEN_OVER) {
      // Another stream plays the seat now: nothing more comes to this one about it.
      open_.erase(Key(error.match_id(), error.seat()));
      Finished();
    } else if (reason == v1::Error::REASON_JOURNAL_FULL) {
      // Nothing was played and the decision stays open: answer it the same way after a pause.
      for (const auto& [key, open] : open_) {
        if (open.decision_id != error.decision_id() || key.rfind(error.match_id() + "/", 0) != 0) continue;
        std::this_thread::sleep_for(kResendPause);
        Send(error.match_id(), std::stoi(key.substr(error.match_id().size() + 1)), open.decision_id,
             open.index);
        break;
      }
    }
  }

  void Result(const v1::ActionResult& result) {
    auto open = open_.find(Key(result.match_id(), result.seat()));
    if (result.status() != v1::ActionResult::REFUSED) {
      if (open != open_.end() && open->second.decision_id == result.decision_id()) open_.erase(open);
      return;
    }
    Log("match " + result.match_id() + ": refused (" +
        v1::ActionResult::RefusalReason_Name(result.refusal_reason()) + "): " + result.reason());
    // The decision stays open after a refusal: answer it again, unless a newer one replaced it.
    if (open == open_.end() || open->second.decision_id != result.decision_id()) return;
    if (++open->second.refusals > kMaxRetries) return;  // the referee's clock will play
    Send(result.match_id(), result.seat(), result.decision_id(), RandomIndex(open->second.legal));
  }

  void Send(const std::string& match_id, int seat, uint64_t decision_id, int index,
            const std::string& comment = "") {
    v1::BotMessage reply;
    v1::Move* move = reply.mutable_move();
    move->set_match_id(match_id);
    move->set_decision_id(decision_id);
    move->set_seat(seat);
    move->set_index(index);
    move->set_comment(comment);
    auto open = open_.find(Key(match_id, seat));
    if (open != open_.end() && open->second.decision_id == decision_id) open->second.index = index;
    stream_->Write(reply);
  }

  void Finished() {
    ++finished_;
    if (args_.matches > 0 && finished_ >= args_.matches) done_ = true;
  }

  static std::string Key(const std::string& match_id, int seat) {
    return match_id + "/" + std::to_string(seat);
  }

  const Args& args_;
  int& finished_;
  bool done_ = false;
  std::unique_ptr<grpc::ClientReaderWriter<v1::BotMessage, v1::ServerMessage>> stream_;
  std::map<std::string, Open> open_;
};

// Stream endings another try would only repeat (a bad token, a wrong protocol version), by name.
const char* Fatal(grpc::StatusCode code) {
  switch (code) {
    case grpc::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::UNIMPLEMENTED: return "UNIMPLEMENTED";
    default: return nullptr;
  }
}

// SIGINT and SIGTERM are blocked in every thread; this one waits for them and cancels the stream.
void WatchSignals(sigset_t signals) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_stopping = true;
  if (g_context) g_context->TryCancel();
  g_wake.notify_all();
}

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread(WatchSignals, signals).detach();

  int finished = 0, delay = kFirstDelayMs;
  while (true) {
    Stream stream(args, finished);
    bool welcomed = false;
    grpc::Status status = stream.Play(welcomed);
    if (stream.done()) break;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_stopping) break;
    }
    if (const char* fatal = Fatal(status.error_code())) {
      Log(std::string("the referee refused this bot: ") + fatal + ": " + status.error_message());
      return 2;
    }
    if (status.ok()) {
      Log("the referee ended the stream");
    } else {
      Log("connection to " + args.server + " lost: " + status.error_message());
    }
    if (welcomed) delay = kFirstDelayMs;  // it was working: come back quickly
    int wait = static_cast<int>(delay * std::uniform_real_distribution<double>(0.8, 1.2)(Rng()));
    char text[64];
    std::snprintf(text, sizeof text, "reconnecting in %.1f s", wait / 1000.0);
    Log(text);
    std::unique_lock<std::mutex> lock(g_mutex);
    if (g_wake.wait_for(lock, std::chrono::milliseconds(wait), [] { return g_stopping; })) break;
    delay = std::min(kMaxDelayMs, delay * 2);
  }
  Log("stopped after " + std::to_string(finished) + " match(es)");
  return 0;
}
