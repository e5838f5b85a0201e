// Package yamlpos is the one shape of a problem found in a YAML file that
// threadlab reads (an experiment manifest, a host inventory): where it is,
// as file:line:col and a dotted field path, and what is wrong with how to
// fix it. A loader collects every Problem it finds and returns them all at
// once as Problems, so one run of lint or run shows everything to fix.
//
// Data flow: experiments.Load and hosts.Load build Problems (their
// Problem/Problems are this type); cmd/threadlab prints them with a count.
package yamlpos

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one thing wrong with a file, with where it is and how to fix it.
type Problem struct {
	File  string
	Line  int // 1-based; 0 when the problem is with the whole file
	Col   int
	Field string // dotted path, e.g. variants.platform.target or load[1].ssh
	Msg   string // what is wrong and how to fix it
	// Host marks a problem with this machine rather than the file (too
	// few open files for a manifest's load): the file may be fine on a
	// bigger host, so lint shows it as a warning while run refuses to start.
	Host bool
}

// String is "file:line:col: field: message", leaving out what is unknown.
func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
	if p.Field == "" {
		return loc + ": " + p.Msg
	}
	return loc + ": " + p.Field + ": " + p.Msg
}

// Problems is every problem found in one file; loaders return it as their error.
type Problems []Problem

// MaxShown is how many problems Error lists before it says how many more
// there are, as compilers stop after their first errors: 50 lines of
// "a: 1" gave 1,275 problems, every one printed.
const MaxShown = 20

func (ps Problems) Error() string {
	shown, more := ps.Shown()
	lines := make([]string, 0, len(shown)+1)
	for _, p := range shown {
		lines = append(lines, p.String())
	}
	if more != "" {
		lines = append(lines, more)
	}
	return strings.Join(lines, "\n")
}

// Shown is the first MaxShown problems and, when there are more, the line
// that counts the rest ("" otherwise): for callers that print each problem
// their own way (lint adds the profile) and keep the cap.
func (ps Problems) Shown() (Problems, string) {
	if len(ps) <= MaxShown {
		return ps, ""
	}
	return ps[:MaxShown], fmt.Sprintf("... and %d more problem(s): fix these first and run again", len(ps)-MaxShown)
}

// HostOnly reports whether err is Problems with this machine only (see
// Problem.Host): the file itself is valid.
func HostOnly(err error) bool {
	var ps Problems
	if !errors.As(err, &ps) || len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if !p.Host {
			return false
		}
	}
	return true
}
