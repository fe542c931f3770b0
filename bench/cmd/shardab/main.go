// Command shardab measures what sharding the batch changes on the MLP
// benchmark family: each configuration is built twice in one process, as
// variant A and variant B, and the two train in alternating blocks of
// iterations, so that the slow and fast phases of a shared machine fall on
// both alike. It prints the median seconds per iteration of each and their
// ratio B/A. The variants:
//
//	plain  one solve, the plain field
//	field  one solve, the field sharded (odeblock.ShardedField; mlpfamily.ShardField)
//	solve  one solve per worker, each of a shard of the batch (Block.Shards; mlpfamily.ShardSolve)
//
//	shardab [-rounds 5] [-block 5] [-shards 0] [-a plain] [-b field] CONFIG... | all
//
// The first iteration of each block is not timed (the other problem's
// working set has just left the caches).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/adamnode/adamnode/bench/mlpfamily"
)

func main() {
	rounds := flag.Int("rounds", 5, "blocks of each side")
	block := flag.Int("block", 5, "timed iterations a block")
	shards := flag.Int("shards", 0, "shards of the sharded field (0: as odeblock.ShardedField(f, 0) decides)")
	a := flag.String("a", "plain", "variant A: plain, field or solve")
	b := flag.String("b", "field", "variant B: plain, field or solve")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: shardab [-rounds N] [-block N] [-shards N] [-a VARIANT] [-b VARIANT] CONFIG... | all")
		flag.PrintDefaults()
	}
	flag.Parse()
	mlpfamily.ShardCount = *shards
	names := flag.Args()
	if len(names) == 1 && names[0] == "all" {
		names = nil
		for _, c := range mlpfamily.Configs() {
			names = append(names, c.Name)
		}
	}
	variants := []string{*a, *b}
	for _, v := range variants {
		if !slices.Contains([]string{"plain", "field", "solve"}, v) {
			fmt.Fprintf(os.Stderr, "shardab: unknown variant %q (plain, field or solve)\n", v)
			os.Exit(2)
		}
	}
	if len(names) == 0 || *rounds < 1 || *block < 1 {
		flag.Usage()
		os.Exit(2)
	}
	fmt.Printf("%-42s %9s %9s %8s\n", "config", *a+" ms", *b+" ms", "ratio")
	for _, name := range names {
		plain, sharded, err := compare(name, variants, *rounds, *block)
		if err != nil {
			fmt.Fprintln(os.Stderr, "shardab:", err)
			os.Exit(1)
		}
		fmt.Printf("%-42s %9.2f %9.2f %8.3f\n", name, plain*1e3, sharded*1e3, sharded/plain)
	}
}

// compare returns the median seconds per iteration of the named
// configuration's problem in the two variants.
func compare(name string, variants []string, rounds, block int) (a, b float64, err error) {
	c, err := mlpfamily.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	var ps [2]*mlpfamily.Problem
	for i := range ps {
		mlpfamily.ShardField = variants[i] == "field"
		mlpfamily.ShardSolve = 0
		if variants[i] == "solve" {
			mlpfamily.ShardSolve = runtime.GOMAXPROCS(0)
		}
		if ps[i], err = mlpfamily.New(c); err != nil {
			return 0, 0, err
		}
		for range 2 {
			if _, err := ps[i].Step(); err != nil {
				return 0, 0, err
			}
		}
	}
	var secs [2][]float64
	for range rounds {
		for i, p := range ps {
			for k := 0; k <= block; k++ {
				start := time.Now()
				if _, err := p.Step(); err != nil {
					return 0, 0, err
				}
				if k > 0 {
					secs[i] = append(secs[i], time.Since(start).Seconds())
				}
			}
		}
	}
	return median(secs[0]), median(secs[1]), nil
}

func median(x []float64) float64 {
	slices.Sort(x)
	return x[len(x)/2]
}
