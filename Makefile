# Knights and Kernels — every entry point a user needs.
#   make play        set up what is missing, then play the bot in the terminal
#   make web         set up what is missing, then serve the page on http://127.0.0.1:8000/
#   make check       lint (ruff), types (mypy) and the one-way import graph
#   make test-fast   the quick loop: every test not marked slow (about a minute)
#   make test        make check, then the whole test suite
SHELL := /bin/bash
# The interpreter that creates .venv: the first of PYTHON_CANDIDATES that runs and is a
# Python that pyproject.toml's requires-python accepts (3.11-3.13); `make PYTHON=...` to choose.
PYTHON_CANDIDATES ?= python3.11 python3.12 python3.13 python3
PYTHON_OK := import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 14))
PYTHON ?= $(firstword $(foreach p,$(PYTHON_CANDIDATES),$(shell $(p) -c '$(PYTHON_OK)' >/dev/null 2>&1 && echo $(p))))
NEED_PYTHON = echo "make: $(if $(PYTHON),PYTHON=$(PYTHON) is not a runnable Python 3.11-3.13,no Python 3.11-3.13 \
found (tried: $(PYTHON_CANDIDATES))); install python3.11 (Debian/Ubuntu: apt-get install python3.11-venv) \
or name one: make PYTHON=/path/to/python3.12" >&2; exit 1
VENV := .venv
PY := $(VENV)/bin/python
KNIGHTS := $(VENV)/bin/knights
STOCKFISH ?= /usr/games/stockfish
STAMP := $(VENV)/.installed
COMPILED := $(VENV)/.compiled
# A plain `make` lists the targets (the first rule below is store-data, which is not what a bare make should run)
.DEFAULT_GOAL := help

# Full dataset recipe (make data)
POSITIONS ?= 1000000
DEPTH ?= 8
SEED ?= 2024
WORKERS ?= $(shell nproc)
CHUNK_LINES ?= 3850
# More data from the other generator styles (make more-data)
MORE_POSITIONS ?= 4500000
# The labelled positions as a compact, checksummed store (knights/data/store.py: moves and labels,
# not the CSV text; shards of at most 16 MiB and a manifest with every sha256) and back: restoring
# writes data/generated/games.csv and the grown sets' parts byte for byte (resumable), then
# data/full's chunks; make more-data goes on from the restored parts. STORE=/somewhere/that/lasts.
STORE ?= data/store
.PHONY: store-data restore-data
store-data: setup
	$(KNIGHTS) data store --store $(STORE) --workers $(WORKERS) --report report/results/data_store.json
restore-data: setup
	$(KNIGHTS) data restore --store $(STORE) --workers $(WORKERS) --report report/results/data_store.json
	@if [ ! -d data/full ] || [ data/generated/games.csv -nt data/full ]; then \
		bash data/split.sh --force data/generated/games.csv data/full Chess_Gen_ $(CHUNK_LINES); fi

# Endings played out from a thinned start position (make endings-data)
ENDINGS_POSITIONS ?= 400000
# Games of Stockfish playing an early iteration's move (make shallow-data)
SHALLOW_POSITIONS ?= 500000

.PHONY: all setup venv stockfish play independent web frontend browser check test test-fast flake bench data more-data endings-data shallow-data grown-data style-data sample notebook lab models strength report clean help democracy democracy-play democracy-notebook

