// Package digits prints a measured number as text: the one number
// formatter of threadlab's pages, comparisons and messages.
//
// Each place prints with a named Style, because each has its reason for
// its precision: a run page prints about 3 significant figures (all a
// handful of trials on a shared VM can support), a comparison 4 (to show a
// 0.1% change between two runs), a warning sentence 3 without trailing
// zeros below 10, and a precondition's threshold to the tenth. So one
// median of 12.34 reads 12.3 on its run page and 12.34 on its comparison
// page, on purpose; a median of 1234.6 reads 1235 on both.
//
// Data flow: a caller passes a float64 and a Style and gets the text;
// nothing is kept.
package digits

import (
	"fmt"
	"math"
	"strconv"
)

// Style says how a number is printed; the zero Style is not one (use the
// named ones, or set Sig or Places).
type Style struct {
	// Sig is how many significant figures a number gets: from 10^(Sig-1)
	// up it prints whole, below 10^(Sig-1) with the decimals that make
	// Sig figures.
	Sig int
	// FixedFrom is the magnitude from which those decimals are fixed and
	// keep their trailing zeros (1.50, 12.0); below it, and always when it
	// is 0, the number prints with Sig significant figures and no
	// trailing zeros (%g: 0.05, 1.5, 1e-05).
	FixedFrom float64
	// Places, when above 0, rounds to that many decimals and prints no
	// trailing zeros (12.25 -> 12.3, 12 -> 12); Sig and FixedFrom are then
	// not used.
	Places int
	// NaN is the text of NaN and the infinities; empty prints them as Go
	// does (NaN, +Inf, -Inf).
	NaN string
}

var (
	// Page is the report's pages (run page, index, seed tables, chart
	// words): about 3 significant figures, trailing zeros kept from 1 up
	// (1.50, 12.3, 123), and "–" for a value that does not exist (one
	// trial has no spread).
	Page = Style{Sig: 3, FixedFrom: 1, NaN: "–"}
	// Diff is threadlab diff and a run's comparison page: 4 significant
	// figures without trailing zeros (12.34, 1.5), whole from 1000.
	Diff = Style{Sig: 4}
	// Flag is a sentence of a flag or a claim's note: whole from 100, one
	// decimal from 10 (12.0), 3 significant figures below (1.5, 0.0123).
	Flag = Style{Sig: 3, FixedFrom: 10}
	// Tenths is a precondition's threshold or measured figure: rounded to
	// a tenth, no trailing zeros (2.5, 3).
	Tenths = Style{Places: 1}
)

// Format prints x in style s. Zero prints 0, negative zero too.
func Format(x float64, s Style) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		if s.NaN != "" {
			return s.NaN
		}
		return fmt.Sprint(x)
	}
	if s.Places > 0 {
		p := math.Pow10(s.Places)
		return strconv.FormatFloat(math.Round(x*p)/p, 'f', -1, 64)
	}
	// The branch is chosen on the value as printed, rounded to Sig
	// figures, not on x: 0.9996 rounds to 1.00 and prints like 1.003
	// beside it ("1.00–1.00", not "1–1.00"), 99.96 to 100.
	a := math.Abs(x)
	if r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', s.Sig, 64), 64); err == nil {
		a = math.Abs(r)
	}
	switch {
	case a >= math.Pow10(s.Sig-1):
		return strconv.FormatFloat(x, 'f', 0, 64)
	case s.FixedFrom > 0 && a >= s.FixedFrom:
		// Decimals that make Sig figures: 1 at 10-99 for Sig 3, 2 at 1-9.
		decimals := 1
		for d := s.Sig - 2; d > 0 && a < math.Pow10(d); d-- {
			decimals++
		}
		return strconv.FormatFloat(x, 'f', decimals, 64)
	case a == 0:
		return "0"
	default:
		return strconv.FormatFloat(x, 'g', s.Sig, 64)
	}
}
