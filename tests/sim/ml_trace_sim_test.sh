#!/usr/bin/env bash
# The simulator's bookkeeping on a hand-computed case, and the ordering its
# results rest on, on a slice of the real workload.
#   ml_trace_sim_test.sh SIM TRACE_DIR
set -euo pipefail
sim=$1
trace=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A trace the simulator reads, in directory $1, with the real one's headers:
# $2 the workload's rows, $3 the epochs' rows, $4 the scaling curves' rows.
write_trace() {
  mkdir "$1"
  printf 'name,submit_seconds,application,initial_replicas,batch_size\n%s\n' "$2" > "$1/workload.csv"
  printf 'application,epochs_to_finish,typical_batch_size,data_passes_to_finish,dataset_size,init_batch_size,max_batch_size,min_local_bsz,max_local_bsz\n%s\n' \
    "$3" > "$1/epochs.csv"
  printf 'application,nominal_batch_size,replicas,epoch_seconds,sim_epoch_seconds,effective_batch_size,num_nodes,local_bsz,accum_steps,step_seconds,sync_seconds,source\n%s\n' \
    "$4" > "$1/scaling_by_batch_size.csv"
}

# The row of policy $1 in the last run's summary.csv, into the variables
# named as its columns; line is the row itself.
summary_of() {
  line=$(grep "^$1," "$work/summary.csv") || fail "no $1 row in summary.csv: $(cat "$work/summary.csv")"
  IFS=, read -r policy slots noise restart gang avg median p99 makespan util changes runs <<<"$line"
}

# Two jobs of app "a" (2 epochs; 10 s an epoch at 1 worker, 6 s at 2) on 2
# slots, static at 1 worker: job 0 arrives at 0 and ends at 20, job 1 arrives
# at 5 and ends at 25. JCTs 20 and 20, makespan 25, 40 busy slot-seconds of 50.
write_trace "$work/two" \
  $'a-0,0,a,1,64\na-1,5,a,1,64' \
  'a,2,64,2,1000,64,64,1,64' \
  $'a,64,1,10,10,64,1,64,0,1,0,measured_placement\na,64,2,6,6,64,1,32,0,1,0,measured_placement'
"$sim" --trace "$work/two" --slots 2 --policies static --csv-dir "$work" > "$work/out.txt"
summary_of static
[ "$avg" = 20 ] || fail "average JCT $avg, want 20 ($line)"
[ "$p99" = 20 ] || fail "p99 JCT $p99, want 20"
[ "$makespan" = 25 ] || fail "makespan $makespan, want 25"
[ "$util" = 0.8 ] || fail "utilization $util, want 0.8"
[ "$changes" = 0 ] || fail "changes $changes, want 0"
[ "$gang" = 0 ] || fail "gang_start $gang without --gang-start ($line)"

# One slot: job 1 waits for job 0 (ends at 20), then runs 20 s: JCTs 20 and 35.
"$sim" --trace "$work/two" --slots 1 --policies static --csv-dir "$work" > "$work/out.txt"
summary_of static
[ "$avg" = 27.5 ] || fail "one slot: average JCT $avg, want 27.5"
[ "$makespan" = 40 ] || fail "one slot: makespan $makespan, want 40"

# With a restart cost, a job that never changes pays it once, at its start.
"$sim" --trace "$work/two" --slots 2 --policies static --restart-seconds 3 --csv-dir "$work" > "$work/out.txt"
summary_of static
[ "$avg" = 23 ] || fail "restart cost: average JCT $avg, want 23"
# ... and reports it in that epoch's time, as KubeML's train job times the
# whole epoch: 13 s, not 10 (--decisions: what each /job said).
"$sim" --trace "$work/two" --slots 2 --policies kubeml --restart-seconds 3 --decisions "$work/d.jsonl" > "$work/out.txt"
grep -q '"job":"a-0".*"epoch":1,.*"elapsed_time":13\.0*}' "$work/d.jsonl" ||
  fail "restart cost not in the reported epoch: $(cat "$work/d.jsonl")"

# --gang-start: a waiting job starts once its whole parallelism is free, as
# KubeML's train job waits for all its functions. Job b-0 (3 workers, one
# epoch: 10 s at 1, 6 s at 2, 4 s at 3) runs from 0 to 4 on 4 slots; b-1
# arrives at 1 and starts at 2 workers (its default, its fair share). On the
# one free slot it runs 1 to 11 (JCTs 4 and 10, makespan 11); waiting for two,
# 4 to 10 (JCTs 4 and 9, makespan 10).
write_trace "$work/gang" \
  $'b-0,0,b,3,64\nb-1,1,b,2,64' \
  'b,1,64,1,1000,64,64,1,64' \
  $'b,64,1,10,10,64,1,64,0,1,0,measured_placement\nb,64,2,6,6,64,1,32,0,1,0,measured_placement\nb,64,3,4,4,64,1,21,0,1,0,measured_placement'
for start in any gang; do
  flag=(); [ "$start" = gang ] && flag=(--gang-start)
  "$sim" --trace "$work/gang" --slots 4 --policies kubeml "${flag[@]}" --csv-dir "$work" > "$work/out.txt"
  summary_of kubeml
  case $start in
    any) [ "$avg" = 7 ] && [ "$makespan" = 11 ] || fail "start on what is free: average JCT $avg, makespan $makespan; want 7, 11" ;;
    gang) [ "$avg" = 6.5 ] && [ "$makespan" = 10 ] || fail "--gang-start: average JCT $avg, makespan $makespan; want 6.5, 10"
      [ "$gang" = 1 ] || fail "--gang-start not in summary.csv ($line)" ;;
  esac