help:
	@echo "make play                 play the bot in the terminal"
	@echo "make web                  play the bot in the browser (http://127.0.0.1:8000/; ARGS=\"--port 8080\")"
	@echo "make browser              Chromium and the board library, for the browser tests"
	@echo "make check                ruff, mypy and the import-graph test (tests/test_architecture.py)"
	@echo "make test-fast            every test not marked slow, in parallel: the quick loop"
	@echo "make flake RUNS=10        the clock tests (TESTS=\"...\": any pytest arguments) N times in a clean clone"
	@echo "make test                 make check, then the whole suite (PYTEST_ARGS=... to narrow it)"
	@echo "make bench | strength | search-strength | clock-strength | where-lost | search-ab | time-use | move-prior | soak | label-floor | error-sources | independent | seeds | report"
	@echo "make data | more-data | endings-data | shallow-data | grown-data | style-data SET=cold | sample | models"
	@echo "make store-data | restore-data STORE=/somewhere/that/lasts   the labelled data as a compact store, and back"
	@echo "make version V=EL/v5      rebuild an archived version's weights (make versions: the table; make tree-size)"
	@echo "make setup | stockfish    the virtual environment and Debian's Stockfish (every target runs what it needs)"
	@echo "make notebook V=EL/v8     run one notebook into runs/notebooks/ (ARGS=--quick: the committed sample)"
	@echo "make democracy            the democracy study: the choice on the selection sets, then the final test set"
	@echo "make democracy-play       the democracy against its best member, one ply, against one anchor (resumable)"
	@echo "make democracy-notebook   rebuild and execute notebooks/democracy.ipynb (the committed sample, minutes)"
	@echo "make lab                  JupyterLab on the project (prints its URL; Ctrl-C stops it)"
	@echo "make clean                remove the virtual environment and caches"

setup: $(STAMP) $(COMPILED) stockfish

$(STAMP): pyproject.toml
	@test -x $(PY) || { $(PYTHON) -c '$(PYTHON_OK)' >/dev/null 2>&1 || { $(NEED_PYTHON); }; $(PYTHON) -m venv $(VENV); }
	@echo "Installing the project and its dependencies into $(VENV) (minutes the first time)..."
	$(PY) -m pip install -q --upgrade pip
	@# pip byte-compiles what it installs on one core; compileall does it on every core.
	@# A file neither can compile (a package's Python 2 example) is skipped by both: its status is not ours.
	$(PY) -m pip install -q --no-compile -e '.[test,notebooks]'
	$(PY) -m compileall -q -j 0 $(VENV)/lib >/dev/null || true
	@# sunfish, the search's peer (arena, bench): it pins python-chess 1.9.4 for its own UI only, which
	@# conflicts with ours, so it cannot be an extra; sunfish-uci needs the standard library alone
	$(PY) -m pip install -q --no-deps 'sunfish==2026.1'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@touch $(STAMP)

# numba compiles the bot's search on its first use and caches it beside the sources (__pycache__): once
# here, so that the first make play or knights uci starts in seconds (the searching bot, then the one-ply one)
$(COMPILED): $(STAMP)
	@echo "Compiling the bot's search once (numba; a minute or two on one core)..."
	@$(PY) -c 'import time, chess; t = time.perf_counter(); from knights.engine.build import build; \
		[build(s).choose(chess.Board()) for s in ("search:default@200", "ours")]; \
		print(f"compiled in {time.perf_counter() - t:.0f} s")'
	@touch $(COMPILED)

