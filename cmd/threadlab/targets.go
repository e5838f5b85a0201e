package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/env/targets"
)

func init() {
	register("targets", "build the built-in Spring Boot targets (cached by source hash)", runTargets)
}

func runTargets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("targets", flag.ContinueOnError)
	dir := fs.String("dir", "env/targets", "the Maven project of the targets")
	aot := fs.Bool("aot", false, "also train each target's JDK AOT cache (JEP 483/514), cached by jar hash")
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("targets takes no arguments (got %q)", fs.Args())
	}
	home, major, err := targets.FindJDK()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "JDK %d: %s\n", major, home)
	jars, err := targets.Build(ctx, *dir, stderr)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(jars)) {
		fmt.Fprintf(stdout, "%-15s %s\n", name, jars[name])
	}
	if !*aot {
		return nil
	}
	caches, err := targets.BuildAOT(ctx, home, jars, nil, stderr)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(caches)) {
		a := caches[name]
		fmt.Fprintf(stdout, "%-15s AOT cache %s (%d MB); start: java %s -jar %s\n", name, a.Cache, a.Bytes>>20, strings.Join(a.StartArgs(), " "), a.Jar)
	}
	return nil
}
