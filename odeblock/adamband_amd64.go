//go:build !purego

package odeblock

// adamBandAVX512 is adamWork.band's loop on float32 (after s and s′), with
// its operands in a.
//
//go:noescape
func adamBandAVX512(a *adamBandArgs)
