// Command shardab measures what odeblock.ShardedField changes on the MLP
// benchmark family: each configuration is built twice in one process, with
// the plain field and with the sharded one (mlpfamily.ShardField), and the
// two train in alternating blocks of iterations, so that the slow and fast
// phases of a shared machine fall on both alike. It prints the median
// seconds per iteration of each and their ratio.
//
//	shardab [-rounds 5] [-block 5] [-shards 0] CONFIG... | all
//
// The first iteration of each block is not timed (the other problem's
// working set has just left the caches).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/adamnode/adamnode/bench/mlpfamily"
)

func main() {
	rounds := flag.Int("rounds", 5, "blocks of each side")
	block := flag.Int("block", 5, "timed iterations a block")
	shards := flag.Int("shards", 0, "shards of the sharded side (0: as odeblock.ShardedField(f, 0) decides)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: shardab [-rounds N] [-block N] [-shards N] CONFIG... | all")
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
	if len(names) == 0 || *rounds < 1 || *block < 1 {
		flag.Usage()
		os.Exit(2)
	}
	fmt.Printf("%-42s %9s %9s %8s\n", "config", "plain ms", "shard ms", "ratio")
	for _, name := range names {
		plain, sharded, err := compare(name, *rounds, *block)
		if err != nil {
			fmt.Fprintln(os.Stderr, "shardab:", err)
			os.Exit(1)
		}
		fmt.Printf("%-42s %9.2f %9.2f %8.3f\n", name, plain*1e3, sharded*1e3, sharded/plain)
	}
}

// compare returns the median seconds per iteration of the plain and the
// sharded problem of the named configuration.
func compare(name string, rounds, block int) (plain, sharded float64, err error) {
	c, err := mlpfamily.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	var ps [2]*mlpfamily.Problem
	for i := range ps {
		mlpfamily.ShardField = i == 1
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
