// Command bot is a Croupier starter bot in Go, built only from the .proto files (make go-bot).
//
// It plays a random legal action in every game, except Pair Battle, where it reads the typed
// view: it lays the biggest, richest set first, and in lockstep passes while it leads on
// points (a tick in which everyone passes ends the game). The shape any gRPC language follows:
//  1. generate the stubs: protoc -Iproto --go_out=OUT --go-grpc_out=OUT proto/croupier/v1/*.proto
//     (go_package "croupier/v1;croupierv1": with OUT=$GOPATH/src they import as "croupier/v1"),
//  2. open BotService.Play with the token as `croupier-token` metadata,
//  3. send a Hello, then answer every DecisionRequest with a Move naming an index into its
//     legal_actions, tagged with the request's decision_id (and answer a refusal with another
//     move: the decision stays open). A Move may carry a Comment for the bot's author: the
//     replay shows it beside the move once the match is over, and no other bot ever sees it.
//
// It reconnects with backoff when the stream breaks, exits 2 when the referee refuses it
// (UNAUTHENTICATED: an unknown token), and stops cleanly on SIGINT/SIGTERM.
//
// Usage: croupier-bot [--server HOST:PORT] [--token TOKEN]... [--name NAME]
//
//	[--max-matches N] [--matches N]
//
// Server, token and name default to $CROUPIER_SERVER, $CROUPIER_TOKEN (comma-separated) and
// $CROUPIER_BOT_NAME (what the tournament runner and croupier check-bot set).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	pb "croupier/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	protocolVersion = 1
	firstDelay      = 500 * time.Millisecond
	maxDelay        = 30 * time.Second
	maxRetries      = 3 // refused answers to one decision before leaving it to the clock
	// REASON_JOURNAL_FULL: the referee's disk is full and nothing was played; the same answer goes
	// again after this pause (the whole bot waits: so does the referee until it has room).
	resendPause = time.Second
)

// Stream endings another try would only repeat (a bad token, a wrong protocol version).
var fatal = map[codes.Code]string{
	codes.Unauthenticated:    "UNAUTHENTICATED",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Unimplemented:      "UNIMPLEMENTED",
}

type tokenList []string

func (t *tokenList) String() string { return strings.Join(*t, ",") }
func (t *tokenList) Set(value string) error {
	*t = append(*t, value)
	return nil
}

type options struct {
	server     string
	tokens     []string
	name       string
	maxMatches int
	matches    int // 0: play until stopped
}

func parseArgs() options {
	env := func(key, fallback string) string {
		if value := os.Getenv(key); value != "" {
			return value
		}
		return fallback
	}
	var o options
	var tokens tokenList
	flag.StringVar(&o.server, "server", env("CROUPIER_SERVER", "127.0.0.1:50051"), "the referee, HOST:PORT")
	flag.Var(&tokens, "token", "a bot or seat token; repeat for several (default: $CROUPIER_TOKEN)")
	flag.StringVar(&o.name, "name", env("CROUPIER_BOT_NAME", "go-starter"), "the name in the referee's logs")
	flag.IntVar(&o.maxMatches, "max-matches", 8, "matches played at once")
	flag.IntVar(&o.matches, "matches", 0, "stop after this many matches have ended (0: never)")
	flag.CommandLine.SetOutput(os.Stderr)
	flag.Parse()
	o.tokens = tokens
	if len(o.tokens) == 0 {
		for _, token := range strings.Split(os.Getenv("CROUPIER_TOKEN"), ",") {
			if token != "" {
				o.tokens = append(o.tokens, token)
			}
		}
	}
	switch {
	case len(o.tokens) == 0:
		fail("give a token: --token TOKEN or $CROUPIER_TOKEN")
	case o.maxMatches < 1:
		fail("--max-matches must be at least 1")
	case o.matches < 0:
		fail("--matches must not be negative")
	}
	return o
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "go bot:", message)
	os.Exit(2)
}

// --- choosing ---------------------------------------------------------------------------------

// pairBattlePoints is a card's worth when laid (docs/games/pair-battle.md); a card is rank*10+suit.
func pairBattlePoints(card pb.Card) int {
	switch rank := int(card) / 10; {
	case rank == int(pb.Rank_RANK_ACE):
		return 15
	case rank >= int(pb.Rank_RANK_TEN):
		return 10
	default:
		return 5
	}
}

