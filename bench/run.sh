#!/usr/bin/env bash
# Runs every benchmark of bench/ and regenerates BENCHMARKS.md at the repository root.
#
#   bench/run.sh
#   BENCHTIME=100ms COUNT=1 ISOLATION_DURATION=3s bench/run.sh   # a quick check
#
# BENCHTIME applies to the peer and reactive benchmarks (default 500ms), which run COUNT rounds
# (default 5), MEMORY_KEYS to the memory benchmark (default 10000), ISOLATION_DURATION to each
# isolation run (default 20s). On 2 cores the defaults take about 25 minutes: five rounds of peers
# and reactive pipelines, the budgets' paired turns (about 2 minutes), memory, the collapser, five
# rounds of the fleet rows (which start a redis-server of their own), five rounds of the HTTP
# and gRPC integrations over loopback (about 3 minutes), six 20 s isolation runs,
# seed 004's scenario for fixed pools and adaptive limits (about 30 s), and a latency tail hedged
# five ways (about 30 s).
set -euo pipefail
cd "$(dirname "$0")"

BENCHTIME=${BENCHTIME:-500ms}
COUNT=${COUNT:-5}
MEMORY_KEYS=${MEMORY_KEYS:-10000}
ISOLATION_DURATION=${ISOLATION_DURATION:-20s}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tags=()
missing=()

commands=()
inputs=()

# shown prints its arguments as a shell command, quoting those that need it.
shown() {
	local out=() a
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./=:,+@-]+$ ]]; then
			out+=("$a")
		else
			out+=("'${a//\'/\'\\\'\'}'")
		fi
	done
	echo "${out[*]}"
}

# bench runs "go test" for one benchmark set, saving its output in $work/$1.txt.
# With quiet_command set it leaves the command out of the report (a repeated round), with
# quiet_input the output out of the report's inputs (rounds merges them).
bench() {
	local name=$1
	shift
	local cmd=(go test "${tags[@]}" -run '^$' -benchmem "$@")
	if [[ -z ${quiet_command:-} ]]; then
		commands+=(-command "(cd bench && $(shown "${cmd[@]}"))${rounds_note:-}")
	fi
	echo "run.sh: $(shown "${cmd[@]}")" >&2
	if ! "${cmd[@]}" | tee "$work/$name.txt" >&2; then
		local failed
		# the failed benchmarks, without the parents that fail with them
		failed=$(grep -E -- '--- FAIL: Benchmark' "$work/$name.txt" | sed 's/.*--- FAIL: //; s/ (.*//' |
			awk '{ n[NR] = $0 } END { for (i = 1; i <= NR; i++) { leaf = 1; for (j = 1; j <= NR; j++) if (index(n[j], n[i] "/") == 1) leaf = 0; if (leaf) print n[i] } }' |
			paste -sd, - || true)
		missing+=(-missing "$name: go test failed${failed:+ in $failed}; rows that failed are absent")
	fi
	if [[ -z ${quiet_input:-} ]]; then
		inputs+=("$work/$name.txt")
	fi
}

# rounds runs a benchmark set COUNT times, one run of every benchmark per round, so that
# a slow spell of the machine (a shared one drifts by tens of percent over minutes) weighs
# on every row of a table alike; the report takes the median of the rounds.
rounds() {
	local name=$1 i
	shift
	for ((i = 1; i <= COUNT; i++)); do
		quiet_command=$([[ $i -gt 1 ]] && echo 1 || true) quiet_input=1 \
			rounds_note=" # $COUNT times, one round after another" bench "$name-$i" "$@" -count=1
		cat "$work/$name-$i.txt" >>"$work/$name.txt"
	done
	inputs+=("$work/$name.txt")
}

rounds peers -bench 'Circuits|Tail' -benchtime="$BENCHTIME" ./peers/
# Each budget's two rows in alternating turns, once (see bench/peers/budget_test.go).
bench budgets -bench Budgets -benchtime=1x -count=1 ./peers/
if compgen -G "reactive/*_test.go" >/dev/null; then
	rounds reactive -bench . -benchtime="$BENCHTIME" ./reactive/...
else
	missing+=(-missing "reactive: bench/reactive/ has no benchmarks yet")
fi
bench memory -bench . -benchtime="${MEMORY_KEYS}x" -count=1 ./memory/
bench collapser -bench . -benchtime=200x -count=1 ./collapser/
rounds fleet -bench . -benchtime="$BENCHTIME" ./fleet/
# What the HTTP guard, the HTTP transport and the gRPC interceptor add to the bare call (-base).
rounds integrations -bench . -benchtime="$BENCHTIME" ./httpserver/ ./httpclient/ ./grpcclient/

iso=(go run "${tags[@]}" ./isolation/cmd/isolation -duration "$ISOLATION_DURATION")
commands+=(-command "(cd bench && $(shown "${iso[@]}"))")
echo "run.sh: $(shown "${iso[@]}")" >&2
"${iso[@]}" >"$work/isolation.md"

hedging=(go run ./hedge/cmd/hedge)
commands+=(-command "(cd bench && $(shown "${hedging[@]}"))")
echo "run.sh: $(shown "${hedging[@]}")" >&2
"${hedging[@]}" >"$work/hedge.md"

adaptive=(go run ./adaptive/cmd/adaptive)
commands+=(-command "(cd bench && $(shown "${adaptive[@]}"))")
echo "run.sh: $(shown "${adaptive[@]}")" >&2
"${adaptive[@]}" >"$work/adaptive.md"

go run ./cmd/benchreport \
	-floor direct,direct-handoff,direct-go,bare-no-deadline \
	-base bare \
	-go "$(go version)" \
	-cores "$(nproc)" \
	-date "$(date -u '+%Y-%m-%d %H:%M UTC')" \
	-command "BENCHTIME=$BENCHTIME COUNT=$COUNT MEMORY_KEYS=$MEMORY_KEYS ISOLATION_DURATION=$ISOLATION_DURATION bench/run.sh" \
	"${commands[@]}" \
	-notes notes.md \
	"${missing[@]}" \
	-section "Isolation (seed 002)=$work/isolation.md" \
	-section "Adaptive limits (seed 004)=$work/adaptive.md" \
	-section "Hedging a latency tail=$work/hedge.md" \
	-o ../BENCHMARKS.md \
	"${inputs[@]}"
echo "run.sh: wrote $(cd .. && pwd)/BENCHMARKS.md" >&2
