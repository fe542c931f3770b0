# adamnode — build, test and benchmark.
#
#   make test    vet (here and, cross-compiled, for the other systems), then
#                the tests in the pure-Go build, (when libopenblas is
#                installed) the OpenBLAS build and (when Open MPI is) the MPI
#                tests, the race detector on the concurrent packages, then
#                the kernel tests again on each slower kernel path this CPU
#                runs (make test-paths), and the arm64 kernels under
#                emulation when qemu-user-static is installed (make
#                test-arm64)
#   make cross   go vet ./... for windows/amd64, linux/arm64, darwin/arm64,
#                darwin/amd64 and the purego build (vet type-checks the
#                tests too)
#   make test-paths
#                the tests of the packages with kernels of their own, once
#                for each kernel path below this CPU's fastest, forced
#                through ADAMNODE_CPU (docs/build.md, "Kernel paths")
#   make bench   the benchmarks, results saved to bench/latest.txt (OpenBLAS
#                given its vector kernels, as bench/openblas_core.sh does)
#   make bench-compare
#                side by side with PyTorch + torchdiffeq (Debian's
#                python3-torch; TORCHDIFFEQ=the torchdiffeq source tree):
#                the MLP family and the paper's MNIST AdamNODE
#   make mutate  mutation testing of the library packages (internal/cmd/mutate),
#                MUTATE_BUDGET per package, a random sample past it; the
#                figures into bench/mutation.md
#   make mutate-diff
#                the mutants of the lines changed since MUTATE_DIFF (auto:
#                $MUTATE_BASE, origin/main's merge base, else HEAD~1): fails
#                when one lives that bench/mutation-equivalent.txt does not
#                accept (CI runs it)
#   make demo    the paper's experiments, small: a short compare of the six
#                models on a Fashion-MNIST subset (Figure 2), then the
#                Silverbox (Figure 3) and trajectory (Figure 1) figures, into
#                out/demo/

GO ?= go
# OpenBLAS is used when a program can link against it (Debian: libopenblas-dev).
HAVE_OPENBLAS := $(shell printf 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null 2>/dev/null && echo yes)
ifeq ($(HAVE_OPENBLAS),yes)
TAGS := openblas
endif
# MPI (Debian: libopenmpi-dev openmpi-bin) for the data-parallel tests.
HAVE_MPI := $(shell pkg-config --exists ompi 2>/dev/null && command -v mpirun >/dev/null && echo yes)
MPI_PKGS := ./distributed ./train ./cmd/adamnode
RACE_PKGS := ./tensor ./autograd ./data ./distributed ./train ./serve ./infer
# The concurrent tests of the packages whose whole suites take long under
# the race detector: cmd/adamnode's replicas and server, odeblock's shards,
# the integrator's split combiner, sde's Brownian paths and cuda's
# concurrent host reads and device threads, in one run (the packages side
# by side): the pattern picks the same tests in each of them as its own
# part would (go test -list '$(RACE_RUN)' $(RACE_RUN_PKGS)).
RACE_RUN_PKGS := ./cmd/adamnode ./odeblock ./odeblock/integrate ./sde ./cuda
RACE_RUN := TestTrainReplicas|TestServe|TestShardedField|ExampleShardedField|TestShardedSolve|ExampleBlock_shards|TestCombinerSplits|TestBrownianConcurrent|TestConcurrentHostReads|TestDeviceOnEveryThread|TestResultsStayOnDevice|TestElementwiseChainStaysOnDevice
# The OpenBLAS build's tests: every package but cuda, whose device code
# (the stand-in's kernels, cuBLAS and cuDNN) the tag does not change and
# whose tests, the longest of all, the pure-Go build has run, and but the
# GEMM kernels' packages under tensor/internal, where the tag adds OpenBLAS
# to the benchmarks only (make vet builds their tests with it).
OPENBLAS_TEST_PKGS = $(shell $(GO) list ./... | grep -v -e '/cuda$$' -e '/tensor/internal/')
ALL_PKGS = $(shell $(GO) list ./...)
BENCHTIME ?= 1s

