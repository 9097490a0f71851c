"""Every command line of README.md and docs/bots.md is walked somewhere, or says why not (issue 43).

A command line, the rule: a line of a fenced code block tagged ``sh``, ``bash``, ``shell`` or
``console`` (blank lines and ``#`` comment lines aside); in an untagged block, a line whose first
word is a command (COMMANDS, a path into .venv/bin/ or build/, or ``NAME=value``); never a line of
a ``python``, ``text`` or ``toml`` block. The line is taken without its trailing ``  # comment``.

WALKS accounts for each: WALKED BY a place (a file of the repository, or ``FILE::test_name``) that
runs it, with the part of the line that place shows, so that a place no longer running it fails
here; or NOT WALKED, and why in one line. A new command line in either page fails until it is
added there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/bots.md")
SHELL = {"sh", "bash", "shell", "console"}
COMMANDS = {
    "make",
    "croupier",
    "python",
    "python3",
    "node",
    "npm",
    "docker",
    "cd",
    "protoc",
    "g++",
    "pip",
    "go",
}
FENCE = re.compile(r"^\s*```\s*(\w*)")
BACKSLASH = "\\"  # a line's last: its command goes on on the next
COMMENT = re.compile(r"\s+#\s.*$")
NEWCOMER = ".ci/newcomer"
SPRT_TESTS = "tests/clients/author/test_match_sprt.py"


@dataclass(frozen=True)
class Walked:
    """Run by ``place``, which shows ``part`` of the line (as the place writes it); ``how``, where
    the place runs it otherwise than as written."""

    place: str
    part: str
    how: str = ""


@dataclass(frozen=True)
class NotWalked:
    why: str


def newcomer_walks(pattern: str, page: str = "README.md") -> Walked:
    """.ci/newcomer finds the page's line by ``pattern`` (grep -E), then runs it as written."""
    return Walked(NEWCOMER, f"line=$(documented {page} '{pattern}')\nwalk \"")


FIRST_STEPS = "tests/clients/test_first_steps.py::test_the_readme_path_a_referee_a_token_and_the_readme_bot"
LADDER = (
    "tests/e2e/test_readme_ladder.py::"
    "test_the_readme_ladder_seats_the_readme_bot_and_its_leaderboard_shows_it"
)
STARTER = (
    "tests/clients/test_starter_bots.py::"
    "test_the_starter_bot_plays_a_full_match_of_every_game_against_the_bundled_bots"
)
STARTER_CHECKS = (
    "tests/clients/test_starter_bots.py::test_the_starter_bot_passes_every_check_of_croupier_check_bot"
)
BOSS_STRENGTH = NotWalked(
    "a row of the bosses' strength table: 10 to 35 minutes of CPU each, figures, nothing asserted"
)

CPP = "make cpp-bot runs it, paths its own, for tests/clients/test_starter_bots.py"
GO = "make go-bot runs it, paths its own, for tests/clients/test_starter_bots.py"
JAVA = NotWalked(
    "the Java recipe: no Java bot in the repository, no JDK in CI (the page says the suite builds none)"
)

