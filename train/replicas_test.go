package train_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/train"
)

// replicaOf returns RunReplicas' replica maker for newODENet(5) on k
// replicas of the global batch 32 (failAt, if positive, makes replica
// failing's solve fail from that training step on).
func replicaOf(t *testing.T, k, failing, failAt int) func(i int) (train.Replica[float64], error) {
	return func(i int) (train.Replica[float64], error) {
		tr, te := shardedLoaders(t, i, k)
		m := newODENet(5)
		if i == failing {
			m.failAt = failAt
		}
		return train.Replica[float64]{Model: m, Optimizer: optim.NewAdam(m.Params(), optim.AdamDefaults()), Train: tr, Test: te}, nil
	}
}

// TestRunReplicas: 2 and 4 in-process replicas of a global batch of 32
// end three epochs of Adam with one process's parameters and rows to
// 1e-12 (fixed-grid solver, float64); OnBatch and OnEpoch are called once
// per batch and epoch (by replica 0).
func TestRunReplicas(t *testing.T) {
	cfg := train.Config{Name: "ode", Epochs: 3, Quiet: true, Clip: 1}
	one := runRanks(t, context.Background(), 0, cfg, nil)[0]
	if one.err != nil {
		t.Fatal(one.err)
	}
	for _, k := range []int{2, 4} {
		var models []*odeNet
		batches, epochs := 0, 0
		c := cfg
		c.OnBatch = func(int, int) { batches++ }
		c.OnEpoch = func(train.Row, train.Row) error { epochs++; return nil }
		res, err := train.RunReplicas[float64](context.Background(), c, k, func(i int) (train.Replica[float64], error) {
			r, err := replicaOf(t, k, -1, 0)(i)
			models = append(models, r.Model.(*odeNet))
			return r, err
		})
		if err != nil {
			t.Fatalf("%d replicas: %v", k, err)
		}
		if batches != 9 || epochs != 3 {
			t.Errorf("%d replicas: OnBatch called %d times, OnEpoch %d; want 9 and 3", k, batches, epochs)
		}
		var rows []train.Row
		for _, r := range res.Rows {
			r.Seconds, r.Elapsed = 0, 0
			rows = append(rows, r)
		}
		closeRows(t, "replica rows", rows, one.rows, 1e-12)
		for ri, m := range models {
			for i, p := range values(m.Params()) {
				if math.Abs(p-one.params[i]) > 1e-12 {
					t.Fatalf("%d replicas: replica %d: parameter %d is %.17g, one process %.17g", k, ri, i, p, one.params[i])
				}
			}
		}
	}
}

// TestRunReplicasFailure: a replica whose solve fails stops every replica
// at that step, and RunReplicas returns that replica's error (not the
// others' "another rank failed"); misuse is an error.
func TestRunReplicasFailure(t *testing.T) {
	_, err := train.RunReplicas[float64](context.Background(), train.Config{Name: "ode", Epochs: 3, Quiet: true}, 2, replicaOf(t, 2, 1, 4))
	if err == nil || strings.Contains(err.Error(), "another rank") || !strings.Contains(err.Error(), "rank 1") || !strings.Contains(err.Error(), "epoch 2, batch 1 of 3") {
		t.Errorf("failing replica: %v, want replica 1's error at epoch 2, batch 1", err)
	}
	if _, err := train.RunReplicas[float64](context.Background(), train.Config{Name: "ode", Epochs: 1}, 0, replicaOf(t, 1, -1, 0)); err == nil {
		t.Error("0 replicas: no error")
	}
	bad := func(i int) (train.Replica[float64], error) {
		r, err := replicaOf(t, 2, -1, 0)(i)
		if i == 1 {
			r.Train, _ = data.NewLoader(data.FakeImages(96, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 16})
		}
		return r, err
	}
	if _, err := train.RunReplicas[float64](context.Background(), train.Config{Name: "ode", Epochs: 1, Quiet: true}, 2, bad); err == nil || !strings.Contains(err.Error(), "shard") {
		t.Errorf("an unsharded replica: %v, want an error naming the shard", err)
	}
}
