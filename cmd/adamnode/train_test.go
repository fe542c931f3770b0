package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/train"
)

// writeIDX writes a small synthetic MNIST-shaped dataset into dir under the
// standard file names: n training and m test images of 28×28, class k
// showing a bright 6×6 square at a place of its own, plus noise, so that a
// model can learn something within a few batches.
func writeIDX(t *testing.T, dir string, n, m int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, 0))
	write := func(prefix string, count int) {
		imgs := binary.BigEndian.AppendUint32(nil, 0x803)
		imgs = binary.BigEndian.AppendUint32(imgs, uint32(count))
		imgs = binary.BigEndian.AppendUint32(imgs, 28)
		imgs = binary.BigEndian.AppendUint32(imgs, 28)
		labels := binary.BigEndian.AppendUint32(nil, 0x801)
		labels = binary.BigEndian.AppendUint32(labels, uint32(count))
		for range count {
			k := rng.IntN(10)
			labels = append(labels, byte(k))
			px := make([]byte, 28*28)
			for i := range px {
				px[i] = byte(rng.IntN(60))
			}
			r0, c0 := 2+(k/5)*13, 2+(k%5)*5
			for r := r0; r < r0+6; r++ {
				for c := c0; c < c0+6 && c < 28; c++ {
					px[r*28+c] = 200 + byte(rng.IntN(56))
				}
			}
			imgs = append(imgs, px...)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+"-images-idx3-ubyte"), imgs, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+"-labels-idx1-ubyte"), labels, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("train", n)
	write("t10k", m)
}

// tinyArgs are the flags of a quick run on the synthetic data in dir.
func tinyArgs(dir, out string, extra ...string) []string {
	return append([]string{"--dataset", "mnist", "--data", dir, "--out", out,
		"--subset", "24", "--test-subset", "16", "--batch", "8", "--test-batch", "16",
		"--nhid", "4", "--lr", "1e-3", "--quiet"}, extra...)
}

// runCmd runs the command line and returns the exit code, stdout and stderr.
func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// readCSV reads a CSV file written by the trainer.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// withoutTimes drops the seconds and elapsed columns.
func withoutTimes(recs [][]string) [][]string {
	var out [][]string
	for _, r := range recs {
		out = append(out, r[:7])
	}
	return out
}

