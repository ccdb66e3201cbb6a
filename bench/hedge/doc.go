// Package hedge measures what hedging does to a latency tail: a
// downstream whose p99 is ten times its p50 (95 % of calls take the
// median, 3 % ten times it) called at a steady rate, plainly, with
// rxhystrix's hedge at the command's live p95 and at a fixed delay, and
// with failsafe-go's hedge policy at its own p95 and at the same fixed
// delay. For each it reports p50, p99 and p99.9 of the calls and the
// downstream's extra load: the calls it received beyond one per call.
//
// Run by bench/run.sh as
//
//	go run ./hedge/cmd/hedge
//
// which prints the table of BENCHMARKS.md's section "Hedging a latency
// tail".
package hedge
