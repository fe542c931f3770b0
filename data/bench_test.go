package data

import (
	"bytes"
	"context"
	"testing"
)

// BenchmarkLoader measures batching throughput: batches of 32 float32
// 1x28x28 images cut from an in-memory set of 10000, shuffled.
func BenchmarkLoader(b *testing.B) {
	const batch = 32
	d := synthetic(10000, 1, 28, 28)
	mean, std := d.ChannelStats()
	for _, bc := range []struct {
		name string
		opts LoaderOptions
	}{
		{"sync", LoaderOptions{BatchSize: batch, Shuffle: true}},
		{"prefetch2", LoaderOptions{BatchSize: batch, Shuffle: true, Prefetch: 2}},
		{"normalised", LoaderOptions{BatchSize: batch, Shuffle: true, Mean: mean, Std: std}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := NewLoader(d, bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			var sink float32
			for epoch := 0; n < b.N; epoch++ {
				for bt, err := range l.Epoch(context.Background(), epoch) {
					if err != nil {
						b.Fatal(err)
					}
					sink += bt.X.Data()[0] // touch the batch, as a consumer would
					if n++; n == b.N {
						break
					}
				}
			}
			b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "images/s")
			_ = sink
		})
	}
}

// BenchmarkReadIDX measures decoding throughput of an idx3 file of 2000
// 28x28 images held in memory, plain and gzip-compressed.
func BenchmarkReadIDX(b *testing.B) {
	const n = 2000
	plain := idxImages(n, 28, 28, seqPix)
	for _, bc := range []struct {
		name string
		file []byte
	}{{"plain", plain}, {"gzip", gz(plain)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				if _, _, _, err := ReadIDXImages(bytes.NewReader(bc.file), "bench"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
