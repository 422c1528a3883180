package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// library is the lock library a variant runs.
type library int

const (
	leaseLib library = iota
	redislockLib
	redsyncLib
	rueidislockLib
)

// variantSpec is one row of a variant table: a library, the client it runs on and, for lease,
// whether metrics are on and how its commands are sent.
type variantSpec struct {
	lib     library
	mode    clientMode
	metrics bool
	way     leaseWay
}

// lockVariants are the variants of the lock benchmark, in the order the report lists them. The
// shapes beyond the first two run the main ones only (see mainVariant).
var lockVariants = []variantSpec{
	{lib: leaseLib, mode: plainClient, metrics: true, way: leaseDefault},
	{lib: leaseLib, mode: plainClient, way: leaseDefault},
	{lib: redislockLib, mode: plainClient},
	{lib: redsyncLib, mode: plainClient},
	// On the AutoPipeline face lease sends single commands: go-redis does the batching.
	{lib: leaseLib, mode: autoPipeline, metrics: true, way: leaseSingle},
	{lib: leaseLib, mode: autoPipeline, way: leaseSingle},
	{lib: redislockLib, mode: autoPipeline},
	{lib: redsyncLib, mode: autoPipeline},
	{lib: leaseLib, mode: plainClient, metrics: true, way: leaseSingle},
	{lib: rueidislockLib},
}

// mainVariant reports whether the variant named name runs in every shape: every library as its
// users run it, lease with metrics on, and lease's single-command baseline; not the metrics-off
// and go-redis AutoPipeline rows, which the first two shapes show.
func mainVariant(name string) bool {
	return !strings.Contains(name, autoSuffix) && name != leaseOff
}

// networkFreeVariants are the go-redis based variants (plain client) with
// redishook.AnswerLocally installed, one connection each. rueidislock has no hook point and is
// left out.
var networkFreeVariants = []variantSpec{
	{lib: leaseLib, mode: noNetwork, metrics: true, way: leaseDefault},
	{lib: leaseLib, mode: noNetwork, way: leaseDefault},
	{lib: redislockLib, mode: noNetwork},
	{lib: redsyncLib, mode: noNetwork},
}

func (s variantSpec) build(addr string, conns int) (variant, error) {
	switch s.lib {
	case redislockLib:
		return redislockVariant(addr, conns, s.mode)
	case redsyncLib:
		return redsyncVariant(addr, conns, s.mode)
	case rueidislockLib:
		return rueidislockVariant(addr)
	}
	return leaseVariant(addr, conns, s.metrics, s.way, s.mode)
}

// buildEach builds every variant of specs; when any fails it closes the others and returns
// every failure.
func buildEach(specs []variantSpec, addr string, conns int) ([]variant, error) {
	var built []variant
	var errs []error
	for _, s := range specs {
		v, err := s.build(addr, conns)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		built = append(built, v)
	}
	if err := errors.Join(errs...); err != nil {
		closeVariants(built)
		return nil, err
	}
	return built, nil
}

func closeVariants(vs []variant) {
	for _, v := range vs {
		v.close()
	}
}

// buildVariants builds the lock benchmark's variants, conns connections each, keeping only those
// -only names when it is set.
func buildVariants(addr string, conns int, only string) ([]variant, error) {
	all, err := buildEach(lockVariants, addr, conns)
	if err != nil {
		return nil, err
	}
	picked := pickOnly(all, only)
	if len(picked) == 0 {
		return nil, fmt.Errorf("-only %q names no variant", only)
	}
	return picked, nil
}

// clientOnlyVariants builds the network-free variants.
func clientOnlyVariants(addr string) ([]variant, error) {
	return buildEach(networkFreeVariants, addr, 1)
}

// pickOnly keeps the variants the comma-separated list only names, or all of them when it is
// empty, and closes the others.
func pickOnly(vs []variant, only string) []variant {
	if only == "" {
		return vs
	}
	names := strings.Split(only, ",")
	return slices.DeleteFunc(vs, func(v variant) bool {
		if slices.Contains(names, v.name) {
			return false
		}
		v.close()
		return true
	})
}