WALKS: dict[str, Walked | NotWalked] = {
    # README.md
    "make run": Walked(NEWCOMER, "make run WEB=127.0.0.1:0 PACE=0"),
    "make test": Walked(".ci/run", "\nmake test\n"),
    '.venv/bin/croupier match platinum_fish --bot "python mybot.py"'
    " --bot heuristic --games 10": newcomer_walks(
        r'^\.venv/bin/croupier match platinum_fish --bot "python mybot.py" --bot heuristic --games [0-9]+$'
    ),
    ".venv/bin/croupier match chinese_ten --bot mybot.py --bot mybot_old.py --sprt elo0=0"
    " elo1=10 --in-process": newcomer_walks(
        r"^\.venv/bin/croupier match chinese_ten --bot mybot\.py --bot mybot_old\.py --sprt .* --in-process$"
    ),
    "make serve": Walked(
        FIRST_STEPS,
        'croupier("serve", "--address", "127.0.0.1:0"',
        how="the croupier serve it runs, on a free port",
    ),
    ".venv/bin/croupier register mybot": Walked(FIRST_STEPS, '[".venv/bin/croupier", "register", "mybot"]'),
    ".venv/bin/python mybot.py --server 127.0.0.1:50051 --token TOKEN": Walked(
        FIRST_STEPS, '[".venv/bin/python", "mybot.py", "--server", "127.0.0.1:50051", "--token", "TOKEN"]'
    ),
    ".venv/bin/croupier ladder tournaments/ladder.toml --server 127.0.0.1:50051 --web 127.0.0.1:8080": Walked(
        LADDER, 'ladder.startswith(".venv/bin/croupier ladder tournaments/ladder.toml")'
    ),
    ".venv/bin/croupier register mybot --owner-token TOKEN": Walked(
        LADDER, 'register.startswith(".venv/bin/croupier register mybot")'
    ),
    ".venv/bin/python mybot.py --server 127.0.0.1:50051 --token TOKEN --max-matches 2": Walked(
        LADDER, '".venv/bin/python mybot.py --server 127.0.0.1:50051 --token TOKEN --max-matches 2"'
    ),
    'CROUPIER_TOKEN="$(.venv/bin/croupier register house)" .venv/bin/croupier bot --server'
    " 127.0.0.1:50051 --max-matches 2": Walked(LADDER, """r'CROUPIER_TOKEN="\\$\\((.*)\\)" (.*)'"""),
    "make run PACE=0": Walked(NEWCOMER, "make run WEB=127.0.0.1:0 PACE=0"),
    "make serve WORKERS=auto": Walked(
        "tests/reliability/test_workers.py",
        '"serve", "--workers", "2"',
        how="the croupier serve it runs, 2 workers",
    ),
    "make lint": Walked(".ci/run", "\nmake lint\n"),
    "make bench": NotWalked(
        "a bench: minutes of CPU on every game, pure and compiled; it prints figures, nothing to assert"
    ),
    "make compiled": Walked(
        "Makefile", "test: $(INSTALLED) $(STUBS) compiled", how="make test (.ci/run) makes it first"
    ),
    ".venv/bin/croupier --help": newcomer_walks(r"^\.venv/bin/croupier --help"),
    ".venv/bin/croupier watch": Walked(
        "tests/clients/terminal/test_spectator_terminal.py::test_watch_without_a_match_id_asks_which_live_match_to_watch",
        'croupier("watch", "--server", f"127.0.0.1:{referee.port}")',
    ),
    ".venv/bin/croupier web": Walked(
        "tests/clients/web/test_web.py::test_the_command_serves_prints_its_address_and_stops_on_sigterm",
        '"croupier.clients.cli", "web"',
    ),
    ".venv/bin/croupier matches": newcomer_walks(r"^\.venv/bin/croupier matches"),
    ".venv/bin/croupier replay ID": newcomer_walks(r"^\.venv/bin/croupier replay ID"),
    # docs/bots.md
    'croupier match platinum_fish --bot "python mybot.py" --bot heuristic --games 10': Walked(
        NEWCOMER, """grep -o 'croupier match platinum_fish --bot "python mybot.py" --bot heuristic --games"""
    ),
    "croupier register mybot": Walked(FIRST_STEPS, '"register", "mybot"'),
    "python mybot.py --server 127.0.0.1:50051 --token TOKEN": Walked(
        FIRST_STEPS, '[sys.executable, "mybot.py", "--server", address, "--token", token]'
    ),
    "croupier bot --strategy mybot:RandomBot --token bot_XXXX": Walked(
        "tests/clients/sdk/test_docs_bot.py::test_croupier_bot_runs_the_documented_bot_class_from_the_current_directory",
        '"bot", "--strategy", "mybot:RandomBot"',
    ),
    "croupier bot --strategy mybot.py --token bot_XXXX": Walked(
        "tests/clients/author/test_inprocess.py::test_a_bot_file_is_a_strategy_of_its_own_or_says_which_class_to_take",
        'strategy(str(one)).__name__ == "Mine"',
        how="the resolution of --strategy FILE.py croupier bot makes, without a referee",
    ),
    "croupier match GAME --bot SPEC --bot SPEC ... [--games N] [--option key=value] [--seed S]"
    " [--watch]": NotWalked("a synopsis, placeholders and all; its instances are the lines walked above"),
    'croupier match chinese_ten --human --bot "python mybot.py"': Walked(
        "tests/clients/web/test_web_human.py::test_croupier_match_human_seats_you_in_the_browser",
        '"match", "platinum_fish", "--human"',
        how="a person's seat in the browser, in another game against another bot",
    ),
    'croupier replay MATCH_ID --fork 12 --bot "python mybot.py" --bot human': Walked(
        "tests/clients/web/test_web_human_fork.py::test_a_person_plays_a_fork_on_from_a_step_in_the_browser",
        '"--fork",\n        "4",\n        "--bot",\n        "heuristic",\n        "--bot",\n        "human",',
        how="a person in the browser on from step 4 of another match, against another bot",
    ),
    "python -m bench.boss_strength": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-1:heuristic --game spoil_five --game chinese_ten_300"
    " --game platinum_fish --game pair_battle --game chinese_ten --minutes 12 --seed 7": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:boss-1 --game spoil_five --game platinum_fish --game"
    " chinese_ten_300 --game pair_battle --minutes 15 --seed 7": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-1:heuristic --game spoil_five --minutes 25"
    " --seed 2": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:ismcts --game spoil_five --game pair_battle"
    " --minutes 22 --seed 7": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:ismcts --game chinese_ten_300 --game"
    " platinum_fish --minutes 22 --seed 7": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:ismcts --game spoil_five --game chinese_ten"
    " --minutes 12 --seed 1": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:ismcts --game platinum_fish --game"
    " pair_battle --minutes 12 --seed 1": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:ismcts --game spoil_five --minutes 30 --seed"
    " 2": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:ismcts --game chinese_ten_300 --minutes 25"
    " --seed 1": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-1:heuristic --game chinese_ten_300 --minutes 35"
    " --seed 1": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-2:boss-1 --game spoil_five --minutes 17 --seed"
    " 5": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-1/infer:boss-1 --game spoil_five --minutes 25"
    " --seed 1": BOSS_STRENGTH,
    "python -m bench.boss_strength --pair boss-1/random1.5:boss-1 --game spoil_five --minutes"
    " 15 --seed 1": BOSS_STRENGTH,
    "python -m bench.boss_inference --deals 8": NotWalked(
        "a bench of the bosses' inference: figures, nothing asserted"
    ),
    "python -m bench.boss_speed --decisions 4 --seconds 1 --level boss-1": NotWalked(
        "a bench of the bosses' speed: figures, nothing asserted"
    ),
    "croupier match spoil_five --option players=2 --bot boss-1 --bot heuristic --sprt elo0=0"
    " elo1=100 --in-process": NotWalked(
        f"an SPRT of a searching boss: minutes of CPU; {SPRT_TESTS} walks --sprt --in-process with quick bots"
    ),
    "cd clients/node && npm ci": Walked("tests/clients/test_node_bot.py", '[npm, "ci"'),
    "node bot.js --server 127.0.0.1:50051 --token bot_XXXX [--max-matches 8] [--matches N]"
    " [--no-stream-options]": Walked(
        "tests/clients/test_node_bot.py::test_the_node_bot_counts_a_forfeited_seat_as_a_match_done",
        'node, "bot.js", "--server"',
    ),
    "make cpp-bot": Walked("tests/clients/test_starter_bots.py", '"cpp": ("cpp-bot"'),
    "build/cpp-bot/croupier-bot --server 127.0.0.1:50051 --token bot_XXXX [--max-matches 8]"
    " [--matches N]": Walked(STARTER, '"cpp": ("cpp-bot"'),
    "protoc -Iproto --cpp_out=OUT proto/croupier/v1/*.proto": Walked(
        "clients/cpp/Makefile", "--cpp_out=", how=CPP
    ),
    "protoc -Iproto --grpc_out=OUT --plugin=protoc-gen-grpc=$(which grpc_cpp_plugin)"
    " proto/croupier/v1/bots.proto": Walked(
        "clients/cpp/Makefile", "--grpc_out=$(GEN) --plugin=protoc-gen-grpc=", how=CPP
    ),
    "g++ -std=c++17 -IOUT bot.cc OUT/croupier/v1/*.cc $(pkg-config --cflags --libs grpc++"
    " protobuf) -pthread": Walked("clients/cpp/Makefile", "pkg-config --cflags grpc++ protobuf", how=CPP),
    "protoc -Iproto --go_out=GOPATH/src --go-grpc_out=GOPATH/src proto/croupier/v1/*.proto": Walked(
        "clients/go/Makefile", "--go_out=$(GOPATH_DIR)/src --go-grpc_out=$(GOPATH_DIR)/src", how=GO
    ),
    "GO111MODULE=off GOPATH=$PWD/GOPATH:/usr/share/gocode go build -o croupier-bot clients/go/bot.go": Walked(
        "clients/go/Makefile", "GO111MODULE=off GOPATH=$(GOPATH_DIR):/usr/share/gocode", how=GO
    ),
    "apt-get install default-jdk protobuf-compiler protobuf-compiler-grpc-java-plugin libgrpc-java "
    "libprotobuf-java libguava-java libnetty-java libperfmark-java"
    " libgeronimo-annotation-1.3-spec-java": JAVA,
    "protoc -Iproto --java_out=gen --grpc-java_out=gen "
    "--plugin=protoc-gen-grpc-java=/usr/bin/grpc_java_plugin proto/croupier/v1/*.proto": JAVA,
    "CP=$(printf '/usr/share/java/%s.jar:' grpc-api grpc-context grpc-core grpc-netty grpc-protobuf "
    "grpc-protobuf-lite grpc-stub protobuf guava perfmark-api netty-all geronimo-annotation-1.3-spec)": JAVA,
    "javac -cp \"$CP\" -d build $(find gen src -name '*.java')": JAVA,
    'java -cp "build:$CP" MyBot': JAVA,
    "make go-bot": Walked("tests/clients/test_starter_bots.py", '"go": ("go-bot"'),
    "build/go-bot/croupier-bot --server 127.0.0.1:50051 --token bot_XXXX [--max-matches 8]"
    " [--matches N]": Walked(STARTER, '"go": ("go-bot"'),
    "croupier check-bot -- build/go-bot/croupier-bot": Walked(STARTER_CHECKS, "passes_check_bot("),
    "croupier check-bot --only refused-move --only clock -- node clients/node/bot.js": Walked(
        "tests/clients/test_node_bot.py::test_the_node_bot_passes_every_check_of_croupier_check_bot",
        'passes_check_bot([node, str(NODE_DIR / "bot.js")]',
        how="every check, the two --only names among them",
    ),
    "croupier check-bot --protocol-1 -- python mybot.py": newcomer_walks(
        r"^croupier check-bot --protocol-1 -- python mybot\.py$", page="docs/bots.md"
    ),
}


