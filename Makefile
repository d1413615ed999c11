# The entmax book in two commands, each setting itself up on first use:
#
#   make book    build the book (every notebook executed) into _build/html
#   make test    run every test: unit tests + every notebook (nbval), on WORKERS pytest
#                processes (default 2, each test file in one of them; WORKERS=0 runs them in
#                one process); extra pytest arguments with ARGS, e.g. the quick loop:
#                make test ARGS="-m 'not slow' tests entmax_lib entmax_book"
#
# Both create the virtual environment .venv if it is missing and install the project with
# its test and book extras into it; they reinstall when the contents of pyproject.toml (or
# the extras and pins asked for) change, not when a checkout only touches its date. Only python3 (>= 3.10), git and make are needed. The commands they wrap are the
# README's long form: `jupyter-book build -W -n --keep-going .` and `python -m pytest`.
#
#   make test-floor   the same tests on Colab's versions, in .venv-floor
#   make lint         ruff check + format check
#   make clean        remove the built book (_build); the environments stay
#
# The editions for Colab and the course kit (README, "Teaching with the book"):
#
#   make colab        the Colab edition: every chapter with its prose as the book shows it
#                     (no MyST: glued numbers, links, citations), into colab/ (committed: the
#                     book's Colab buttons and the README open it); needs a `make book` after
#                     a chapter's code changed, for the numbers its prose quotes
#   make student      the student edition: every chapter without its solutions, exercises
#                     as stubs, no MyST, into student/ (committed: Colab opens it from GitHub)
#   make course       what students may see (student/assignments, student/labs without their
#                     answers), the plan's tables and course/schedule.csv, the exam's specimen,
#                     and the public autograder zips in _build/course
#   make grade AUTOGRADER=BUNDLE/autograders/NAME-autograder.zip SUBMISSIONS=FOLDER [OUT=...] [ROSTER=CSV]
#                     grade a class: OUT/scores.csv and one feedback file per student
#                     (FOLDER/STUDENT.ipynb or FOLDER/STUDENT/*.ipynb; with ROSTER, a row for
#                     every student on it, 0 and "no submission" where nothing came)
#                     (unsandboxed: see the README's "Teaching with the book")
#   make bundle OUT=FOLDER [SEED=N] [START=YYYY-MM-DD] [TZ=Europe/London] [KEYS=0]
#                     the private instructor bundle of a term, outside the repository; without
#                     SEED a random 128-bit term seed is drawn and printed: keep it; the labs'
#                     answer keys are run with the term's seeds (a few minutes; KEYS=0: not run)
#   make grade-rehearsal   grade a made-up class of 20 (_build/rehearsal), timed, and check each grade
#   make slides       a reveal.js deck per chapter into _build/slides, with speaker notes
#                     (executes the chapters with nbclient, or reuses the book's outputs where
#                     the code is unchanged); the folder shows offline: reveal.js and MathJax
#                     are copied beside the decks (needs the system package libjs-mathjax)
#   make pdf          the whole book as one PDF: _build/pdf/entmax-book.pdf (A4) and
#                     entmax-book-letter.pdf, contents with page numbers
#                     (needs the system packages chromium, libjs-mathjax and poppler-utils:
#                     apt-get install chromium libjs-mathjax poppler-utils)

PYTHON ?= python3
VENV ?= .venv
EXTRAS ?= test,book
PINS ?=
ARGS ?=
# Two processes: on two cores the whole suite takes about two thirds of the time of one.
WORKERS ?= 2

# Colab's versions: the lower bounds in pyproject.toml must be real.
# Colab's setuptools (75) still has pkg_resources, which Otter Grader 5.x (the release that
# accepts ipywidgets 7) imports; setuptools 81 removed it.
FLOOR_PINS := jax==0.7.2 jaxlib==0.7.2 flax==0.11.2 optax==0.2.8 ipywidgets==7.7.1 "numpy==2.1.*" "setuptools>=77,<81"