.PHONY: test test-cuda test-builds vet cross test-paths test-arm64 bench bench-compare fmt-check demo demo-data mutate mutate-diff

test: fmt-check vet cross
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-cuda test-builds
ifeq ($(HAVE_MPI),yes)
	$(GO) test -count=1 -tags 'mpi $(TAGS)' -run 'MPI|Distributed|Local' $(MPI_PKGS)
else
	@echo "Open MPI not found: skipped the MPI tests (apt-get install libopenmpi-dev openmpi-bin)"
endif
	$(GO) test -count=1 -race $(RACE_PKGS)
	$(GO) test -count=1 -race -short ./tensor/internal/...
	$(GO) test -count=1 -race -run '$(RACE_RUN)' $(RACE_RUN_PKGS)
	@$(MAKE) --no-print-directory test-paths
	@$(MAKE) --no-print-directory test-arm64

# cuda's tests (the stand-in's device, emulated on one thread: about 4
# minutes on 2 cores, the longest package's by far) run beside the other
# packages' tests in the pure-Go build and then the OpenBLAS build's, which
# would otherwise wait for them with a core idle; make prints each side's
# output when it ends.
test-cuda:
	$(GO) test -count=1 -timeout 20m ./cuda

test-builds:
	$(GO) test -count=1 -timeout 20m $(filter-out $(MODULE)/cuda,$(ALL_PKGS))
ifeq ($(HAVE_OPENBLAS),yes)
	$(GO) test -count=1 -tags openblas $(OPENBLAS_TEST_PKGS)
else
	@echo "libopenblas not found: skipped the OpenBLAS build (apt-get install libopenblas-dev)"
endif

vet:
	$(GO) vet ./...
ifeq ($(HAVE_OPENBLAS),yes)
	$(GO) vet -tags openblas ./...
endif
ifeq ($(HAVE_MPI),yes)
	$(GO) vet -tags mpi $(MPI_PKGS)
endif

# The systems besides this one that a Go user builds for, vetted
# cross-compiled: type-checked with their build constraints, tests
# included. Cross-compiling turns cgo off, so the openblas and mpi builds
# are vetted only natively (make vet). The purego build changes only the
# packages with assembly. make test vets all four: windows/amd64,
# darwin/amd64, linux/arm64 (whose build cache the arm64 tests under
# emulation reuse) and darwin/arm64; `make cross CROSS=windows/amd64` vets
# one.
#
# A system of an architecture already vetted (this machine's, by make vet,
# or one vetted whole before it in CROSS: list linux/arm64 ahead of
# darwin/arm64), and the purego build against this one, are vetted only
# where they can differ from it (VET_DELTA): vet's findings in a package
# depend on its files and on the declarations it sees of what it imports,
# so a package with the same files (Go, cgo, assembly, tests) in both
# builds, none of whose imports' exported declarations differ, gets the
# same findings in both and was vetted already; every file is vetted in
# every build. Those vetted again are (1) the packages whose files differ,
# (2) those importing (tests included, at any depth) one of them whose
# exported declarations may differ (its build-dependent files declare a
# type, exported names in a group, or other exported lines on each side),
# and (3)
# on another system, those importing syscall, golang.org/x/sys/unix or
# windows, or purego, whose declarations are the system's (the standard
# library's portable packages declare the same on every system). Here
# that is tensor, its GEMMs, cuda, peakrss and the two commands that
# name SIGTERM on windows/amd64, fewer on the darwins: with a cold build
# cache on 2 cores, a second system of an architecture costs about a third
# of a whole vet.
CROSS ?= windows/amd64 darwin/amd64 linux/arm64 darwin/arm64

