package train

import (
	"errors"
	"regexp"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/google/go-cmp/cmp"
)

// TestRunSettings checks the settings Run has the ranks agree on: the
// caller's first, then the Config's (the clipping written exactly, the
// directory as whether there is one), the data's, and the optimizer's kind
// and hyperparameters without its step counts, which the ranks take from
// rank 0's checkpoint when they resume.
func TestRunSettings(t *testing.T) {
	tr, err := data.NewLoader(data.FakeImages(10, 1, 2, 2, 2, 1), data.LoaderOptions{BatchSize: 4, Shuffle: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	te, err := data.NewLoader(data.FakeImages(6, 1, 2, 2, 2, 2), data.LoaderOptions{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := autograd.NewParam("w", tensor.Full[float64](1, 2))
	opt := optim.NewAdam([]*autograd.Param[float64]{p}, optim.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	p.Grad = tensor.Full[float64](1, 2)
	opt.Step() // a step count that is not a setting
	const order = "training order of epoch 0 (the loader's seed)"
	for _, tc := range []struct {
		name string
		cfg  Config
		want []Setting // the order's digest aside
	}{
		{"clip 0.25, a directory, skipping", Config{Name: "ode", Epochs: 3, Clip: 0.25, Dir: "runs", SkipNonFinite: true, Settings: []Setting{{"--model", "node"}}}, []Setting{
			{"--model", "node"},
			{"Config.Name", "ode"},
			{"Config.Epochs", "3"},
			{"Config.Clip", "0.25"},
			{"Config.Resume", "false"},
			{"Config.Dir given", "true"},
			{"Config.SkipNonFinite", "true"},
		}},
		{"clip 1e-7, no directory", Config{Name: "x", Epochs: 1, Clip: 1.2345e-7}, []Setting{
			{"Config.Name", "x"},
			{"Config.Epochs", "1"},
			{"Config.Clip", "1.2345e-07"},
			{"Config.Resume", "false"},
			{"Config.Dir given", "false"},
			{"Config.SkipNonFinite", "false"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := append(tc.want,
				Setting{"training images", "10"},
				Setting{"training batch per rank", "4"},
				Setting{order, ""},
				Setting{"test images", "6"},
				Setting{"test batch", "3"},
				Setting{"optimizer", "adam"},
				Setting{"optimizer adam.beta1", "0.9"},
				Setting{"optimizer adam.beta2", "0.999"},
				Setting{"optimizer adam.eps", "1e-08"},
				Setting{"optimizer adam.lr", "0.01"},
				Setting{"optimizer adam.weight_decay", "0"},
			)
			got := runSettings[float64, *data.Batch](tc.cfg, classifier[float64]{tr: tr, te: te}, opt)
			for i, s := range got {
				if s.Name == order {
					if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(s.Value) {
						t.Errorf("%s is %q, want 8 bytes of a digest in hex", order, s.Value)
					}
					got[i].Value = ""
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("runSettings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunSettingsEmptyLoader checks that a training loader of no images
// has its settings too (a rank given no data must reach Agree to say it
// cannot begin).
func TestRunSettingsEmptyLoader(t *testing.T) {
	tr, err := data.NewLoader(data.FakeImages(0, 1, 2, 2, 2, 1), data.LoaderOptions{BatchSize: 4, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	got := runSettings[float64, *data.Batch](Config{Name: "x"}, classifier[float64]{tr: tr}, nil)
	want := []Setting{
		{"Config.Name", "x"},
		{"Config.Epochs", "0"},
		{"Config.Clip", "0"},
		{"Config.Resume", "false"},
		{"Config.Dir given", "false"},
		{"Config.SkipNonFinite", "false"},
		{"training images", "0"},
		{"training batch per rank", "4"},
		{"training order of epoch 0 (the loader's seed)", "e3b0c44298fc1c14"}, // SHA-256 of nothing
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runSettings (-want +got):\n%s", diff)
	}
}

// TestDecodeSettings checks that the settings' encoding round-trips, and
// that bytes cut off anywhere inside a name or a value, or a length that
// does not end, are refused rather than read as shorter settings. The first
// failure ends the test: a decoder that reads a length that does not end as
// 0 bytes would loop forever on the last cases.
func TestDecodeSettings(t *testing.T) {
	settings := []Setting{{"--lr", "0.001"}, {"", ""}, {"Config.Name", "ode"}}
	b := encodeSettings(settings)
	got, err := decodeSettings(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(settings, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	one := encodeSettings([]Setting{{"--lr", "0.001"}})
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"a name without its value", one[:5]},
		{"a value cut short", one[:len(one)-1]},
		{"a name cut short", one[:3]},
		{"a value's length without its value", one[:6]},
		{"a length that does not end", []byte{0x80}},
		{"a value's length that does not end", append(one[:5:5], 0x80)},
		{"a length past uint64", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		got, err := decodeSettings(tc.b)
		if want := "malformed settings from another rank"; err == nil || err.Error() != want {
			t.Fatalf("%s (% x): %v, %v; want the error %q", tc.name, tc.b, got, err, want)
		}
	}
}

// noCollectives is a Distributed of one rank whose collective calls fail.
type noCollectives struct{ calls int }

var errCalled = errors.New("a collective call")

func (d *noCollectives) Rank() int                 { return 0 }
func (d *noCollectives) Size() int                 { return 1 }
func (d *noCollectives) AllReduce([]float64) error { d.calls++; return errCalled }
func (d *noCollectives) Broadcast([]float64, int) error {
	d.calls++
	return errCalled
}
func (d *noCollectives) Barrier() error { d.calls++; return errCalled }

// TestAgreeAlone checks that Agree does nothing with no Distributed or
// with one rank: no collective call, no error.
func TestAgreeAlone(t *testing.T) {
	settings := []Setting{{"--lr", "0.001"}}
	if err := Agree(nil, settings); err != nil {
		t.Errorf("Agree(nil): %v", err)
	}
	d := &noCollectives{}
	if err := Agree(d, settings); err != nil || d.calls != 0 {
		t.Errorf("Agree of one rank: %v after %d collective calls, want none", err, d.calls)
	}
	if failed, err := agree(d, settings, true); !failed || err != nil || d.calls != 0 {
		t.Errorf("agree of one rank that failed: %t, %v after %d collective calls, want true, nil and none", failed, err, d.calls)
	}
}