BIN := $(VENV)/bin
# The stamp's name carries a hash of what is installed from: a fresh clone, a branch switch or an
# edit of this file leave it valid while pyproject.toml, EXTRAS and PINS are the same.
INSTALL_KEY := $(shell $(PYTHON) -c 'import hashlib, sys; print(hashlib.sha256(open("pyproject.toml", "rb").read() + sys.argv[1].encode()).hexdigest()[:12])' '$(EXTRAS) $(PINS)')
STAMP := $(VENV)/.installed-$(INSTALL_KEY)
# The environment's tools come first on the PATH, also for the kernels the notebooks run in.
export PATH := $(abspath $(BIN)):$(PATH)
export VIRTUAL_ENV := $(abspath $(VENV))
# JAX's persistent compilation cache, one per environment (the key includes the versions):
# a second run of the tests or the book loads the compiled programs instead of compiling
# them again. The notebooks' kernels inherit it; Colab and plain `python` are untouched.
export JAX_COMPILATION_CACHE_DIR ?= $(abspath $(VENV))/jax-cache
export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS ?= 0
export JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES ?= 0

.DEFAULT_GOAL := help
.PHONY: help setup book test test-floor lint clean colab student course grade bundle grade-rehearsal slides pdf

help:
	@sed -n '1,/^$$/p' Makefile

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is needed, this is " + sys.version.split()[0] + " (set PYTHON=...)")'
	@$(PYTHON) -m venv $(VENV) || { echo "Could not create $(VENV). On Debian/Ubuntu: apt install python3-venv" >&2; exit 1; }

$(STAMP): | $(BIN)/python
	@echo "Installing the project with [$(EXTRAS)] into $(VENV) (new, or pyproject.toml changed; the first time downloads ~600 MB)"
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]" $(PINS)
	@rm -f $(VENV)/.installed*
	@touch $@

setup: $(STAMP)

# The book's execution cache keeps a notebook's outputs while its code is unchanged; outputs
# also depend on the packages, so any change to their sources, their recorded runs (or the
# dependencies) empties it, and Sphinx's record of the pages read (.doctrees), without which
# Sphinx would not read, and so not execute, a page whose own source is unchanged.
PACKAGE_SOURCES := $(shell find entmax_lib entmax_book -name '*.py' -o -name '*.json' -o -name '*.npz' 2>/dev/null)
_build/.packages-stamp: $(PACKAGE_SOURCES) pyproject.toml
	rm -rf _build/.jupyter_cache _build/.doctrees
	@mkdir -p _build && touch $@

book: $(STAMP) _build/.packages-stamp
	jupyter-book build -W -n --keep-going .

test: $(STAMP)
	python -m pytest -n $(WORKERS) --dist loadfile $(ARGS)

FLOOR := VENV=.venv-floor EXTRAS=test PINS='$(FLOOR_PINS)'
test-floor:
	@$(MAKE) --no-print-directory setup $(FLOOR)
	@.venv-floor/bin/python -c "import jax, flax, optax, numpy, ipywidgets; print('floor:', jax.__version__, flax.__version__, optax.__version__, numpy.__version__, ipywidgets.__version__)"
	@$(MAKE) --no-print-directory test $(FLOOR)

lint: $(STAMP)
	ruff check .
	ruff format --check .

clean:
	rm -rf _build

colab: $(STAMP)
	python -m tools.colab

student: $(STAMP)
	python -m tools.student

course: $(STAMP)
	python -m tools.course

OUT ?=
grade: $(STAMP)
	python -m tools.course grade-all "$(AUTOGRADER)" "$(SUBMISSIONS)" $(if $(OUT),--out "$(OUT)") $(if $(ROSTER),--roster "$(ROSTER)")

bundle: $(STAMP)
	python -m tools.course bundle "$(OUT)" $(if $(SEED),--seed "$(SEED)") $(if $(START),--start "$(START)") $(if $(TZ),--timezone "$(TZ)") $(if $(filter 0,$(KEYS)),--no-run-keys)

REHEARSAL ?= ch2_gradients
grade-rehearsal: course
	rm -rf _build/rehearsal
	python -m tools.fake_class _build/course/$(REHEARSAL) _build/rehearsal/submissions
	python -m tools.course grade-all _build/course/$(REHEARSAL)-autograder.zip _build/rehearsal/submissions --roster _build/rehearsal/roster.csv --out _build/rehearsal/graded --timeout 60
	python -m tools.fake_class check _build/rehearsal/kinds.csv _build/rehearsal/graded/scores.csv --timeout 60

slides: $(STAMP) student
	python -m tools.slides

pdf: $(STAMP) _build/.packages-stamp
	tools/pdf.sh