// pairBattle lays the set with the most cards (a triplet before a doublet of the same rank, which
// would strand the third card), the richest among equals; in lockstep it passes while strictly
// ahead on points, since a tick in which everyone passes ends the game there.
func pairBattle(view *pb.PairBattleView, legal []*pb.Action) int {
	best, bestScore, pass := -1, -1, -1
	for i, action := range legal {
		play := action.GetPairBattle().GetPlay()
		if play == nil {
			pass = i
			continue
		}
		score := 100 * len(play.Cards)
		for _, card := range play.Cards {
			score += pairBattlePoints(card)
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if pass >= 0 && view.Timing == pb.PairBattleTiming_PAIR_BATTLE_TIMING_LOCKSTEP && leading(view) {
		return pass
	}
	if best < 0 {
		return 0
	}
	return best
}

func leading(view *pb.PairBattleView) bool {
	if view.Seat == nil || len(view.Finishers) > 0 {
		return false
	}
	mine := view.Scores[view.GetSeat()]
	for seat, score := range view.Scores {
		if int32(seat) != view.GetSeat() && score >= mine {
			return false
		}
	}
	return true
}

// choose answers a decision: an index into its legal actions, and a note for the bot's author.
func choose(decision *pb.DecisionRequest) (int, string) {
	if view := decision.View.GetPairBattle(); view != nil {
		index := pairBattle(view, decision.LegalActions)
		if decision.LegalActions[index].GetPairBattle().GetPlay() == nil {
			return index, "pass: leading on points"
		}
		return index, "the biggest, richest set"
	}
	return rand.Intn(len(decision.LegalActions)), "at random"
}

// --- playing ----------------------------------------------------------------------------------

// open is the decision a seat answered last, so that a refusal can be answered with another move.
type open struct {
	decisionID uint64
	legal      int
	refusals   int
	index      int // the answer sent last
}

type bot struct {
	options  options
	finished int
}

func key(matchID string, seat int32) string { return fmt.Sprintf("%s/%d", matchID, seat) }

// play runs one stream until it ends: done when --matches are over, welcomed if the referee said
// Welcome, and the error that ended it (nil when the referee closed it).
func (b *bot) play(ctx context.Context) (done, welcomed bool, err error) {
	conn, err := grpc.DialContext(ctx, b.options.server, grpc.WithInsecure())
	if err != nil {
		return false, false, err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pairs := []string{}
	for _, token := range b.options.tokens {
		pairs = append(pairs, "croupier-token", token)
	}
	stream, err := pb.NewBotServiceClient(conn).Play(metadata.AppendToOutgoingContext(ctx, pairs...))
	if err != nil {
		return false, false, err
	}
	send := func(message *pb.BotMessage) {
		if err := stream.Send(message); err != nil && err != io.EOF {
			log.Printf("sending: %v", err)
		}
	}
	move := func(matchID string, seat int32, decisionID uint64, index int, comment string) {
		send(&pb.BotMessage{Message: &pb.BotMessage_Move{Move: &pb.Move{
			MatchId: matchID, DecisionId: decisionID, Seat: &seat,
			Choice:  &pb.Move_Index{Index: uint32(index)}, Comment: comment,
		}}})
	}
	send(&pb.BotMessage{Message: &pb.BotMessage_Hello{Hello: &pb.Hello{
		ProtocolVersion: protocolVersion, Name: b.options.name, MaxMatches: uint32(b.options.maxMatches),
	}}})
	opens := map[string]*open{}
	finish := func() bool {
		b.finished++
		return b.options.matches > 0 && b.finished >= b.options.matches
	}
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			return false, welcomed, nil
		}
		if err != nil {
			return false, welcomed, err
		}
		switch m := message.Message.(type) {
		case *pb.ServerMessage_Welcome:
			welcomed = true
			name := m.Welcome.BotName
			if name == "" {
				name = b.options.name
			}
			log.Printf("connected to %s as %s", b.options.server, name)
		case *pb.ServerMessage_MatchStarted:
			how := "started"
			if m.MatchStarted.Resumed {
				how = "resumed"
			}
			log.Printf("match %s (%s) %s in seat %d", m.MatchStarted.MatchId, m.MatchStarted.Game, how, m.MatchStarted.Seat)
		case *pb.ServerMessage_Decision:
			d := m.Decision
			index, comment := choose(d)
			o := &open{decisionID: d.DecisionId, legal: len(d.LegalActions), index: index}
			opens[key(d.MatchId, d.Seat)] = o
			move(d.MatchId, d.Seat, d.DecisionId, o.index, comment)
		case *pb.ServerMessage_ActionResult:
			r := m.ActionResult
			pending := opens[key(r.MatchId, r.Seat)]
			if r.Status != pb.ActionResult_REFUSED {
				if pending != nil && pending.decisionID == r.DecisionId {
					delete(opens, key(r.MatchId, r.Seat))
				}
				continue
			}
			log.Printf("match %s: refused (%s): %s", r.MatchId, r.RefusalReason, r.Reason)
			// The decision stays open after a refusal: answer it again, unless a newer one replaced it.
			if pending != nil && pending.decisionID == r.DecisionId && pending.refusals < maxRetries {
				pending.refusals++
				pending.index = rand.Intn(pending.legal)
				move(r.MatchId, r.Seat, r.DecisionId, pending.index, "")
			}
		case *pb.ServerMessage_Error:
			// Acted on by its reason (docs/protocol.md lists them), never by the words of its message.
			e := m.Error
			switch e.Reason {
			case pb.Error_REASON_DECISION_NOT_OPEN, pb.Error_REASON_MATCH_OVER:
				// a stale answer, or one crossing the match's end: routine in real-time games
			default:
				log.Printf("referee: %s: %s", e.Reason, e.Message)
			}
			if e.Reason == pb.Error_REASON_SEAT_TAKEN_OVER {
				// Another stream plays the seat now: nothing more comes to this one about it.
				delete(opens, key(e.MatchId, e.GetSeat()))
				if finish() {
					return true, welcomed, nil
				}
			} else if e.Reason == pb.Error_REASON_JOURNAL_FULL {
				// Nothing was played and the decision stays open: answer it the same way after a pause.
				for k, o := range opens {
					if o.decisionID == e.DecisionId && strings.HasPrefix(k, e.MatchId+"/") {
						var seat int32
						fmt.Sscan(strings.TrimPrefix(k, e.MatchId+"/"), &seat)
						time.Sleep(resendPause)
						move(e.MatchId, seat, o.decisionID, o.index, "")
						break
					}
				}
			}
		case *pb.ServerMessage_SeatForfeited:
			// The referee plays the seat on; no match_ended comes for it, so it counts as done here.
			f := m.SeatForfeited
			log.Printf("match %s: seat %d was forfeited (%s)", f.MatchId, f.Seat, f.Reason)
			delete(opens, key(f.MatchId, f.Seat))
			if finish() {
				return true, welcomed, nil
			}
		case *pb.ServerMessage_MatchEnded:
			e := m.MatchEnded
			delete(opens, key(e.MatchId, e.Seat))
			place := "?"
			for _, seat := range e.GetResult().GetSeats() {
				if seat.Seat == e.Seat {
					place = fmt.Sprint(seat.Place)
				}
			}
			log.Printf("match %s over: place %s of %d", e.MatchId, place, len(e.GetResult().GetSeats()))
			if finish() {
				return true, welcomed, nil
			}
		}
	}
}

func main() {
	log.SetFlags(0)
	log.SetOutput(timestamped{})
	rand.Seed(time.Now().UnixNano())
	b := &bot{options: parseArgs()}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	delay := firstDelay
	for ctx.Err() == nil {
		done, welcomed, err := b.play(ctx)
		if done || ctx.Err() != nil {
			break
		}
		if name, refused := fatal[status.Code(err)]; refused {
			log.Printf("the referee refused this bot: %s: %s", name, status.Convert(err).Message())
			os.Exit(2)
		}
		if err == nil {
			log.Printf("the referee ended the stream")
		} else if s, ok := status.FromError(err); ok {
			log.Printf("connection to %s lost: %s: %s", b.options.server, s.Code(), s.Message())
		} else if !errors.Is(err, context.Canceled) {
			log.Printf("connection to %s lost: %v", b.options.server, err)
		}
		if welcomed {
			delay = firstDelay // it was working: come back quickly
		}
		wait := time.Duration(float64(delay) * (0.8 + 0.4*rand.Float64()))
		log.Printf("reconnecting in %.1f s", wait.Seconds())
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		if delay *= 2; delay > maxDelay {
			delay = maxDelay
		}
	}
	log.Printf("stopped after %d match(es)", b.finished)
}

// timestamped writes each log line after a UTC time stamp and the bot's name, as the other bots do.
type timestamped struct{}

func (timestamped) Write(line []byte) (int, error) {
	stamp := time.Now().UTC().Format("2006-01-02T15:04:05Z")
	return fmt.Fprintf(os.Stderr, "%s go bot: %s", stamp, line)
}
