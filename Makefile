# adamnode — build, test and benchmark.
#
#   make test    vet, then the tests in the pure-Go build and (when libopenblas
#                is installed) the OpenBLAS build, then the race detector on
#                the concurrent packages
#   make bench   the benchmarks, results saved to bench/latest.txt

GO ?= go
# OpenBLAS is used when a program can link against it (Debian: libopenblas-dev).
HAVE_OPENBLAS := $(shell printf 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null 2>/dev/null && echo yes)
ifeq ($(HAVE_OPENBLAS),yes)
TAGS := openblas
endif
RACE_PKGS := ./tensor/... $(wildcard ./data)
BENCHTIME ?= 1s

.PHONY: test vet bench fmt-check

test: fmt-check vet
	$(GO) test -count=1 ./...
ifeq ($(HAVE_OPENBLAS),yes)
	$(GO) test -count=1 -tags openblas ./...
else
	@echo "libopenblas not found: skipped the OpenBLAS build (apt-get install libopenblas-dev)"
endif
	$(GO) test -count=1 -race $(RACE_PKGS)

vet:
	$(GO) vet ./...
ifeq ($(HAVE_OPENBLAS),yes)
	$(GO) vet -tags openblas ./...
endif

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

bench:
	@mkdir -p bench
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./... | tee bench/latest.txt.tmp
	@mv bench/latest.txt.tmp bench/latest.txt
	@echo "saved bench/latest.txt"