// TestTrainTiny trains a tiny HBNODE for two epochs on synthetic IDX files
// and checks the CSV's format and the checkpoint's contents.
func TestTrainTiny(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	code, stdout, stderr := runCmd(append([]string{"train", "--model", "hbnode", "--epochs", "2"}, tinyArgs(dir, out)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote ") {
		t.Errorf("stdout does not report the files:\n%s", stdout)
	}
	recs := readCSV(t, filepath.Join(out, "hbnode.csv"))
	if !slices.Equal(recs[0], train.CSVHeader()) {
		t.Fatalf("header %v, want %v", recs[0], train.CSVHeader())
	}
	if len(recs) != 5 {
		t.Fatalf("%d CSV lines, want a header and 4 rows", len(recs))
	}
	wantSplits := []string{"train", "test", "train", "test"}
	prevElapsed := 0.0
	for i, r := range recs[1:] {
		if r[0] != "hbnode" || r[1] != wantSplits[i] || r[2] != strconv.Itoa(i/2+1) {
			t.Errorf("row %d: %v", i+1, r)
		}
		v := make([]float64, 6)
		for j := range v {
			var err error
			if v[j], err = strconv.ParseFloat(r[3+j], 64); err != nil {
				t.Fatalf("row %d column %s: %v", i+1, train.CSVHeader()[3+j], err)
			}
		}
		loss, acc, fwd, bwd, secs, elapsed := v[0], v[1], v[2], v[3], v[4], v[5]
		switch {
		case !(loss > 0 && loss < 10), !(acc >= 0 && acc <= 1):
			t.Errorf("row %d: loss %v accuracy %v", i+1, loss, acc)
		case fwd < 2:
			t.Errorf("row %d: forward NFE %v", i+1, fwd)
		case wantSplits[i] == "train" && bwd < 2, wantSplits[i] == "test" && bwd != 0:
			t.Errorf("row %d: backward NFE %v", i+1, bwd)
		case secs < 0, elapsed < prevElapsed+secs-0.002:
			t.Errorf("row %d: seconds %v, elapsed %v after %v", i+1, secs, elapsed, prevElapsed)
		}
		prevElapsed = elapsed
	}
	st, err := layers.ReadSafetensorsFile(filepath.Join(out, "hbnode.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"model": "hbnode", "epoch": "2", "batch": "0", "seed": "1", "dataset": "mnist", "batch_size": "8"} {
		if got := st.Metadata[k]; got != want {
			t.Errorf("checkpoint metadata %s = %q, want %q", k, got, want)
		}
	}
	for _, n := range []string{"f.conv2.weight", "init.conv1.weight", "ode.gamma", "head.weight"} {
		if _, ok := st.Tensor(n); !ok {
			t.Errorf("checkpoint has no %s", n)
		}
	}
	if !strings.Contains(st.Metadata["command"], "--model hbnode") {
		t.Errorf("checkpoint command %q", st.Metadata["command"])
	}
}

// checkpointTensors returns the raw bytes of every tensor of a checkpoint.
func checkpointTensors(t *testing.T, path string) map[string][]byte {
	t.Helper()
	st, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, r := range st.Tensors {
		m[r.Name] = r.Data
	}
	return m
}

// sameRun checks that two runs ended with the same parameters and
// optimizer state, bit for bit, and the same CSV but for the times.
func sameRun(t *testing.T, model, a, b string) {
	t.Helper()
	ta, tb := checkpointTensors(t, filepath.Join(a, model+".safetensors")), checkpointTensors(t, filepath.Join(b, model+".safetensors"))
	if len(ta) != len(tb) {
		t.Fatalf("%d tensors vs %d", len(ta), len(tb))
	}
	for n, d := range ta {
		if !bytes.Equal(d, tb[n]) {
			t.Errorf("tensor %s differs", n)
		}
	}
	ca, cb := withoutTimes(readCSV(t, filepath.Join(a, model+".csv"))), withoutTimes(readCSV(t, filepath.Join(b, model+".csv")))
	if !slices.EqualFunc(ca, cb, slices.Equal) {
		t.Errorf("CSVs differ:\n%v\n%v", ca, cb)
	}
}

// TestResume checks that training 2 epochs straight, 1 epoch then a
// resumed second, and 2 epochs interrupted after 2 batches of the first
// then resumed, all end with the same parameters bit for bit and the same
// CSV numbers.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 40, 20)
	straight, split, stopped := t.TempDir(), t.TempDir(), t.TempDir()
	base := []string{"train", "--model", "adamnode"}
	if code, _, stderr := runCmd(append(append(base, "--epochs", "2"), tinyArgs(dir, straight)...)...); code != 0 {
		t.Fatalf("straight run: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(append(append(base, "--epochs", "1"), tinyArgs(dir, split)...)...); code != 0 {
		t.Fatalf("first epoch: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(append(append(base, "--epochs", "2", "--resume"), tinyArgs(dir, split)...)...)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	sameRun(t, "adamnode", straight, split)

	// Interrupted after the second batch of the first epoch (a cancelled
	// context, as Ctrl-C makes), then resumed.
	s, kind, err := parseTrain(append([]string{"--model", "adamnode", "--epochs", "2"}, tinyArgs(dir, stopped)...), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.onBatch = func(epoch, batches int) {
		if epoch == 0 && batches == 2 {
			cancel()
		}
	}
	err = trainOne(ctx, s, kind, &bytes.Buffer{}, "test")
	var ie *train.InterruptedError
	if !errors.As(err, &ie) || ie.Batch != 2 || ie.Epoch != 0 {
		t.Fatalf("interrupted run returned %v, want an interruption after batch 2 of epoch 1", err)
	}
	if !strings.Contains(err.Error(), "--resume") {
		t.Errorf("the interruption does not say how to continue: %v", err)
	}
	st, err := layers.ReadSafetensorsFile(filepath.Join(stopped, "adamnode.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Metadata["epoch"] != "0" || st.Metadata["batch"] != "2" {
		t.Errorf("interrupted checkpoint at epoch %s batch %s, want 0 and 2", st.Metadata["epoch"], st.Metadata["batch"])
	}
	code, stdout, stderr = runCmd(append(append(base, "--epochs", "2", "--resume"), tinyArgs(dir, stopped)...)...)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	sameRun(t, "adamnode", straight, stopped)

	// A finished run resumed again has nothing to do.
	code, stdout, stderr = runCmd(append(append(base, "--epochs", "2", "--resume"), tinyArgs(dir, straight)...)...)
	if code != 0 || !strings.Contains(stdout, "nothing to do") {
		t.Errorf("resuming a finished run: exit %d, %q %q", code, stdout, stderr)
	}
	// Resuming with other settings is refused.
	code, _, stderr = runCmd(append(append(base, "--epochs", "3", "--resume", "--seed", "2"), tinyArgs(dir, straight)...)...)
	if code != 2 || !strings.Contains(stderr, "--seed") {
		t.Errorf("resume with another seed: exit %d, %q", code, stderr)
	}
}

// TestFailureKeepsFiles checks that a run failing half-way (a solver that
// may not take enough steps) leaves the last epoch's checkpoint and CSV as
// they were and names the model, epoch and batch.
func TestFailureKeepsFiles(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	base := []string{"train", "--model", "node"}
	if code, _, stderr := runCmd(append(append(base, "--epochs", "1"), tinyArgs(dir, out)...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ckpt, _ := os.ReadFile(filepath.Join(out, "node.safetensors"))
	csvb, _ := os.ReadFile(filepath.Join(out, "node.csv"))
	code, _, stderr := runCmd(append(append(base, "--epochs", "2", "--resume", "--max-steps", "1"), tinyArgs(dir, out)...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	for _, want := range []string{"node", "epoch 2", "batch 1", "too many steps"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("error %q does not mention %q", stderr, want)
		}
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("error is not one line: %q", stderr)
	}
	ckpt2, _ := os.ReadFile(filepath.Join(out, "node.safetensors"))
	csv2, _ := os.ReadFile(filepath.Join(out, "node.csv"))
	if !bytes.Equal(ckpt, ckpt2) || !bytes.Equal(csvb, csv2) {
		t.Error("the failed run changed the checkpoint or the CSV")
	}
}

// TestCompareTiny runs compare on the synthetic data with tiny models and
// checks the table, the combined CSV and the plots.
func TestCompareTiny(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	code, stdout, stderr := runCmd(append([]string{"compare", "--epochs", "2"}, tinyArgs(dir, out)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"| NODE |", "| ANODE |", "| SONODE |", "| HBNODE |", "| GHBNODE |", "| AdamNODE |", "efficacy", "peak RSS"} {
		if !strings.Contains(string(table), m) {
			t.Errorf("table.md has no %q:\n%s", m, table)
		}
	}
	if !strings.Contains(stdout, "parameters (initial-state net") {
		t.Errorf("stdout does not report parameter counts:\n%s", stdout)
	}
	if recs := readCSV(t, filepath.Join(out, "compare.csv")); len(recs) != 1+6*2*2 {
		t.Errorf("compare.csv has %d lines, want %d", len(recs), 1+6*2*2)
	}
	// 24 training images in batches of 8: three batches an epoch.
	checkBatches(t, filepath.Join(out, "batches.csv"), []string{"node", "anode", "sonode", "hbnode", "ghbnode", "adamnode"}, 2, 3)
	for _, name := range []string{"loss.png", "efficacy.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 100 {
			t.Errorf("%s: %v, %dx%d", name, err, cfg.Width, cfg.Height)
		}
	}
}

// TestTrainCIFAR10 trains a tiny AdamNODE for one epoch on CIFAR-10 files
// written in the real binary layout (records of one label byte then 3072
// channel-major pixels, in data_batch_1..5.bin and test_batch.bin).
func TestTrainCIFAR10(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	rng := rand.New(rand.NewPCG(7, 0))
	write := func(name string, records int) {
		var b []byte
		for range records {
			b = append(b, byte(rng.IntN(10)))
			for range 3072 {
				b = append(b, byte(rng.IntN(256)))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 5; i++ {
		write("data_batch_"+strconv.Itoa(i)+".bin", 4)
	}
	write("test_batch.bin", 8)
	code, _, stderr := runCmd("train", "--model", "adamnode", "--dataset", "cifar10", "--data", dir, "--out", out,
		"--subset", "16", "--test-subset", "8", "--batch", "8", "--nhid", "4", "--epochs", "1", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readCSV(t, filepath.Join(out, "adamnode.csv"))
	if len(recs) != 3 || recs[1][1] != "train" || recs[2][1] != "test" {
		t.Fatalf("adamnode.csv: %v", recs)
	}
}

// TestRecursiveTrainsAsCheckpoint: --grad recursive keeps few states but
// computes Checkpoint's gradients from the same states: one epoch of each
// ends with the same parameters and optimizer state, bit for bit.
func TestRecursiveTrainsAsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 24, 8)
	outs := map[string]string{}
	for _, mode := range []string{"checkpoint", "recursive"} {
		outs[mode] = t.TempDir()
		code, _, stderr := runCmd(append([]string{"train", "--model", "adamnode", "--epochs", "1", "--grad", mode}, tinyArgs(dir, outs[mode])...)...)
		if code != 0 {
			t.Fatalf("--grad %s: exit %d: %s", mode, code, stderr)
		}
	}
	ck := checkpointTensors(t, filepath.Join(outs["checkpoint"], "adamnode.safetensors"))
	rc := checkpointTensors(t, filepath.Join(outs["recursive"], "adamnode.safetensors"))
	if len(ck) != len(rc) || len(ck) == 0 {
		t.Fatalf("%d tensors vs %d", len(ck), len(rc))
	}
	for n, d := range ck {
		if !bytes.Equal(d, rc[n]) {
			t.Errorf("tensor %s differs", n)
		}
	}
}

// TestTrainReplicas: train --replicas 2 trains as one process does (the
// CSV's losses and accuracies within the solver's tolerance: each
// replica's adaptive solve takes its own steps), writes the files once,
// resumes; bad --replicas values are usage errors.
func TestTrainReplicas(t *testing.T) {
	dir, one, two := t.TempDir(), t.TempDir(), t.TempDir()
	writeIDX(t, dir, 48, 16)
	args := func(out string, extra ...string) []string {
		return append([]string{"train", "--model", "node", "--subset", "48", "--test-subset", "16", "--batch", "16", "--test-batch", "8",
			"--dataset", "mnist", "--data", dir, "--out", out, "--nhid", "4", "--lr", "1e-3", "--quiet"}, extra...)
	}
	if code, _, stderr := runCmd(args(one, "--epochs", "2")...); code != 0 {
		t.Fatalf("one process: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(args(two, "--epochs", "1", "--replicas", "2")...)
	if code != 0 {
		t.Fatalf("2 replicas: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "wrote "); n != 1 {
		t.Errorf("the files were reported %d times, want once:\n%s", n, stdout)
	}
	if code, _, stderr := runCmd(args(two, "--epochs", "2", "--replicas", "2", "--resume")...); code != 0 {
		t.Fatalf("2 replicas, resumed: exit %d: %s", code, stderr)
	}
	want, got := readCSV(t, filepath.Join(one, "node.csv")), readCSV(t, filepath.Join(two, "node.csv"))
	if len(got) != len(want) {
		t.Fatalf("%d CSV lines with 2 replicas, %d in one process", len(got), len(want))
	}
	for i := 1; i < len(want); i++ {
		for _, col := range []int{3, 4} {
			g, _ := strconv.ParseFloat(got[i][col], 64)
			w, _ := strconv.ParseFloat(want[i][col], 64)
			if math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
				t.Errorf("row %d column %d: %g with 2 replicas, %g in one process", i, col, g, w)
			}
		}
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{{[]string{"--replicas", "0"}, "--replicas must be"}, {[]string{"--replicas", "3"}, "multiple of the 3 replicas"}} {
		if code, _, stderr := runCmd(args(t.TempDir(), c.extra...)...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.extra, code, stderr, c.want)
		}
	}
}