stockfish:
	@if [ -x "$(STOCKFISH)" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "Installing Stockfish (Debian package 'stockfish')"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stockfish >/dev/null; \
	else \
		echo "Stockfish is missing: install it with 'sudo apt-get install stockfish' (expected at $(STOCKFISH))."; \
	fi

play: setup
	$(KNIGHTS) play $(ARGS)

# The web page (knights/frontends/web): the board library comes from npm, pinned by
# knights/frontends/web/frontend/package-lock.json, into knights/frontends/web/frontend/node_modules.
FRONTEND := knights/frontends/web/frontend
BOARD_LIBRARY := $(FRONTEND)/node_modules/cm-chessboard/package.json
CHROMIUM ?= /usr/bin/chromium

$(BOARD_LIBRARY): $(FRONTEND)/package-lock.json
	@if command -v npm >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "Installing npm (Debian package 'npm')"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
	else \
		echo "npm is missing: install Node.js and npm with 'sudo apt-get install npm'" >&2; exit 1; \
	fi
	npm ci --prefix $(FRONTEND) --no-audit --no-fund --loglevel=error
	@touch $@

frontend: $(BOARD_LIBRARY)

web: setup frontend
	$(KNIGHTS) serve $(ARGS)

# What the browser tests (tests/test_web_browser.py) need: Debian's Chromium, installed
# when missing as root (otherwise the command to run; the tests skip until then, and
# fail under CI=true), and the board library.
browser: frontend
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "Installing Chromium for the browser tests (Debian package 'chromium')"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			chromium fonts-liberation >/dev/null; \
	else \
		echo "Chromium is missing: install it with 'sudo apt-get install chromium' (expected at $(CHROMIUM));" \
			"the browser tests skip until then"; \
	fi

# Lint, types and the import graph (all three run; any failure fails the target).
# ruff and mypy come with the venv's `test` extra; their settings are in pyproject.toml.
CHECKS = status=0; \
	echo "ruff check ."; $(VENV)/bin/ruff check . || status=1; \
	echo "mypy"; $(VENV)/bin/mypy || status=1; \
	echo "import graph"; $(PY) -m pytest -q tests/test_architecture.py || status=1; \
	exit $$status
check: $(STAMP)
	@$(CHECKS)

# make test runs in two parts: every test not marked `clock` in parallel (pytest-xdist, one
# worker a core, at most 4: each imports torch; an idle worker takes queued tests from a busy one,
# worksteal: the notebooks' kernels run on every worker, each notebook into its own folder),
# with `make check` beside them (started first: on a fresh clone it runs beside the search's
# compile, which takes one core; its report follows the workers'), then the `clock` tests alone,
# one at a time: they play on real clocks or wait on wall-time deadlines and must not share the
# cores. PYTEST_ARGS (paths, -k) narrows both parts; a part it leaves empty is skipped, and it
# fails only when neither part had a test to run.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
test: $(STAMP) stockfish browser
	@log=$$(mktemp); ( $(CHECKS) ) > $$log 2>&1 & checker=$$!; \
	$(MAKE) --no-print-directory $(COMPILED) || { wait $$checker; cat $$log; rm -f $$log; exit 1; }; \
	a=0; $(PY) -m pytest -q -m "not clock" -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS) || a=$$?; \
	c=0; wait $$checker || c=$$?; echo "make check:"; cat $$log; rm -f $$log; \
	[ $$c -eq 0 ] || exit $$c; \
	[ $$a -eq 0 ] || [ $$a -eq 5 ] || exit $$a; \
	echo "the clock tests, one at a time:"; \
	b=0; $(PY) -m pytest -q -m clock $(PYTEST_ARGS) || b=$$?; \
	[ $$b -eq 0 ] || [ $$b -eq 5 ] || exit $$b; \
	if [ $$a -eq 5 ] && [ $$b -eq 5 ]; then echo "make test: no test matches PYTEST_ARGS=$(PYTEST_ARGS)" >&2; exit 5; fi

# The quick loop runs in parallel too: its ~900 tests are short and many start a Python or an
# engine process, so two workers overlap them (137 s serially, 85 s with -n 2 on 2 cores).
test-fast: setup
	$(PY) -m pytest -q -m "not slow" -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The flake meter: a clean clone of HEAD, set up once, runs the chosen tests RUNS times and prints each failing
# test's failure rate (knights/lab/flake.py).
RUNS ?= 10
TESTS ?= -m clock
flake: setup
	$(PY) -m knights.lab.flake --runs $(RUNS) -- $(TESTS)

bench: setup
	$(KNIGHTS) bench $(ARGS)

# Rate the shipped bot and every trained EL version on the ladder (random ... Stockfish
# UCI_Elo anchors): report/results/elo.{csv,json,md}, report/figures/elo.png,
# report/results/quality.json, PGNs in results_pgn/strength/ (about 10 min on 2 cores; each run
# records its own time in report/results/elo.json: seconds_games, seconds_quality).
strength: setup
	$(KNIGHTS) strength --workers $(WORKERS) $(ARGS)

# Rate the default searching bot (compiled search, EL/v25) at 0.1 s and 1 s a move against
# sunfish and Stockfish UCI_Elo 1350/1500/1800/2000: report/results/search_strength.json, PGNs
# in results_pgn/search_strength/ (resumes an interrupted run). 20 games an opponent: about
# 7 min at 0.1 s and an hour at 1 s on 2 shared cores; ARGS="--times 1000 --anchors 2000
# --sunfish-games 40" plays one part.
.PHONY: search-strength soak label-floor error-sources
search-strength: setup
	$(KNIGHTS) strength --search --workers $(WORKERS) $(ARGS)