# VET_DELTA REF_ENV REF_TAGS ENV TAGS: go vet, under the environment ENV
# (GOOS=… GOARCH=… CGO_ENABLED=…) and the build tags TAGS, the packages
# that can get other findings there than under REF_ENV and REF_TAGS (see
# above); it names them first.
define VET_DELTA
set -e
ref_env=$$1 ref_tags=$$2 new_env=$$3 new_tags=$$4
tmp=$$(mktemp -d)
trap 'rm -rf "$$tmp"' EXIT
files='{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}} {{join .CgoFiles " "}}|{{join .SFiles " "}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}'
env $$ref_env $(GO) list -e -tags "$$ref_tags" -f "$$files" ./... >"$$tmp/ref"
env $$new_env $(GO) list -e -tags "$$new_tags" -f "$$files" ./... >"$$tmp/new"
# The exported declarations of the build-dependent non-test files, one
# line each (a function's without its body), or "?" where they may hide a
# difference (a type, a parenthesised group); an empty list when the
# non-test files are the same.
decls() {
	dir=$$1
	shift
	for f in "$$@"; do
		awk '/^(var|const) \($$/ { group = 1; next }
			group && /^\)/ { group = 0; next }
			group && /^\t[A-Z]/ { print "?"; next }
			/^type / { print "?"; next }
			/^(func|var|const) [A-Z]/ || /^func \([^)]*\) [A-Z]/ { sub(/ \{.*$$/, ""); print }' "$$dir/$$f"
	done | sort
}
: >"$$tmp/vet"
: >"$$tmp/api"
while IFS='|' read -r pkg dir src other; do
	r=$$(awk -F'|' -v p="$$pkg" '$$1 == p' "$$tmp/ref")
	[ "$$r" = "$$pkg|$$dir|$$src|$$other" ] && continue
	echo "$$pkg" >>"$$tmp/vet"
	rsrc=$$(echo "$$r" | cut -d'|' -f3)
	only_ref=$$(for f in $$rsrc; do case " $$src " in *" $$f "*) ;; *) echo "$$f" ;; esac; done)
	only_new=$$(for f in $$src; do case " $$rsrc " in *" $$f "*) ;; *) echo "$$f" ;; esac; done)
	a=$$(decls "$$dir" $$only_ref)
	b=$$(decls "$$dir" $$only_new)
	# (A package with no files in one of the builds is imported there by
	# none, and in the other only from files of that build alone.)
	[ -n "$$rsrc" ] && [ -n "$$(echo $$src)" ] || continue
	if [ "$$a" != "$$b" ] || echo "$$a" | grep -qx '?'; then
		echo "$$pkg" >>"$$tmp/api"
	fi
done <"$$tmp/new"
if [ "$$(env $$ref_env $(GO) env GOOS)" != "$$(env $$new_env $(GO) env GOOS)" ]; then
	env $$new_env $(GO) list -e -tags "$$new_tags" \
		-f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
		awk '/ (syscall|golang\.org\/x\/sys\/unix|golang\.org\/x\/sys\/windows|github\.com\/ebitengine\/purego)( |$$)/ { print $$1 }' >>"$$tmp/vet"
fi
if [ -s "$$tmp/api" ]; then
	env $$new_env $(GO) list -e -tags "$$new_tags" -test \
		-f '{{if .ForTest}}{{.ForTest}}{{else}}{{.ImportPath}}{{end}} {{join .Deps " "}}' ./... |
		awk 'NR == FNR { api[$$1] = 1; next } { for (i = 2; i <= NF; i++) if ($$i in api) { print $$1; next } }' "$$tmp/api" - |
		grep -v '\.test$$' >>"$$tmp/vet" || true
fi
pkgs=$$(sort -u "$$tmp/vet")
if [ -z "$$pkgs" ]; then
	echo "  nothing differs"
	exit 0