def is_command(line: str, tag: str) -> bool:
    if not line or line.startswith("#") or tag not in SHELL | {""}:
        return False
    if tag in SHELL:
        return True
    first = line.split()[0]
    return (
        first in COMMANDS
        or first.startswith((".venv/bin/", "build/"))
        or re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", first) is not None
    )


def command_lines(page: str, text: str) -> list[tuple[str, str]]:
    """The page's command lines, each with where it is (``page:line``), in the page's order."""
    found: list[tuple[str, str]] = []
    tag: str | None = None  # the open block's tag; None outside a block
    going_on = False  # the last line ended in a backslash: this one is the rest of its command
    for number, raw in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(raw)
        if fence:
            tag, going_on = (fence.group(1) if tag is None else None), False
            continue
        line = COMMENT.sub("", raw).strip()
        if going_on:
            where, start = found.pop()
            found.append((where, start.removesuffix(BACKSLASH).rstrip() + " " + line))
        elif tag is not None and is_command(line, tag):
            found.append((f"{page}:{number}", line))
        else:
            continue
        going_on = line.endswith(BACKSLASH)
    return [(where, line.removesuffix(BACKSLASH).rstrip()) for where, line in found]


def unaccounted(pages: dict[str, str], walks: dict[str, Walked | NotWalked]) -> list[str]:
    """One line for each command line of the pages that WALKS does not account for."""
    return [
        f"{where}: {line!r} is walked nowhere: add it to WALKS in tests/test_docs_walked.py "
        "(WALKED BY the test or .ci/newcomer line that runs it, or NOT WALKED and why)"
        for page, text in pages.items()
        for where, line in command_lines(page, text)
        if line not in walks
    ]


