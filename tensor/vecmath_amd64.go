//go:build !purego

package tensor

func vecPaths() []vecPath { return []vecPath{goPath} }