# The searching bot on a real clock: 1 s of wall time a move for both sides against Stockfish
# UCI_Elo 2000 and 2200 (thinking 1 s a move too, not nodes) and sunfish, 40 games each, one game
# at a time: report/results/clock_strength.json, PGNs in results_pgn/clock_strength/ (resumes).
# About 2 min a game; ARGS="--anchors 2200 --no-sunfish" plays one part.
.PHONY: clock-strength
clock-strength: setup
	$(KNIGHTS) strength --search --clock --workers 1 --games 40 $(ARGS)

# Where the real-clock games were decided (knights/lab/arena/where_lost.py): Stockfish at depth 12 scores
# every position, as the bot's win probability; what each side gave away a move, by phase, and the ply
# from which each lost game stayed lost: report/results/where_lost.json (about 6 min for 40 games).
.PHONY: where-lost
where-lost: setup
	$(PY) -m knights.lab.arena.where_lost $(ARGS)

# What each part of the search is worth in games (knights/lab/arena/search_ab.py): the default
# against itself with parts switched off, 60 starts each played with both colours at 30,000 nodes
# a move: report/results/search_ab.json, games in results_pgn/search_ab/ (resumes; about 40 min a
# variant on one core). The default variants: the old fixed reductions without late move pruning,
# then late move pruning alone.
.PHONY: search-ab
search-ab: setup
	$(PY) -m knights.lab.arena.search_ab --off lmr_log lmp --off lmp $(ARGS)

# What the search does with a fixed time a move (knights/lab/arena/time_use.py): 400 selection
# positions at 1 s, no new iteration after 60% of it against none after 100%, each move judged by
# Stockfish at depth 12: report/results/time_use.json (about 12 min).
# A prior over quiet moves for the one-ply bot (knights/lab/results/move_prior.py), its weight
# chosen on games and measured on the final test set: report/results/move_prior.json (about 8 min).
.PHONY: time-use move-prior
time-use: setup
	$(PY) -m knights.lab.arena.time_use $(ARGS)
move-prior: setup
	$(PY) -m knights.lab.results.move_prior $(ARGS)

# How far the training labels (Stockfish at depth 8) are from the independent sets' depth-12
# labels on the same rows, and Stockfish at depth 1 from a cleared hash beside it:
# report/results/label_floor.json (about 2 min).
label-floor: setup
	$(KNIGHTS) label-floor --depth $(DEPTH) --depth 1 $(ARGS)

# Where the evaluators err on the independent games set's level positions: by the game's players,
# the material balance and the men on the board (report/results/error_sources.json, under a minute).
error-sources: setup
	$(KNIGHTS) error-sources $(ARGS)

# The bot on real clocks (lichess's 1+0 and 3+2 twenty times shorter: 3 s + 0 and 9 s + 0.1 s)
# through knights uci and lichess-bot's homemade route, 125 games each: illegal moves, errors,
# losses on time, NaN scores into report/results/soak.json (resumes from runs/soak/). The
# homemade route needs a lichess-bot checkout: LICHESS_BOT_DIR=/path/to/lichess-bot.
soak: setup
	$(KNIGHTS) soak $(ARGS)

# Generate the full labelled dataset with real Stockfish, then split it into chunks.
data: setup
	$(KNIGHTS) data generate --positions $(POSITIONS) --depth $(DEPTH) --seed $(SEED) \
		--workers $(WORKERS) --out data/generated/games.csv --report report/results/dataset.json
	bash data/split.sh --force data/generated/games.csv data/full Chess_Gen_ $(CHUNK_LINES)
	$(PY) report/data_stats.py data/full

