package report

import (
	"strings"
	"testing"
)

func TestEncodeOption(t *testing.T) {
	ours := string(fn(`function (x) { return x; }`))
	for _, c := range []struct{ in, want, why string }{
		{`{"b":1,"a":2.50}`, `{"a":2.50,"b":1}`, "keys sorted, numbers kept as written"},
		{`{"f":"` + ours + `"}`, `{"f":function (x) { return x; }}`, "our own function literal becomes code"},
		{`{"s":"__f__alert(1)__f__"}`, `{"s":"__f__alert(1)__f__"}`, "a marker around anything else stays a string"},
		{`{"s":"__f__function (x) { return x; }__f__ "}`, `{"s":"__f__function (x) { return x; }__f__ "}`, "our code with anything added is not ours"},
		{`{"s":"</script><!--"}`, `{"s":"\u003c/script\u003e\u003c!--"}`, "markup cannot end the script element"},
		{`{"s":"a\u2028b"}`, `{"s":"a\u2028b"}`, "line separators stay escaped"},
		{`{"d":[null,true,"-"]}`, `{"d":[null,true,"-"]}`, "nulls (gaps), booleans and ECharts' empty value"},
	} {
		got, err := encodeOption(c.in, nil)
		if err != nil {
			t.Errorf("%s: %v", c.why, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.why, got, c.want)
		}
	}
	if _, err := encodeOption(`{"a":`, nil); err == nil || !strings.Contains(err.Error(), "decode chart option") {
		t.Errorf("broken JSON: %v, want a decode error", err)
	}
}
