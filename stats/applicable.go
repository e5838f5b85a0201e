package stats

import "strings"

// StatusText is a status as a reader sees it: "not applicable here" for
// NotApplicable, the status itself otherwise ("" reads "inconclusive").
func StatusText(status string) string {
	switch status {
	case NotApplicable:
		return "not applicable here"
	case "":
		return Inconclusive
	}
	return status
}

// SetAside makes v NotApplicable because a precondition of the claim does
// not hold here (why, one sentence without a final period). What the data
// alone said stays in the evidence, after the precondition's own lines,
// so a reader sees both; Leans is cleared (it describes inconclusive
// verdicts) and Open is false (more trials of this design on this host
// would not make the precondition hold).
func SetAside(v *Verdict, why string, evidence []string) {
	was := v.Status
	if was == "" {
		was = Inconclusive
	}
	said := "set aside: the data alone say " + was
	if r := strings.TrimSpace(v.Reason); r != "" {
		said += " (" + strings.TrimRight(r, ".") + ")"
	}
	v.Status, v.Leans, v.Open, v.Outcome = NotApplicable, "", false, OutcomeNotApplicable
	v.Reason = "not applicable here: " + why
	v.Evidence = append(append(append([]string{}, evidence...), said), v.Evidence...)
}
