package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/layers"
)

// validProgress is an epoch's progress that fits tinyArgs (3 batches of 8
// images an epoch): 2 batches done.
const validProgress = `{"batches":2,"loss_sum":36.8,"correct":3,"seen":16,"fwd_nfe":40,"bwd_nfe":44,"seconds":0.1}`

// TestCheckpointMetadataRanges resumes from checkpoints whose metadata has
// one field out of range each: every one must be refused before anything
// is written, with an error naming the file and the field.
func TestCheckpointMetadataRanges(t *testing.T) {
	dir, ref := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	base := []string{"train", "--model", "node"}
	if code, _, stderr := runCmd(append(append(base, "--epochs", "1"), tinyArgs(dir, ref)...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	orig, err := layers.ReadSafetensorsFile(filepath.Join(ref, "node.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	row := func(split string, epoch, acc, fwd string) string {
		return `{"model":"node","split":"` + split + `","epoch":` + epoch + `,"loss":2.3,"accuracy":` + acc +
			`,"forward_nfe":` + fwd + `,"backward_nfe":24,"seconds":0.1,"elapsed":0.1}`
	}
	rows := func(rs ...string) string { return "[" + strings.Join(rs, ",") + "]" }
	const del = "\x00delete"
	for _, c := range []struct {
		name   string
		set    map[string]string // metadata changed (del: removed)
		epochs string            // --epochs of the resumed run
		code   int
		field  string // the field the error must name ("": none, the run must succeed)
	}{
		{"valid, interrupted in epoch 2", map[string]string{"batch": "2", "progress": validProgress}, "2", 0, ""},
		{"epoch -1", map[string]string{"epoch": "-1"}, "2", 1, `"epoch"`},
		{"epoch not a number", map[string]string{"epoch": "one"}, "2", 1, `"epoch"`},
		{"epoch missing", map[string]string{"epoch": del}, "2", 1, `"epoch"`},
		{"epoch past --epochs", map[string]string{"epoch": "3"}, "2", 2, `"epoch"`},
		{"epoch without its rows", map[string]string{"epoch": "2"}, "2", 1, `"rows"`},
		{"batch -40", map[string]string{"batch": "-40", "progress": strings.Replace(validProgress, `"batches":2`, `"batches":-40`, 1)}, "2", 1, `"batch"`},
		{"batch past the epoch", map[string]string{"batch": "4"}, "2", 1, `"batch"`},
		{"batch disagrees with progress", map[string]string{"batch": "1", "progress": validProgress}, "2", 1, `"batches"`},
		{"negative batches done", map[string]string{"progress": `{"batches":-40,"loss_sum":0,"correct":0,"seen":0,"fwd_nfe":0,"bwd_nfe":0,"seconds":0}`}, "2", 1, `"batches"`},
		{"negative seen", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"seen":16`, `"seen":-8`, 1)}, "2", 1, `"seen"`},
		{"more seen than batches hold", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"seen":16`, `"seen":17`, 1)}, "2", 1, `"seen"`},
		{"more correct than seen", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"correct":3`, `"correct":17`, 1)}, "2", 1, `"correct"`},
		{"negative NFE", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"fwd_nfe":40`, `"fwd_nfe":-40`, 1)}, "2", 1, `"fwd_nfe"`},
		{"negative loss sum", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"loss_sum":36.8`, `"loss_sum":-1`, 1)}, "2", 1, `"loss_sum"`},
		{"loss sum past float64", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"loss_sum":36.8`, `"loss_sum":1e999`, 1)}, "2", 1, `"progress"`},
		{"negative seconds", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"seconds":0.1`, `"seconds":-1`, 1)}, "2", 1, `"seconds"`},
		{"fractional count", map[string]string{"batch": "2", "progress": strings.Replace(validProgress, `"seen":16`, `"seen":15.5`, 1)}, "2", 1, `"progress"`},
		{"progress field missing", map[string]string{"progress": `{"batches":0,"correct":0,"seen":0,"fwd_nfe":0,"bwd_nfe":0,"seconds":0}`}, "2", 1, `"loss_sum"`},
		{"progress field unknown", map[string]string{"progress": `{"batches":0,"loss_sum":0,"correct":0,"seen":0,"fwd_nfe":0,"bwd_nfe":0,"seconds":0,"extra":1}`}, "2", 1, `"extra"`},
		{"progress not JSON", map[string]string{"progress": `nope`}, "2", 1, `"progress"`},
		{"progress missing", map[string]string{"progress": del}, "2", 1, `"progress"`},
		{"row accuracy above 1", map[string]string{"rows": rows(row("train", "1", "1.5", "20"), row("test", "1", "0.1", "20"))}, "2", 1, `"accuracy"`},
		{"row negative NFE", map[string]string{"rows": rows(row("train", "1", "0.5", "-40"), row("test", "1", "0.1", "20"))}, "2", 1, `"forward_nfe"`},
		{"row of another epoch", map[string]string{"rows": rows(row("train", "0", "0.5", "20"), row("test", "1", "0.1", "20"))}, "2", 1, `"epoch"`},
		{"rows out of order", map[string]string{"rows": rows(row("test", "1", "0.5", "20"), row("train", "1", "0.1", "20"))}, "2", 1, `"split"`},
		{"rows missing", map[string]string{"rows": "[]"}, "2", 1, `"rows"`},
		{"parameters negative", map[string]string{"parameters": "-5"}, "2", 1, `"parameters"`},
		{"parameters wrong", map[string]string{"parameters": "12"}, "2", 1, `"parameters"`},
		{"Adam learning rate", map[string]string{"optim.adam.lr": "1e9"}, "2", 1, `"optim.adam.lr"`},
		{"Adam beta1", map[string]string{"optim.adam.beta1": "0.5"}, "2", 1, `"optim.adam.beta1"`},
		{"Adam step count negative", map[string]string{"optim.adam.step.head.weight": "-1"}, "2", 1, `"optim.adam.step.head.weight"`},
		{"Adam step count past the iterations", map[string]string{"optim.adam.step.head.weight": "4"}, "2", 1, `"optim.adam.step.head.weight"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			path := filepath.Join(out, "node.safetensors")
			st := &layers.Safetensors{Metadata: map[string]string{}, Tensors: orig.Tensors}
			for k, v := range orig.Metadata {
				st.Metadata[k] = v
			}
			for k, v := range c.set {
				if v == del {
					delete(st.Metadata, k)
				} else {
					st.Metadata[k] = v
				}
			}
			if err := st.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCmd(append(append(base, "--resume", "--epochs", c.epochs), tinyArgs(dir, out)...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s%s", code, c.code, stdout, stderr)
			}
			if c.field == "" {
				return
			}
			if !strings.Contains(stderr, path) || !strings.Contains(stderr, c.field) {
				t.Errorf("error %q does not name the file and %s", stderr, c.field)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("error is not one line: %q", stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "node.csv")); err == nil {
				t.Error("a CSV was written from the refused checkpoint")
			}
		})
	}
}