def rotten(walks: dict[str, Walked | NotWalked], repo: Path) -> list[str]:
    """One line for each walk whose place is gone, or no longer shows its part of the line."""
    found = []
    for line, walk in walks.items():
        if not isinstance(walk, Walked):
            continue
        path, _, test = walk.place.partition("::")
        file = repo / path
        if not file.is_file():
            found.append(f"{line!r}: its place {path} does not exist")
            continue
        text = file.read_text(encoding="utf-8")
        if test and not re.search(rf"^(async )?def {re.escape(test)}\(", text, re.M):
            found.append(f"{line!r}: {path} has no test {test}")
        elif walk.part not in text:
            found.append(f"{line!r}: {path} no longer shows {walk.part!r}: is it still walked there?")
    return found


def read_pages() -> dict[str, str]:
    return {page: (REPO / page).read_text(encoding="utf-8") for page in PAGES}


def test_every_command_line_of_the_readme_and_docs_bots_is_walked_or_says_why_not() -> None:
    missing = unaccounted(read_pages(), WALKS)
    assert not missing, "\n".join(missing)


def test_every_walk_names_a_place_that_still_runs_its_line() -> None:
    gone = rotten(WALKS, REPO)
    assert not gone, "\n".join(gone)


def test_walks_has_no_line_the_pages_no_longer_have() -> None:
    written = {line for page, text in read_pages().items() for _, line in command_lines(page, text)}
    stale = sorted(set(WALKS) - written)
    assert not stale, "no longer in README.md or docs/bots.md, drop from WALKS: " + "; ".join(stale)