done

# --seeds N: the summary is the mean of the N runs, seed by seed.
avg_of() {
  "$sim" --trace "$work/two" --slots 2 --policies static --noise 0.2 "$@" --csv-dir "$work" > "$work/out.txt"
  summary_of static
  echo "$avg $runs"
}
read -r a1 _ <<<"$(avg_of --seed 1)"
read -r a2 _ <<<"$(avg_of --seed 2)"
read -r a12 runs <<<"$(avg_of --seed 1 --seeds 2)"
[ "$runs" = 2 ] || fail "--seeds 2: $runs runs"
awk -v a="$a1" -v b="$a2" -v m="$a12" 'BEGIN { d = (a + b) / 2 - m; exit !(a != b && d < 1e-3 && d > -1e-3) }' ||
  fail "--seeds 2: mean $a12, runs $a1 and $a2"

# Bad input: every flag's value and every trace row checked, a clear error and
# status 2, never a crash or a run on a wrong value.
refuses() {  # refuses "what the error must say" ARG...
  local want=$1 rc=0; shift
  "$sim" "$@" > "$work/out.txt" 2> "$work/err.txt" || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc, want 2: $(cat "$work/err.txt")"
  grep -qF -- "$want" "$work/err.txt" || fail "$*: no \"$want\" in: $(cat "$work/err.txt")"
}
two=(--trace "$work/two")
refuses '--slots "abc"' "${two[@]}" --slots abc
refuses '--slots "0"' "${two[@]}" --slots 0
refuses '--slots "2,-4"' "${two[@]}" --slots 2,-4
refuses '--slots "12x"' "${two[@]}" --slots 12x
refuses '--noise "-1"' "${two[@]}" --noise -1
refuses '--noise "inf"' "${two[@]}" --noise inf
refuses '--restart-seconds "-5"' "${two[@]}" --restart-seconds -5
refuses '--seeds "0"' "${two[@]}" --seeds 0
refuses '--jobs "-1"' "${two[@]}" --jobs -1
refuses '--seed "x"' "${two[@]}" --seed x
refuses '--policies "kubeml,fast"' "${two[@]}" --policies kubeml,fast
refuses 'not a directory' "${two[@]}" --csv-dir "$work/nowhere"
refuses '--plot "p.pdf"' "${two[@]}" --plot p.pdf
refuses '--slots needs a value' "${two[@]}" --slots
refuses 'unknown option --fast' "${two[@]}" --fast 1
refuses '--trace DIR is required' --slots 2
refuses "cannot read $work/nowhere/workload.csv" --trace "$work/nowhere"
write_trace "$work/late" 'a-0,soon,a,1,64' 'a,2,64,2,1000,64,64,1,64' 'a,64,1,10,10,64,1,64,0,1,0,measured_placement'
refuses 'workload.csv:2: submit_seconds is "soon"' --trace "$work/late"
write_trace "$work/gap" 'a-0,0,a,1,64' 'a,2,64,2,1000,64,64,1,64' \
  $'a,64,1,10,10,64,1,64,0,1,0,measured_placement\na,64,3,4,4,64,1,21,0,1,0,measured_placement'
refuses 'has no time at 2 replicas' --trace "$work/gap"
write_trace "$work/quote" 'a-0,0,a",1,64' 'a,2,64,2,1000,64,64,1,64' 'a,64,1,10,10,64,1,64,0,1,0,measured_placement'
refuses 'workload.csv:2: application is "a""' --trace "$work/quote"
write_trace "$work/short" 'a-0,0,a' 'a,2,64,2,1000,64,64,1,64' 'a,64,1,10,10,64,1,64,0,1,0,measured_placement'
refuses 'workload.csv:2: 3 columns, want at least 5' --trace "$work/short"
write_trace "$work/none" '' 'a,2,64,2,1000,64,64,1,64' 'a,64,1,10,10,64,1,64,0,1,0,measured_placement'
refuses 'has no jobs' --trace "$work/none"
write_trace "$work/nocurve" 'a-0,0,a,1,128' 'a,2,64,2,1000,64,64,1,64' 'a,64,1,10,10,64,1,64,0,1,0,measured_placement'
refuses 'no curve or epoch count for a at batch 128' --trace "$work/nocurve"

# The real workload's first 80 jobs on 32 slots: speedup ahead of kubeml on
# average JCT, p99 and makespan, and every /job answered as a train job expects.
"$sim" --trace "$trace" --jobs 80 --slots 32 --policies kubeml,speedup --csv-dir "$work" > "$work/out.txt"
grep -q "protocol errors" "$work/out.txt" && fail "protocol errors: $(cat "$work/out.txt")"
summary_of kubeml
k_avg=$avg k_p99=$p99 k_make=$makespan
summary_of speedup
s_avg=$avg s_p99=$p99 s_make=$makespan
awk -v s="$s_avg" -v k="$k_avg" 'BEGIN { exit !(s < k) }' || fail "speedup average JCT $s_avg not below kubeml's $k_avg"
awk -v s="$s_p99" -v k="$k_p99" 'BEGIN { exit !(s <= k) }' || fail "speedup p99 $s_p99 above kubeml's $k_p99"
awk -v s="$s_make" -v k="$k_make" 'BEGIN { exit !(s <= k) }' || fail "speedup makespan $s_make above kubeml's $k_make"
echo "ok: bookkeeping exact; slice: kubeml avg $k_avg, speedup avg $s_avg"
