# The two commands a newcomer types: `make run` and `make test`.
# Each installs missing Debian packages first, then configures and builds.

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
MESON_OPTS ?=
RUN_ARGS   ?=

.PHONY: all deps build run test test-asan bench fuzz clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD) -Dwerror=true $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	./$(BUILD)/uvsched $(RUN_ARGS)

test: build
	meson test -C $(BUILD) --print-errorlogs --num-processes 2

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
$(ASAN_BUILD)/build.ninja: | deps
	meson setup $(ASAN_BUILD) -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug -Dbenchmarks=false

test-asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  meson test -C $(ASAN_BUILD) --print-errorlogs --num-processes 2 --timeout-multiplier 3

bench: build
	bench/run.sh

# libFuzzer targets (clang, ASan+UBSan), each run FUZZ_SECONDS from tests/fuzz/corpus.
$(FUZZ_BUILD)/build.ninja: | deps
	CC=clang CXX=clang++ meson setup $(FUZZ_BUILD) -Dwerror=true -Dfuzz=true -Dtests=false -Dbenchmarks=false \
	  -Db_sanitize=address,undefined -Db_lundef=false

fuzz: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