fi
echo "  the packages that can differ:" $$(echo "$$pkgs" | sed 's|^$(MODULE)/||; s|^$(MODULE)$$|.|')
env $$new_env $(GO) vet -tags "$$new_tags" $$pkgs
endef
export VET_DELTA
MODULE := $(shell $(GO) list -m)
NATIVE_ARCH := $(shell $(GO) env GOARCH)
NATIVE := $(shell $(GO) env GOOS)/$(NATIVE_ARCH)

cross: vet
	@whole=""; for t in $(CROSS); do \
		os=$${t%/*}; arch=$${t#*/}; \
		[ "$$t" = "$(NATIVE)" ] && continue; \
		ref=""; \
		[ "$$arch" = "$(NATIVE_ARCH)" ] && ref=native; \
		for w in $$whole; do [ -z "$$ref" ] && [ "$${w#*/}" = "$$arch" ] && ref=$$w; done; \
		if [ -z "$$ref" ]; then \
			echo "GOOS=$$os GOARCH=$$arch $(GO) vet ./..."; \
			GOOS=$$os GOARCH=$$arch $(GO) vet ./... || exit 1; \
			whole="$$whole $$t"; \
		elif [ "$$ref" = native ]; then \
			echo "GOOS=$$os GOARCH=$$arch $(GO) vet: where it can differ from this system's build"; \
			sh -c "$$VET_DELTA" vet-delta "" "" "GOOS=$$os GOARCH=$$arch CGO_ENABLED=0" "" || exit 1; \
		else \
			echo "GOOS=$$os GOARCH=$$arch $(GO) vet: where it can differ from $$ref's"; \
			sh -c "$$VET_DELTA" vet-delta "GOOS=$${ref%/*} GOARCH=$$arch CGO_ENABLED=0" "" "GOOS=$$os GOARCH=$$arch CGO_ENABLED=0" "" || exit 1; \
		fi; \
	done
	@echo "$(GO) vet -tags purego: where it can differ from this build"
	@sh -c "$$VET_DELTA" vet-delta "" "" "" purego

# The kernel paths slower than this CPU's fastest (avx2, sse2 and generic
# on an AVX-512 machine, sse2 and generic on an AVX2 one, generic on an
# amd64 CPU without AVX2 and on arm64, none elsewhere), each forced
# through ADAMNODE_CPU for the tests of the packages with kernels of their
# own: tensor and autograd whole, sgemm and dgemm short (their full tests
# run the AVX2 and SSE2 kernels directly on any CPU that runs them
# already; on generic they are gonum's), and odeblock's tests of its AdamNODE kernels, norm2 and the
# families (its whole suite takes minutes).
KERNEL_PATHS_BELOW = $(shell env -u ADAMNODE_CPU $(GO) run ./internal/cmd/kernelpath -below)
KERNEL_ODE_TESTS := Adam|Norm2|Famil|FusedRHS|ModesAgree

test-paths:
	@for p in $(KERNEL_PATHS_BELOW); do \
		echo "ADAMNODE_CPU=$$p: the kernel tests on the $$p path"; \
		ADAMNODE_CPU=$$p $(GO) test -count=1 ./tensor ./tensor/internal/gemm ./tensor/internal/isa ./autograd ./odeblock/integrate || exit 1; \
		ADAMNODE_CPU=$$p $(GO) test -count=1 -short ./tensor/internal/sgemm ./tensor/internal/dgemm || exit 1; \
		ADAMNODE_CPU=$$p $(GO) test -count=1 -run '$(KERNEL_ODE_TESTS)' ./odeblock || exit 1; \
	done

# arm64 under user-mode emulation (Debian: qemu-user-static), where it is
# installed: the packages with arm64 kernels (tensor's vector maps, the
# GEMMs' NEON kernels) on the neon path, odeblock's kernel tests and the
# integrator on arm64's Go (whose compiler fuses x*y+z into one rounding
# where a product is not converted), and tensor once more on the generic
# path (the GEMMs' tests run their NEON driver whatever the path). Speed cannot be measured under emulation: on an arm64
# machine, make bench.
QEMU_ARM64 := $(shell command -v qemu-aarch64-static 2>/dev/null)
ARM64_TEST = GOARCH=arm64 $(GO) test -count=1 -exec $(QEMU_ARM64)

