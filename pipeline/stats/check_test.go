package stats

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckValidate(t *testing.T) {
	variants := []string{"platform", "virtual", "webflux"}
	keys := []string{"pool", "users"}
	tests := []struct {
		name  string
		why   string
		check Check
		want  []string // "field: substring" of each expected problem; none means valid
	}{
		{
			name:  "compare ok",
			why:   "DESIGN.md's virtual-rides-the-pool claim",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform"}, Where: map[string][]string{"pool": {"400", "800"}}, AtLeast: F(1.5)},
		},
		{
			name:  "band ok",
			why:   "within 10% both ways is a valid equivalence claim",
			check: Check{Metric: "p99_ms", Compare: []string{"webflux", "virtual"}, AtLeast: F(0.9), AtMost: F(1.1)},
		},
		{
			name:  "flat ok",
			why:   "DESIGN.md's platform-plateaus claim",
			check: Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"pool": {"200", "400", "800"}}},
		},
		{
			name:  "no metric",
			why:   "every check is about one column",
			check: Check{Compare: []string{"virtual", "platform"}, AtLeast: F(1.5)},
			want:  []string{"metric: required"},
		},
		{
			name:  "typo metric",
			why:   "rsp is not a column; the message lists what is",
			check: Check{Metric: "rsp", Compare: []string{"virtual", "platform"}, AtLeast: F(1.5)},
			want:  []string{`metric: unknown metric "rsp" (use rps`},
		},
		{
			name:  "neither kind",
			why:   "a check must say what it compares",
			check: Check{Metric: "rps"},
			want:  []string{"compare: a check needs compare"},
		},
		{
			name:  "both kinds",
			why:   "one claim, one sentence",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform"}, AtLeast: F(1.5), Variant: "platform", FlatOver: map[string][]string{"pool": {"200", "400"}}},
			want:  []string{"compare: a check is either", "variant: is for flat_over", "at_least: at_least/at_most only apply to compare"},
		},
		{
			name:  "three variants",
			why:   "a ratio has two sides",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform", "webflux"}, AtLeast: F(1)},
			want:  []string{"compare: needs exactly 2 variants, got 3"},
		},
		{
			name:  "unknown variant",
			why:   "names must match the manifest's variants",
			check: Check{Metric: "rps", Compare: []string{"virtual", "loom"}, AtLeast: F(1)},
			want:  []string{`compare[1]: "loom" is not a variant of this manifest (use one of platform, virtual, webflux)`},
		},
		{
			name:  "self",
			why:   "a variant against itself is always a tie",
			check: Check{Metric: "rps", Compare: []string{"virtual", "virtual"}, AtLeast: F(1)},
			want:  []string{`compare: compares "virtual" with itself`},
		},
		{
			name:  "no threshold",
			why:   "compare alone does not say what is claimed",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform"}},
			want:  []string{"at_least: a compare check needs at_least or at_most"},
		},
		{
			name:  "inverted band",
			why:   "at_least above at_most cannot hold",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform"}, AtLeast: F(1.2), AtMost: F(1.1)},
			want:  []string{"at_most: 1.1 is below at_least 1.2"},
		},
		{
			name:  "negative ratio",
			why:   "ratios of positive metrics are positive",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform"}, AtLeast: F(-1)},
			want:  []string{"at_least: must be a positive ratio"},
		},
		{
			name:  "tolerance on compare",
			why:   "tolerance belongs to flat_over",
			check: Check{Metric: "rps", Compare: []string{"virtual", "platform"}, AtLeast: F(1), Tolerance: 0.1},
			want:  []string{"tolerance: only applies to flat_over"},
		},
		{
			name:  "flat without variant",
			why:   "flat for whom?",
			check: Check{Metric: "rps", FlatOver: map[string][]string{"pool": {"200", "400"}}},
			want:  []string{"variant: flat_over needs the variant"},
		},
		{
			name:  "flat over two keys",
			why:   "one claim per key keeps the sentence clear",
			check: Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"pool": {"200", "400"}, "users": {"1", "2"}}},
			want:  []string{"flat_over: needs exactly one sweep key, got 2"},
		},
		{
			name:  "flat over unknown key with one value",
			why:   "both problems are reported at once",
			check: Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"threads": {"200"}}},
			want:  []string{`flat_over.threads: "threads" is not a sweep key of this manifest (use one of pool, users)`, "flat_over.threads: needs at least 2 values"},
		},
		{
			name:  "negative tolerance",
			why:   "a tolerance is a fraction",
			check: Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"pool": {"200", "400"}}, Tolerance: -0.1},
			want:  []string{"tolerance: must be a positive fraction"},
		},
		{
			name:  "where on unknown key and the flat key",
			why:   "where selects points by sweep keys; the flat key is restricted in flat_over",
			check: Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"pool": {"200", "400"}}, Where: map[string][]string{"pool": {"200"}, "zone": {"a"}, "users": {}}},
			want:  []string{`where.pool: "pool" is already the flat_over key`, "where.users: lists no values", `where.zone: "zone" is not a sweep key`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check.Validate(variants, keys)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v, want nil (%s)", err, tt.why)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want %v (%s)", tt.want, tt.why)
			}
			var problems []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				problems = j.Unwrap()
			}
			if len(problems) != len(tt.want) {
				t.Errorf("%d problems, want %d (%s):\n%v", len(problems), len(tt.want), tt.why, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q (%s)", err, w, tt.why)
				}
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Problem == "" {
				t.Errorf("error %v is not a *FieldError with field and problem", err)
			}
		})
	}
}
