# Front door. `make run` and `make test` work on a fresh Debian machine: each installs
# what is missing (scripts/install-deps.sh), builds, and runs.
JOBS    ?= $(shell nproc)
CONFIG  ?= configs/zone.yaml
BUILD   ?= build
RELEASE ?= build-release
ASAN    ?= build-asan
CTEST_ARGS ?=

.PHONY: all deps build release run test test-asan bench load format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

# Tests run on an optimised build with debug info and assertions-as-tests.
build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

release: deps
	cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(RELEASE) -j $(JOBS)

run: release
	$(RELEASE)/server/zone/zone-server --config $(CONFIG)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DZONE_SANITIZE=ON -DZONE_BUILD_BENCH=ON
	cmake --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: release
	$(RELEASE)/bench/aoi-bench --workload all

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(RELEASE) $(ASAN)
