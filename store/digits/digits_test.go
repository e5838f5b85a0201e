package digits

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	nan, inf, negZero := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	tests := []struct {
		x    float64
		s    Style
		want string
		why  string
	}{
		{1234.6, Page, "1235", "Page: whole from 100"},
		{123.4, Page, "123", "Page: whole from 100"},
		{12.34, Page, "12.3", "Page: one decimal from 10"},
		{12, Page, "12.0", "Page: the trailing zero kept, 3 figures"},
		{1.5, Page, "1.50", "Page: two decimals from 1, zero kept"},
		{9.996, Page, "10.0", "Page: the decimals follow the value as rounded to 3 figures (10.0), not x (was 10.00)"},
		{0.9996, Page, "1.00", "Page: a value just below 1 that rounds to 1 prints like one above it (was 1, beside 1.00)"},
		{-0.9996, Page, "-1.00", "Page: so does its negative"},
		{99.96, Page, "100", "Page: one that rounds to 100 prints whole (was 100.0)"},
		{0.99949, Page, "0.999", "Page: one that stays below 1 keeps %g's figures"},
		{0.05, Page, "0.05", "Page: below 1, 3 significant figures without trailing zeros"},
		{0.012345, Page, "0.0123", "Page: below 1, 3 significant figures"},
		{0, Page, "0", "zero is 0"},
		{negZero, Page, "0", "negative zero is 0"},
		{-3.25, Page, "-3.25", "the sign stays"},
		{nan, Page, "–", "Page: a value that does not exist is a dash"},
		{inf, Page, "–", "Page: so is an infinity"},

		{1234.6, Diff, "1235", "Diff: whole from 1000"},
		{123.45, Diff, "123.5", "Diff: 4 significant figures (123.45 is 123.4500000000000028...)"},
		{12.34, Diff, "12.34", "Diff: 4 figures, a 0.1% change shows"},
		{12, Diff, "12", "Diff: no trailing zeros"},
		{1e-5, Diff, "1e-05", "Diff: %g's exponent for tiny values"},
		{nan, Diff, "NaN", "Diff: NaN as Go prints it"},
		{math.Inf(-1), Diff, "-Inf", "Diff: infinities as Go prints them"},

		{123.4, Flag, "123", "Flag: whole from 100"},
		{12, Flag, "12.0", "Flag: one decimal from 10, zero kept"},
		{1.5, Flag, "1.5", "Flag: 3 significant figures below 10, no trailing zeros"},
		{negZero, Flag, "0", "Flag: negative zero is 0 (fmt's %.3g said -0)"},
		{inf, Flag, "+Inf", "Flag: infinities as Go prints them"},
		{9.996, Flag, "10.0", "Flag: a value that rounds to 10 gets 10's one decimal (was 10)"},
		{0.99996, Diff, "1", "Diff: no trailing zeros either side of 1"},

		{12.25, Tenths, "12.3", "Tenths: rounded half away from zero"},
		{3, Tenths, "3", "Tenths: no trailing zeros"},
		{0.04, Tenths, "0", "Tenths: below a twentieth is 0"},
		{1234.56, Tenths, "1234.6", "Tenths: no significant-figure limit"},
	}
	for _, tt := range tests {
		if got := Format(tt.x, tt.s); got != tt.want {
			t.Errorf("Format(%v, %+v) = %q, want %q (%s)", tt.x, tt.s, got, tt.want, tt.why)
		}
	}
}
