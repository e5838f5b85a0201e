// Package layers holds no code: its test checks that the module's import
// graph keeps the layers README.md's Layout section draws. Every package of
// the module belongs to one layer, and imports only packages of its own
// layer or of a lower one: a leaf never reaches up, and judging a claim
// (judge/verdicts) never reaches the orchestrator (pipeline). A new
// package goes into the table of layers_test.go, in the layer it belongs to.
package layers
