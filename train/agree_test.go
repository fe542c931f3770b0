package train_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/train"
	"github.com/google/go-cmp/cmp"
)

// waitRanks runs f(rank) for every rank of an in-process group of size
// and returns their errors; it fails t if they are still running after 30
// seconds (a rank waiting for a collective call the others never make).
func waitRanks(t *testing.T, size int, f func(rank int, comm *distributed.Local) error) []error {
	t.Helper()
	comms := distributed.NewLocal(size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for rank := range size {
		wg.Go(func() { errs[rank] = f(rank, comms[rank]) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d ranks still running after 30 s: one waits for the others", size)
	}
	return errs
}

// settingsErrors returns each rank's *SettingsError (nil for a rank
// without one), failing t on any other error.
func settingsErrors(t *testing.T, errs []error) []*train.SettingsError {
	t.Helper()
	out := make([]*train.SettingsError, len(errs))
	for rank, err := range errs {
		var se *train.SettingsError
		switch {
		case errors.As(err, &se):
			out[rank] = se
		case err != nil:
			t.Fatalf("rank %d: %v, want a *train.SettingsError or none", rank, err)
		}
	}
	return out
}

// TestLocalAgree checks Agree on in-process ranks: nil on every rank when
// all have the same settings in the same order, else the same
// *SettingsError on every rank, naming the first setting that differs and
// the values of rank 0 and of the first rank that differs.
func TestLocalAgree(t *testing.T) {
	base := []train.Setting{{"--lr", "0.001"}, {"--epochs", "5"}, {"--seed", "1"}}
	with := func(i int, v string) []train.Setting {
		s := append([]train.Setting(nil), base...)
		s[i].Value = v
		return s
	}
	for _, tc := range []struct {
		name     string
		settings [][]train.Setting // by rank
		want     *train.SettingsError
	}{
		{"alike", [][]train.Setting{base, base, base}, nil},
		{"none", [][]train.Setting{nil, nil}, nil},
		{"epochs on rank 1", [][]train.Setting{base, with(1, "3")},
			&train.SettingsError{Setting: "--epochs", Rank: 1, RootValue: "5", Value: "3", RootHas: true, Has: true}},
		{"two differ: the first of rank 0's order", [][]train.Setting{base, with(2, "2"), with(0, "0.01")},
			&train.SettingsError{Setting: "--seed", Rank: 1, RootValue: "1", Value: "2", RootHas: true, Has: true}},
		{"rank 3 of 4", [][]train.Setting{base, base, base, with(0, "0.1")},
			&train.SettingsError{Setting: "--lr", Rank: 3, RootValue: "0.001", Value: "0.1", RootHas: true, Has: true}},
		{"missing on rank 1", [][]train.Setting{base, base[:2]},
			&train.SettingsError{Setting: "--seed", Rank: 1, RootValue: "1", RootHas: true}},
		{"only on rank 1", [][]train.Setting{base[:2], base},
			&train.SettingsError{Setting: "--seed", Rank: 1, Value: "1", Has: true}},
		{"order", [][]train.Setting{base, {base[1], base[0], base[2]}},
			&train.SettingsError{Setting: "the settings' order", Rank: 1, RootValue: "--lr", Value: "--epochs", RootHas: true, Has: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := waitRanks(t, len(tc.settings), func(rank int, c *distributed.Local) error {
				return train.Agree(c, tc.settings[rank])
			})
			for rank, se := range settingsErrors(t, errs) {
				if diff := cmp.Diff(tc.want, se); diff != "" {
					t.Errorf("rank %d (-want +got):\n%s", rank, diff)
				}
			}
		})
	}
	want := `train: the ranks' settings differ: --epochs is "5" on rank 0 but "3" on rank 1 (every rank must run with the same settings and data)`
	if got := (&train.SettingsError{Setting: "--epochs", Rank: 1, RootValue: "5", Value: "3", RootHas: true, Has: true}).Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// rankChange is what one rank of TestDistributedSettingsMismatch is given
// differently from the others.
type rankChange struct {
	cfg    *train.Config
	adam   *optim.AdamConfig
	seed   *uint64 // the training loader's
	images *int    // in the training set
}

// TestDistributedSettingsMismatch: in-process ranks of Run given a
// different number of epochs, clipping, learning rate, optimizer
// hyperparameter, loader seed, data size, resume or caller's setting stop
// at once, every rank with the same *SettingsError naming it and rank 0's
// and the differing rank's values, instead of one rank waiting for the
// others forever or the ranks training a model that matches none of them.
func TestDistributedSettingsMismatch(t *testing.T) {
	dir := t.TempDir()
	both := func(v1, v2 string) *train.SettingsError {
		return &train.SettingsError{Rank: 1, RootValue: v1, Value: v2, RootHas: true, Has: true}
	}
	named := func(name string, e *train.SettingsError) *train.SettingsError { e.Setting = name; return e }
	for _, tc := range []struct {
		name   string
		size   int
		change func(rank int, c rankChange) // applied to every rank
		want   *train.SettingsError
	}{
		{"epochs", 2, func(rank int, c rankChange) {
			if rank == 1 {
				c.cfg.Epochs = 1
			}
		}, named("Config.Epochs", both("2", "1"))},
		{"clip", 2, func(rank int, c rankChange) {
			if rank == 1 {
				c.cfg.Clip = 0
			}
		}, named("Config.Clip", both("1", "0"))},
		{"clip a quarter", 2, func(rank int, c rankChange) {
			if rank == 1 {
				c.cfg.Clip = 0.25
			}
		}, named("Config.Clip", both("1", "0.25"))},
		{"a directory on one rank", 2, func(rank int, c rankChange) {
			if rank == 1 {
				c.cfg.Dir = dir
			}
		}, named("Config.Dir given", both("false", "true"))},
		{"learning rate", 2, func(rank int, c rankChange) {
			if rank == 1 {
				c.adam.LR = 1e-2
			}
		}, named("optimizer adam.lr", both("0.001", "0.01"))},
		{"beta2", 2, func(rank int, c rankChange) {
			if rank == 1 {
				c.adam.Beta2 = 0.99
			}
		}, named("optimizer adam.beta2", both("0.999", "0.99"))},
		{"loader seed", 2, func(rank int, c rankChange) {
			if rank == 1 {
				*c.seed = 4
			}
		}, nil}, // the order's digests, checked below by name only
		{"training images", 2, func(rank int, c rankChange) {
			if rank == 1 {
				*c.images = 64
			}
		}, named("training images", both("96", "64"))},
		{"resume", 2, func(rank int, c rankChange) {
			c.cfg.Dir = dir
			c.cfg.Resume = rank == 1
		}, named("Config.Resume", both("false", "true"))},
		{"caller's setting first", 2, func(rank int, c rankChange) {
			c.cfg.Settings = []train.Setting{{"--epochs", "2"}}
			if rank == 1 {
				c.cfg.Settings[0].Value, c.cfg.Epochs = "1", 1
			}
		}, named("--epochs", both("2", "1"))},
		{"third of three ranks", 3, func(rank int, c rankChange) {
			if rank == 2 {
				c.cfg.Epochs = 5
			}
		}, &train.SettingsError{Setting: "Config.Epochs", Rank: 2, RootValue: "2", Value: "5", RootHas: true, Has: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := waitRanks(t, tc.size, func(rank int, comm *distributed.Local) error {
				cfg := train.Config{Name: "ode", Epochs: 2, Quiet: true, Clip: 1, Distributed: comm}
				adam, seed, images := optim.AdamDefaults(), uint64(3), 96
				tc.change(rank, rankChange{&cfg, &adam, &seed, &images})
				tr, err := data.NewLoader(data.FakeImages(images, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 32 / tc.size, Shuffle: true, Seed: seed, Shard: rank, Shards: tc.size})
				if err != nil {
					return err
				}
				te, err := data.NewLoader(data.FakeImages(20, 2, 4, 4, 3, 2), data.LoaderOptions{BatchSize: 4})
				if err != nil {
					return err
				}
				m := newODENet(5)
				_, err = train.Run[float64](context.Background(), cfg, m, optim.NewAdam(m.Params(), adam), tr, te)
				return err
			})
			for rank, se := range settingsErrors(t, errs) {
				if se == nil {
					t.Errorf("rank %d: no error, want the ranks' settings to differ", rank)
					continue
				}
				want := tc.want
				if want == nil { // the values are digests
					want = &train.SettingsError{Setting: "training order of epoch 0 (the loader's seed)", Rank: 1, RootValue: se.RootValue, Value: se.Value, RootHas: true, Has: true}
					if se.RootValue == se.Value {
						t.Errorf("rank %d: the digests are equal: %v", rank, se)
					}
				}
				if diff := cmp.Diff(want, se); diff != "" {
					t.Errorf("rank %d (-want +got):\n%s", rank, diff)
				}
			}
		})
	}
}
