package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/google/go-cmp/cmp"
)

// syncBuffer is a strings.Builder safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeCommand: adamnode serve on a checkpoint with train's metadata
// answers a prediction, and returns cleanly when its context ends.
func TestServeCommand(t *testing.T) {
	cfg := models.Paper(models.HBNODE, models.MNIST)
	cfg.NHid = 3
	cfg.Solver.RTol, cfg.Solver.ATol = 1e-3, 1e-3
	m, err := models.New[float32](rand.New(rand.NewPCG(1, 0)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hbnode.safetensors")
	meta := map[string]string{"model": "hbnode", "dataset": "fashion-mnist", "nhid": "3", "nhid_scale": "1", "method": "dopri5", "tol": "0.001"}
	if err := layers.SaveParams(path, m.Params(), meta); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, []string{"--checkpoint", path, "--addr", "127.0.0.1:0", "--max-wait", "1ms"}, &out)
	}()
	addr := regexp.MustCompile(`on http://(\S+):`)
	var url string
	deadline := time.Now().Add(20 * time.Second)
	for url == "" {
		if mm := addr.FindStringSubmatch(out.String()); mm != nil {
			url = "http://" + mm[1]
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no address: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	img := make([]string, 28*28)
	for i := range img {
		img[i] = fmt.Sprint(float64(i%7) / 7)
	}
	resp, err := http.Post(url+"/v1/predict", "application/json", strings.NewReader(`{"model": "hbnode", "input": [`+strings.Join(img, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		Model  string    `json:"model"`
		Output []float64 `json:"output"`
		Class  *int      `json:"class"`
	}
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("predict: %d %s (%v)", resp.StatusCode, body, err)
	}
	if diff := cmp.Diff([]any{"hbnode", 10, true}, []any{got.Model, len(got.Output), got.Class != nil}); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after cancel: %v", err)
	}
	if !strings.Contains(out.String(), "shut down after") {
		t.Errorf("no shutdown line in %q", out.String())
	}
}

// TestServeUsage: bad command lines are usage errors saying what to fix.
func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--checkpoint is required"},
		{[]string{"--checkpoint", "x", "--max-batch", "0"}, "--max-batch must be at least 1"},
		{[]string{"--checkpoint", "x", "--replicas", "-1"}, "--replicas must be from 0 to 64"},
		{[]string{"--checkpoint", "x", "--rows", "some"}, "unknown --rows"},
		{[]string{"--checkpoint", "x", "--nhid", "-2"}, "--nhid must be ≥ 0"},
		{[]string{"--checkpoint", "x", "--timeout", "-1s"}, "--timeout and --shutdown-timeout must be positive"},
		{[]string{"--checkpoint", "x", "--max-wait", "soon"}, "invalid value"},
	} {
		err := runServe(context.Background(), tc.args, io.Discard)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	err := runServe(context.Background(), []string{"--checkpoint", filepath.Join(t.TempDir(), "missing.safetensors")}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "missing.safetensors") {
		t.Errorf("a missing checkpoint: %v, want an error naming it", err)
	}
}
