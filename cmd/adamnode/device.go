package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/cuda"
	"github.com/adamnode/adamnode/tensor"
)

// parseDevice returns the backend --device names: nil for "cpu" (the
// default backend), the CUDA backend of device N for "cuda" or "cuda:N".
func parseDevice(s string) (tensor.Backend, error) {
	switch {
	case s == "cpu":
		return nil, nil
	case s == "cuda" || strings.HasPrefix(s, "cuda:"):
		n := 0
		if rest, ok := strings.CutPrefix(s, "cuda:"); ok {
			var err error
			if n, err = strconv.Atoi(rest); err != nil || n < 0 {
				return nil, fmt.Errorf("want cuda:N with N a device number")
			}
		}
		return cuda.Backend(n)
	}
	return nil, fmt.Errorf("want cpu, cuda or cuda:N")
}