# Grow the training data with the other generator styles (knights/data/grow.py: longer random
# openings, stronger players, material odds), keeping only positions that are in no training file
# and no independent set; resumable (rerun to go on, or with a larger MORE_POSITIONS to add more).
# Chunks go to data/more/, 260 of them (letters a-j, as data/full). One core plays about 170-200
# positions a second: the default 4,500,000 take about 3-4 h on 2 cores (report/results/dataset_more.json
# records the runs), 35 min on 16. After make restore-data every restored part is kept and it goes
# straight to combining.
more-data: setup
	@test -d data/full || { echo "make more-data: data/full is missing; run make data first (the grown data leaves out its positions)" >&2; exit 2; }
	$(KNIGHTS) data grow --positions $(MORE_POSITIONS) --depth $(DEPTH) --workers $(WORKERS) \
		--report report/results/dataset_more.json
	bash data/split.sh --force data/generated/more/more.csv data/more Chess_More_ \
		$$(( ($$(wc -l < data/generated/more/more.csv) + 258) / 260 ))

# Endings played out (knights/data/generate.py, style endings: the start position with only the
# kings and a few men on their home squares, random plies, then Stockfish-eps players for at most
# 100 plies), new positions only (none of data/full, data/more, the sample or the independent
# sets); resumable like more-data.
# Chunks go to data/endings/, 260 of them (letters a-j, as data/more). EL/v20 trains on them.
endings-data: setup
	@test -d data/more || { echo "make endings-data: data/more is missing; run make more-data first (the endings leave out its positions)" >&2; exit 2; }
	$(KNIGHTS) data grow --set endings --rounds 1 --positions $(ENDINGS_POSITIONS) --depth $(DEPTH) \
		--workers $(WORKERS) --report report/results/dataset_endings.json
	bash data/split.sh --force data/generated/endings/kept.csv data/endings Chess_Endings_ \
		$$(( ($$(wc -l < data/generated/endings/kept.csv) + 258) / 260 ))

# Games of Stockfish playing the move its depth-8 labelling search ranked first after iteration 1-4
# (knights/data/generate.py, style shallow) against the same or Stockfish-eps, new
# positions only (none of data/full, data/more, data/endings, the sample or the independent sets);
# resumable like more-data. Chunks go to data/shallow/, 260 of them (letters a-j).
shallow-data: setup
	@test -d data/endings || { echo "make shallow-data: data/endings is missing; run make endings-data first (the shallow games leave out its positions)" >&2; exit 2; }
	$(KNIGHTS) data grow --set shallow --rounds 1 --positions $(SHALLOW_POSITIONS) --depth $(DEPTH) \
		--workers $(WORKERS) --report report/results/dataset_shallow.json
	bash data/split.sh --force data/generated/shallow/kept.csv data/shallow Chess_Shallow_ \
		$$(( ($$(wc -l < data/generated/shallow/kept.csv) + 258) / 260 ))

# Every grown set the newest networks train on, in the order each needs the one before (resumable:
# rerun to go on). On 2 cores about 4.5-5.5 h (the three dataset reports' times): start it first on
# a new machine, and work on code meanwhile.
grown-data: more-data
	$(MAKE) endings-data
	$(MAKE) shallow-data

# The style experiment's sets (knights.data.grow: cold, chaos, again, sound), 300,000 positions played each (sound
# 700,000; STYLE_POSITIONS=N for another count), into data/<SET>; sound300k: data/sound's first 300,000 (EL/v23's),
# put together from data/sound's own parts into data/sound300k (nothing played once data/sound is); sound2
# (1,500,000) is the sound games from a second seed, for EL/v25, which continues from EL/v24 (it needs only
# data/full); sound3 (1,200,000) a third seed, new positions only (none of data/sound2's either, so it needs
# data/sound2), for the ablation rows that continue EL/v25's recipe
STYLE_POSITIONS_sound := 700000
STYLE_POSITIONS_sound300k := 300000
STYLE_POSITIONS_sound2 := 1500000
STYLE_POSITIONS_sound3 := 1200000
STYLE_COUNT = $(or $(STYLE_POSITIONS),$(STYLE_POSITIONS_$(SET)),300000)
STYLE_KEPT = data/generated/$(or $(STYLE_KEPT_$(SET)),$(SET)/kept.csv)
STYLE_PREFIX_cold := Cold
STYLE_PREFIX_chaos := Chaos
STYLE_PREFIX_again := Again
STYLE_PREFIX_sound := Sound
STYLE_PREFIX_sound300k := Sound
STYLE_KEPT_sound300k := sound/kept300k.csv
STYLE_PREFIX_sound2 := Sound2
STYLE_PREFIX_sound3 := Sound3
style-data: style-set setup
	$(KNIGHTS) data grow --set $(SET) --rounds 1 --positions $(STYLE_COUNT) --depth $(DEPTH) \
		--workers $(WORKERS) --report report/results/dataset_$(SET).json
	bash data/split.sh --force $(STYLE_KEPT) data/$(SET) Chess_$(STYLE_PREFIX_$(SET))_ \
		$$(( ($$(wc -l < $(STYLE_KEPT)) + 258) / 260 ))