def test_a_new_command_line_fails_in_one_line_naming_it() -> None:
    pages = read_pages()
    pages["README.md"] = pages["README.md"].replace(
        "make lint ", ".venv/bin/croupier frobnicate --all   # new\nmake lint ", 1
    )
    assert unaccounted(pages, WALKS) == [
        "README.md:145: '.venv/bin/croupier frobnicate --all' is walked nowhere: add it to WALKS in "
        "tests/test_docs_walked.py (WALKED BY the test or .ci/newcomer line that runs it, "
        "or NOT WALKED and why)"
    ]


def test_only_command_lines_count() -> None:
    page = (
        "```python\nmake run\n```\n```\nengine/   the rules\nmake x  # y\nA=1 make z\n```\n"
        "```sh\n# a comment\n\nanything at all\n```\n"
        "   ```bash\n   indented --too \\\n     --on  # why\n   ```\n"
    )
    assert [line for _, line in command_lines("p.md", page)] == [
        "make x",
        "A=1 make z",
        "anything at all",
        "indented --too --on",
    ]


def test_a_place_that_no_longer_runs_its_line_fails(tmp_path: Path) -> None:
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "newcomer").write_text("walk 'make run'\n")
    (tmp_path / "t.py").write_text("def test_b() -> None:\n    run('x')\n")
    walks: dict[str, Walked | NotWalked] = {
        "make run": Walked(NEWCOMER, "make run WEB"),
        "x": Walked("t.py::test_a", "run('x')"),
        "y": Walked("gone.py", "y"),
        "z": NotWalked("why"),
    }
    assert rotten(walks, tmp_path) == [
        "'make run': .ci/newcomer no longer shows 'make run WEB': is it still walked there?",
        "'x': t.py has no test test_a",
        "'y': its place gone.py does not exist",
    ]
