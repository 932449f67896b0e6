# Front door. `make run` and `make test` work on a fresh Debian machine: each installs
# what is missing (scripts/install-deps.sh), builds, and runs. docs/testing.md describes
# every test target and what CI runs.
JOBS    ?= $(shell nproc)
CONFIG  ?= configs/zone.yaml
BUILD   ?= build
RELEASE ?= build-release
ASAN    ?= build-asan
TSAN    ?= build-tsan
FUZZ    ?= build-fuzz
# Labels the test runs leave out (a regular expression); the soak has its own target.
CTEST_EXCLUDE ?= soak
CTEST_ARGS ?=
# Seconds per fuzz target (make fuzz) and of the soak (make test-soak).
FUZZ_SECONDS ?= 60
SOAK_SECONDS ?= 180

.PHONY: all deps test-deps build release run viewer test check build-asan test-asan build-tsan \
        test-tsan test-soak build-fuzz fuzz bench load format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

# What the tests need beyond the build: Chromium (the live-map browser test), promtool
# (Prometheus' metrics check), nats-server (a world of zones) and PostgreSQL (the shared
# character store's tests start a throwaway server). Without them those tests are skipped.
test-deps:
	@bash scripts/install-deps.sh --tests

# Tests run on an optimised build with debug info and assertions-as-tests.
build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

# The Release binaries people run: the server, the bots, zone-ticket and the benchmarks (the tests run
# in $(BUILD) and the sanitizer builds, so the Release tree does not build them).
RELEASE_TARGETS ?= zone-server client-sim zone-ticket aoi-bench replication-bench
release: deps
	cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(RELEASE) -j $(JOBS) --target $(RELEASE_TARGETS)

# RUN_ARGS: more zone-server options, e.g. --set game.scripts_dir=configs/game.
RUN_ARGS ?=
run: release
	$(RELEASE)/server/zone/zone-server --config $(CONFIG) $(RUN_ARGS)

# The sample client with a window (SDL2; docs/client.md, "The sample client") on the zone
# `make run` starts: run it from a second terminal.
VIEWER_ARGS ?= --server 127.0.0.1:7777 --name viewer
viewer: deps
	cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(RELEASE) -j $(JOBS) --target zoneclient_viewer
	$(RELEASE)/shared/client/examples/viewer/zoneclient_viewer $(VIEWER_ARGS)

test: build test-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE '$(CTEST_EXCLUDE)' $(CTEST_ARGS)

# The unit tier, for the edit-compile-test loop: every test that starts no server process
# and needs no network, browser, NATS or PostgreSQL (about a minute of tests on two cores,
# after the build). `make test` stays the full run.
CHECK_EXCLUDE ?= server|integration|nats|browser|soak|fuzz|postgres
check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE '$(CHECK_EXCLUDE)' $(CTEST_ARGS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer. (Each build-X
# target only configures and builds X's folder: CI builds the later steps' folders while
# the earlier steps' tests run.)
build-asan: deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DZONE_SANITIZE=ON -DZONE_BUILD_BENCH=ON
	cmake --build $(ASAN) -j $(JOBS)

test-asan: build-asan
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS) -LE '$(CTEST_EXCLUDE)' $(CTEST_ARGS)

# The threaded parts under ThreadSanitizer: the server integration tests (a real zone
# loop, its admin HTTP threads, reloads from another thread) and the end-to-end sim
# tests (zone-server and client-sim binaries built with TSan).
TSAN_LABELS ?= server|integration|replication|threads
build-tsan: deps
	cmake -S . -B $(TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZONE_TSAN=ON -DZONE_BUILD_BENCH=OFF
	cmake --build $(TSAN) -j $(JOBS) --target server_tests sim_tests replication_tests \
		aoi_parallel_tests util_tests zone-server client-sim

test-tsan: build-tsan test-deps
	cd $(TSAN) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --output-on-failure -j $(JOBS) -L '$(TSAN_LABELS)' -LE 'browser|$(CTEST_EXCLUDE)' \
		$(CTEST_ARGS)

# Connection churn for SOAK_SECONDS under ASan+LSan (tests/soak/soak_test.cpp), in the
# ASan build folder.
test-soak: deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DZONE_SANITIZE=ON -DZONE_SOAK=ON
	cmake --build $(ASAN) -j $(JOBS) --target soak_tests zone-server client-sim
	cd $(ASAN) && ZONE_SOAK_SECONDS=$(SOAK_SECONDS) \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -V -L soak $(CTEST_ARGS)

# libFuzzer (clang): builds the fuzz targets, runs the seed corpora as tests, then each
# target for FUZZ_SECONDS (tests/fuzz/run.sh).
build-fuzz: deps
	@bash scripts/install-deps.sh --with clang --with libclang-rt-14-dev
	cmake -S . -B $(FUZZ) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DZONE_FUZZ=ON -DZONE_BUILD_BENCH=OFF
	cmake --build $(FUZZ) -j $(JOBS) --target fuzz_client_packet fuzz_snapshot_part fuzz_config

fuzz: build-fuzz
	cd $(FUZZ) && ctest --output-on-failure -L fuzz
	bash tests/fuzz/run.sh $(FUZZ) $(FUZZ_SECONDS)

bench: release
	$(RELEASE)/bench/aoi-bench --workload all

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(RELEASE) $(ASAN) $(TSAN) $(FUZZ)