.PHONY: style-set
style-set:
	@test -n "$(STYLE_PREFIX_$(SET))" || { echo "make style-data: SET=cold, chaos, again, sound, sound300k, sound2 or sound3 (got '$(SET)')" >&2; exit 2; }

# The independent test sets (data/independent/, committed): games between players the
# training generator never uses, tactical moments of them, random endgames; labelled by
# Stockfish at depth 12. About 30 min on one core; resumes from data/generated/independent/.
independent: setup
	nice $(KNIGHTS) data independent --rows 5000 --depth 12 --seed 2025

# Regenerate the small committed sample under data/sample/.
sample: setup
	$(KNIGHTS) data generate --positions 30000 --depth $(DEPTH) --seed 7 \
		--workers $(WORKERS) --out data/generated/sample.csv
	bash data/split.sh --force data/generated/sample.csv data/sample Sample_ 2500 1

# Run one notebook (a version, knn, random_forest, svr, linear, ensemble): the executed copy goes to
# runs/notebooks/, the committed notebook stays as it is. make notebook V=EL/v8 [ARGS="--quick" | "-p epochs 3"]
# The committed notebooks hold a quick run's outputs: knights notebook --write --execute [NAME ...] rebuilds them.
# The democracy study (issue 53): choose on the selection sets (data/independent/), then report once on the final
# test set (data/final/); results in report/results/democracy.json, figures in report/figures/democracy*.
democracy: setup
	$(PY) -m knights.lab.ensemble.study
	$(PY) -m knights.lab.ensemble.study --final

# One-ply play: the chosen democracy and its best member, the same openings against the same anchor (PLAY_GAMES each;
# rerun to resume), then report/results/democracy_play.json.
PLAY_GAMES ?= 400
PLAY_MEMBER ?= EL/v23+quiesce
democracy-play: setup
	$(PY) -m knights.lab.ensemble.play --arm sparse+quiesce --games $(PLAY_GAMES)
	$(PY) -m knights.lab.ensemble.play --arm $(PLAY_MEMBER) --games $(PLAY_GAMES)
	$(PY) -m knights.lab.ensemble.play --summary --member $(PLAY_MEMBER) --games $(PLAY_GAMES)

democracy-notebook: setup
	$(PY) -m knights.lab.ensemble.notebook

notebook: setup
	@test -n "$(V)" || { echo "make notebook: name one, e.g. make notebook V=EL/v8 (ARGS=--quick for the committed sample)" >&2; exit 2; }
	$(KNIGHTS) notebook $(V) $(ARGS)

# JupyterLab at the repository root, on this machine only, no browser opened: open the URL it prints
# (with its token). Ctrl-C stops the server. ARGS="--port 8890" to choose the port.
lab: setup
	$(VENV)/bin/jupyter lab --no-browser --ServerApp.root_dir="$(CURDIR)" --ServerApp.ip=127.0.0.1 \
		$$([ "$$(id -u)" = 0 ] && echo --allow-root) $(ARGS)