test-arm64:
ifeq ($(QEMU_ARM64),)
	@echo "qemu-aarch64-static not found: skipped the arm64 tests (apt-get install qemu-user-static)"
else
	$(ARM64_TEST) -short ./tensor/... ./odeblock/integrate
	$(ARM64_TEST) -run '$(KERNEL_ODE_TESTS)' ./odeblock
	ADAMNODE_CPU=generic $(ARM64_TEST) -short ./tensor
endif

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

bench:
	@mkdir -p bench
	bash -c 'python=$${PYTHON:-python3}; . bench/openblas_core.sh; exec $(GO) test -tags "$(TAGS)" -run "^$$" -bench . -benchmem -benchtime $(BENCHTIME) ./...' | tee bench/latest.txt.tmp
	@mv bench/latest.txt.tmp bench/latest.txt
	@echo "saved bench/latest.txt"

MUTATE_PKGS ?= ./tensor ./tensor/internal/gemm ./autograd ./layers ./optim ./odeblock ./odeblock/integrate ./train
MUTATE_BUDGET ?= 5m
MUTATE_DIFF ?= auto
MUTATE_DIFF_BUDGET ?= 3m
MUTATE_DIFF_TOTAL ?= 10m

mutate:
	nice $(GO) run ./internal/cmd/mutate -budget $(MUTATE_BUDGET) -report bench/mutation.md $(MUTATE_PKGS)

mutate-diff:
	$(GO) run ./internal/cmd/mutate -diff $(MUTATE_DIFF) -budget $(MUTATE_DIFF_BUDGET) -total $(MUTATE_DIFF_TOTAL) $(MUTATE_PKGS)

bench-compare:
	@if [ -z "$$TORCHDIFFEQ" ]; then echo "set TORCHDIFFEQ to the torchdiffeq source tree (git clone https://github.com/rtqichen/torchdiffeq)"; exit 1; fi
	bench/compare_mlp.sh
	bench/compare_mnist.sh

# The demo's data: Debian's dataset-fashion-mnist package, installed when
# missing if we are root.
FASHION_MNIST_DIR := /usr/share/datasets/fashion-mnist
DEMO_OUT ?= out/demo
# Six models in the paper's configurations, 256 training and 256 test
# images, 2 epochs, lr 1e-3 (the paper's MNIST lr is 1e-4: too slow to show
# in 16 steps). About 4 minutes on 2 cores with OpenBLAS.
DEMO_COMPARE ?= --subset 256 --test-subset 256 --epochs 2 --lr 1e-3
# Figure 3 in the authors' setting on the built-in Silverbox recording, and
# Figure 1: the commands' defaults (a few seconds each).
DEMO_SILVERBOX ?=
DEMO_TRAJECTORIES ?=

demo: demo-data
	@mkdir -p $(DEMO_OUT)
	$(GO) build -tags '$(TAGS)' -o $(DEMO_OUT)/adamnode ./cmd/adamnode
	$(DEMO_OUT)/adamnode compare $(DEMO_COMPARE) --out $(DEMO_OUT)/compare
	$(DEMO_OUT)/adamnode silverbox $(DEMO_SILVERBOX) --out $(DEMO_OUT)/silverbox
	$(DEMO_OUT)/adamnode trajectories $(DEMO_TRAJECTORIES) --out $(DEMO_OUT)/trajectories

demo-data:
	@if [ ! -d $(FASHION_MNIST_DIR) ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing dataset-fashion-mnist"; \
			apt-get install -y dataset-fashion-mnist || { apt-get update && apt-get install -y dataset-fashion-mnist; }; \
		else \
			echo "Fashion-MNIST is missing: install it with 'sudo apt-get install dataset-fashion-mnist' (Debian)"; exit 1; \
		fi; \
	fi
