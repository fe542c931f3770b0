// Package sde solves stochastic differential equations.
package sde