# The report: report/build.py fills report/report.tex.j2 (Jinja2) from report/results/ and the
# models' metadata into report/build/, then LaTeX; the PDF is copied to report/report.pdf, which is
# committed (CI fails when its text differs from what the sources build: commit it after a rebuild).
# Strict: a value not measured, a claim the results contradict, or a number in a sentence that does
# not name its model fails the build, naming each; so does a page LaTeX sets badly (report/check_pdf.py:
# an overfull box, a float too large, text past a margin, a half-empty page). Needs no GPU and no
# dataset. TeX, and poppler's pdftotext for the check, come from Debian (installed when missing, as root;
# otherwise the command to run).
TEX_DEBS := texlive-latex-base texlive-latex-recommended texlive-latex-extra latexmk poppler-utils
report: $(STAMP)
	@if command -v latexmk >/dev/null && command -v pdflatex >/dev/null && command -v pdftotext >/dev/null \
		&& kpsewhich booktabs.sty placeins.sty microtype.sty caption.sty longtable.sty needspace.sty >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "Installing TeX for the report (Debian: $(TEX_DEBS))"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$(TEX_DEBS) >/dev/null; \
	else \
		echo "LaTeX or pdftotext is missing: install them with 'sudo apt-get install --no-install-recommends $(TEX_DEBS)'"; \
		exit 1; \
	fi
	$(PY) report/build.py
	cd report/build && latexmk -pdf -interaction=nonstopmode -halt-on-error -file-line-error report.tex >/dev/null \
		|| { tail -n 40 report.log; exit 1; }
	$(PY) report/check_pdf.py report/build/report.pdf --log report/build/report.log
	cp report/build/report.pdf report/report.pdf
	@echo "report/report.pdf"

# Train every shipped version through its notebook (the recipe in knights/lab/notebooks/ship.py),
# then write the held-out results table (models_EL/RESULTS.md).
models: setup
	$(KNIGHTS) ship-models
	$(KNIGHTS) results

# Fair version comparisons: retrain SEED_VERSIONS with the extra SEEDS by the shipped recipe
# (runs/seeds/, resumable; the shipped network is seed 0), measure every seed as `knights results`
# does, and compare every shipped EL version at its best validation epoch, differences smaller than
# the seed spread called ties: report/results/seeds.json (47 min on 2 busy shared cores; ARGS=--compare-only
# rewrites the comparison alone). Then NNUE_SEED_VERSIONS (EL/v16, EL/v17: ~8 min each a seed, they need
# data/more) with NNUE_SEEDS, into the same file.
SEED_VERSIONS ?= EL/v1,EL/v3,EL/v5
SEEDS ?= 1,2
NNUE_SEED_VERSIONS ?= EL/v16,EL/v17
NNUE_SEEDS ?= 1
.PHONY: seeds
seeds: setup
	nice -n 10 $(PY) -m knights.lab.seeds --versions $(SEED_VERSIONS) --seeds $(SEEDS) $(ARGS)
	nice -n 10 $(PY) -m knights.lab.seeds --versions $(NNUE_SEED_VERSIONS) --seeds $(NNUE_SEEDS) $(ARGS)

clean:
	rm -rf $(VENV) data/cache .pytest_cache .mypy_cache .ruff_cache

# ---- issue 55: the versions tables (source_EL/versions.toml, source_SL/versions.toml; docs/versions.md) -----------
# make version V=EL/v5  rebuild a version's weights from its recipe (one thread, AVX2 kernels: the command sets
#                       the environment), check their SHA-256 against its table's and, on a match, put them in
#                       models_EL/ (a parent whose weights are missing is rebuilt first; the data is checked first).
#                       V=archived: every archived version not here. ARGS=--quick: the quick run on the committed
#                       sample against quick_sha256 (what CI can rebuild without data/full)
# make versions         every version at a glance: parent, what it differs by, status, who uses it
# make tree-size        the tracked files' bytes by folder; fails above 48 MiB (tests/test_versions.py too)
.PHONY: version versions tree-size
version: $(STAMP)
	@test -n "$(V)" || { echo "make version: name one, e.g. make version V=EL/v5 (V=archived: every archived one)" >&2; exit 2; }
	$(PY) -m knights.learn.versions rebuild $(if $(filter archived,$(V)),--archived,$(V)) $(ARGS)

versions: $(STAMP)
	@$(PY) -m knights.learn.versions table

tree-size: $(STAMP)
	@$(PY) -m knights.learn.versions size