// TestCheckpointValuesChecked resumes from checkpoints holding a value no
// run can produce — a NaN or infinite weight, a negative or NaN Adam second
// moment — which must be refused at load with an error naming the file and
// the tensor, before anything is written.
func TestCheckpointValuesChecked(t *testing.T) {
	dir, ref := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	base := []string{"train", "--model", "node", "--epochs", "2"}
	if code, _, stderr := runCmd(append(append(base[:3:3], "--epochs", "1"), tinyArgs(dir, ref)...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	orig, err := layers.ReadSafetensorsFile(filepath.Join(ref, "node.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, tensor string
		value        float32
	}{
		{"NaN weight", "head.weight", float32(math.NaN())},
		{"infinite weight", "head.weight", float32(math.Inf(-1))},
		{"negative second moment", "optim.adam.exp_avg_sq.head.weight", -1e-3},
		{"NaN second moment", "optim.adam.exp_avg_sq.head.weight", float32(math.NaN())},
		{"infinite first moment", "optim.adam.exp_avg.head.weight", float32(math.Inf(1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			path := filepath.Join(out, "node.safetensors")
			st := &layers.Safetensors{Metadata: orig.Metadata}
			found := false
			for _, r := range orig.Tensors {
				if r.Name == c.tensor {
					r.Data = slices.Clone(r.Data)
					binary.LittleEndian.PutUint32(r.Data[4:], math.Float32bits(c.value))
					found = true
				}
				st.Tensors = append(st.Tensors, r)
			}
			if !found {
				t.Fatalf("no tensor %q in the checkpoint", c.tensor)
			}
			if err := st.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCmd(append(append(base, "--resume"), tinyArgs(dir, out)...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, path) || !strings.Contains(stderr, c.tensor) || !strings.Contains(stderr, "element 1") {
				t.Errorf("error %q does not name the file, %s and the element", stderr, c.tensor)
			}
			if _, err := os.Stat(filepath.Join(out, "node.csv")); err == nil {
				t.Error("a CSV was written from the refused checkpoint")
			}
		})
	}
}

// TestStaleTemporariesRemoved leaves the temporary files of a save killed
// midway beside the checkpoint and the CSV: the next run removes them,
// says so, and leaves other files alone.
func TestStaleTemporariesRemoved(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	stale := []string{".node.safetensors.tmp-123456", ".node.csv.tmp-99"}
	keep := []string{".anode.safetensors.tmp-1", "node.safetensors.tmp-1", "notes.txt"}
	for _, n := range append(slices.Clone(stale), keep...) {
		if err := os.WriteFile(filepath.Join(out, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCmd(append([]string{"train", "--model", "node", "--epochs", "1"}, tinyArgs(dir, out)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(out, n)); err == nil {
			t.Errorf("%s is still there", n)
		}
		if !strings.Contains(stdout, n) {
			t.Errorf("the output does not say %s was removed: %q", n, stdout)
		}
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(out, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
}
