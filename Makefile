# threadlab: reproducible server threading-model experiments.
# `make help` lists the targets.

GO        ?= go
BIN       := bin/threadlab
VERSION   := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/threadlab/threadlab/pipeline.version=$(VERSION)
EXP       ?=
PROFILE   ?=
GOFILES   := $(shell find . -name '*.go' -not -path './node_modules/*' 2>/dev/null) go.mod go.sum

# EXP and PROFILE are pasted into shell lines: each must be one word without
# shell or path characters (EXP='x; id' ran id in the guard line below).
lp := (
rp := )
unsafe_chars := ; & | ` $$ ' " < > \ / * ? ~ $(lp) $(rp)
unsafe = $(strip $(if $(filter-out 1,$(words $(1))),space)$(foreach c,$(unsafe_chars),$(findstring $(c),$(1))))
unsafe_list = $(strip $(foreach w,$(1),$(call unsafe,$(w))))

.DEFAULT_GOAL := help
.PHONY: help build targets experiment status publish test test-short bench bench-loadgen lint report setup clean actionlint review

help: ## list the targets
	@echo "threadlab: reproducible server threading-model experiments"
	@echo
	@echo "  make experiment EXP=<name> [PROFILE=smoke|full]   run experiments/<name>.yaml end to end"
	@echo
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 24
	@echo
	@echo "experiments: $$(ls experiments/*.yaml | xargs -n1 basename | sed 's/.yaml//' | tr '\n' ' ')"

$(BIN): $(GOFILES)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/threadlab

build: $(BIN) ## build bin/threadlab

targets: $(BIN) ## build the Spring Boot targets on every line, 3.5/4.0/4.1 (cached by source hash and version; needs JDK >= 21 and Maven)
	$(BIN) targets -boot all

experiment: $(BIN) ## run EXP (PROFILE=smoke for seconds, full for the seed's parameters); data/ and reports/
	$(if $(EXP),$(if $(call unsafe,$(EXP)),$(error EXP must be an experiment's name, one word of letters, digits and -, e.g. EXP=io-bound)))
	$(if $(PROFILE),$(if $(call unsafe,$(PROFILE)),$(error PROFILE must be a profile's name, one word, e.g. PROFILE=smoke)))
	@test -n "$(EXP)" || { echo "usage: make experiment EXP=<name> [PROFILE=smoke|full]"; echo "experiments: $$(ls experiments/*.yaml | xargs -n1 basename | sed 's/.yaml//' | tr '\n' ' ')"; exit 2; }
	@test -f experiments/$(EXP).yaml || { echo "no experiments/$(EXP).yaml; experiments: $$(ls experiments/*.yaml | xargs -n1 basename | sed 's/.yaml//' | tr '\n' ' ')"; exit 2; }
	$(BIN) run $(if $(PROFILE),--profile $(PROFILE)) experiments/$(EXP).yaml

status: $(BIN) ## which experiments need a new run (their manifest changed since the run their page shows, that run was warmed up by an older until-steady rule, or none yet) or a re-evaluation, with each headline run's dead time and the planned time
	$(BIN) status

publish: ## run EXPS="a b" (default: those `make status` says need a new run) one after another for publication from a committed tree, each only if its dry-run plan + 10% ends before UNTIL=HH:MM UTC; runs setup and rebuilds first, interrupts a run past 1.5x its plan, re-renders the site after (scripts/publish.sh); quiet machine only
	$(if $(call unsafe_list,$(EXPS) $(UNTIL)),$(error EXPS must be experiment names and UNTIL a time, e.g. EXPS="io-bound pool-sweep" UNTIL=17:30))
	scripts/publish.sh $(if $(UNTIL),--until $(UNTIL)) $(EXPS)

test: ## vet and run every test, including short real Spring Boot and PostgreSQL runs
	$(GO) vet ./...
	# -p 1: packages run one at a time, so the load generator's timing tests
	# never share the 2 cores with another package's JVMs.
	$(GO) test -p 1 -timeout 20m ./...

test-short: ## unit tests only (no JVM, no PostgreSQL, no Chromium)
	$(GO) test -short ./...

bench: ## Go benchmarks (speed and allocation targets live here, not in unit tests)
	$(GO) test -run '^$$' -bench . -benchmem ./...

calibration: ## Monte Carlo error rates, power, interval coverage and sequential savings of every claim test through the production bootstrap, as the tables in METHODOLOGY.md (~10 CPU-s per repetition; REPS=100 by default, 1000 needs ~3 CPU-hours; KIND=increases_over prints one kind's table)
	@cd stats && $(GO) test -run '^TestCalibrationTable$$' -calibration -calibration.reps $(or $(REPS),100) $(if $(KIND),-calibration.kind '$(KIND)') -count=1 -timeout 600m . | grep -v -e '^PASS$$' -e '^ok '

calibration-steady: ## false "supported" of the steady-state selection under variant-specific warm-up, and of the until-steady stop rule under a slow drift, 4/8/16 forks (about 1 CPU-minute at REPS=200)
	@$(GO) test -run '^Test(Steady|Drift)Calibration$$' -count=1 -v -timeout 120m ./judge/verdicts/ -steadycal.reps=$(or $(REPS),100) | grep -e '|' -e FAIL

bench-loadgen: ## our load generator vs wrk vs a net/http client, side by side, pinned
	scripts/bench-loadgen.sh

.PHONY: fuzz
FUZZTIME  ?= 30s
FUZZMIN   ?= 5s # how long the fuzzer may shrink each new interesting input (go's default is 60s)
fuzz: ## run each fuzz target for FUZZTIME (30s, or a count such as 50000x); a crasher is saved under testdata/fuzz: fix it, keep it
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./measure/load
	$(GO) test -run '^$$' -fuzz '^FuzzRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./measure/load
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./experiments
	$(GO) test -run '^$$' -fuzz '^FuzzParseHistogramLog$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./store/record
	$(GO) test -run '^$$' -fuzz '^FuzzHistogramClaims$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./store/record
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeJob$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./measure/fleet
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeResult$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./measure/fleet
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./env/hosts
	$(GO) test -run '^$$' -fuzz '^FuzzParseFlagsFinal$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./env
	$(GO) test -run '^$$' -fuzz '^FuzzParseRound$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./stats/steady
	$(GO) test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./stats/steady
	$(GO) test -run '^$$' -fuzz '^FuzzSettled$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./stats/steady

lint: $(BIN) ## validate every manifest and print methodology warnings
	$(BIN) lint experiments/*.yaml

report: $(BIN) ## re-render every report in reports/ from data/ alone
	@runs=$$(find data -name run.json -printf '%h\n' 2>/dev/null | sort); \
	if [ -z "$$runs" ]; then echo "no runs under data/"; else $(BIN) report $$runs; fi

actionlint: ## check .github/workflows with actionlint (make test runs it too; scripts/setup.sh installs it into bin/)
	@test -x bin/actionlint || { echo "bin/actionlint missing: run scripts/setup.sh"; exit 1; }
	bin/actionlint .github/workflows/*.yml

review: ## the manifest-review workflow locally: lint, smoke-run and diff the experiments changed against BASE (default origin/main)
	scripts/review.sh

setup: ## install what the tests need (PostgreSQL, Chromium, Maven, JDK 21 into .cache/jdk21, actionlint into bin/) and check the JDK
	scripts/setup.sh

clean: ## remove build output (keeps data/ and reports/)
	rm -rf bin
	find env/targets -name target -type d -prune -exec rm -rf {} +
	rm -rf env/targets/.boot
