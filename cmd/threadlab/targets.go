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
	register("targets", "build the built-in Spring Boot targets (cached by source hash and Spring Boot version)", runTargets)
}

func runTargets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("targets", flag.ContinueOnError)
	dir := fs.String("dir", "env/targets", "the Maven project of the targets")
	boot := fs.String("boot", targets.DefaultBoot, "the Spring Boot lines to build, comma-separated (3.5, 4.0, 4.1 or their versions), or all")
	aot := fs.Bool("aot", false, "also train each target's JDK AOT cache (JEP 483/514), cached by jar hash")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab targets [--dir env/targets] [--boot 4.0,3.5|all] [--aot]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("targets takes no arguments (got %q)", fs.Args())
	}
	versions, err := bootVersions(*boot)
	if err != nil {
		return err
	}
	home, major, err := targets.FindJDK()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "JDK %d: %s\n", major, home)
	for _, version := range versions {
		jars, err := targets.BuildBoot(ctx, *dir, version, stderr)
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(jars)) {
			fmt.Fprintf(stdout, "%-15s %-6s %s\n", name, version, jars[name])
		}
		if *aot {
			if err := trainAOT(ctx, home, jars, stdout, stderr); err != nil {
				return err
			}
		}
	}
	return nil
}

// bootVersions resolves -boot's list to the versions to build, each once.
func bootVersions(list string) ([]string, error) {
	if list == "all" {
		var out []string
		for _, b := range targets.BootLines() {
			out = append(out, b.Version)
		}
		return out, nil
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		b, err := targets.ResolveBoot(strings.TrimSpace(s))
		if err != nil {
			return nil, usagef("--boot: %v, or all", err)
		}
		if !slices.Contains(out, b.Version) {
			out = append(out, b.Version)
		}
	}
	return out, nil
}

// trainAOT trains the AOT cache of each jar and says how to start from it.
func trainAOT(ctx context.Context, home string, jars map[string]string, stdout, stderr io.Writer) error {
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
